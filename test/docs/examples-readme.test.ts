/** The examples of the README run as written, against a started server (example-session.ts). */
import { DOCUMENT_GROUPS } from './documents.ts';
import { testDocuments } from './example-session.ts';

testDocuments('the README', DOCUMENT_GROUPS.readme);
