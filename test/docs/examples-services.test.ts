/** The examples of the services' documents run as written, against a started server (example-session.ts). */
import { DOCUMENT_GROUPS } from './documents.ts';
import { testDocuments } from './example-session.ts';

testDocuments('the services documents', DOCUMENT_GROUPS.services);
