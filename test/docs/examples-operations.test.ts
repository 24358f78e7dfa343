/** The examples of the operations and reference documents run as written, against a started server (example-session.ts). */
import { DOCUMENT_GROUPS } from './documents.ts';
import { testDocuments } from './example-session.ts';

testDocuments('the operations documents', DOCUMENT_GROUPS.operations);
