/** The examples of the object store's documents run as written, against a started server (example-session.ts). */
import { DOCUMENT_GROUPS } from './documents.ts';
import { testDocuments } from './example-session.ts';

testDocuments('the object store documents', DOCUMENT_GROUPS.store);
