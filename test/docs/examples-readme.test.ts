/** The examples of the README run as written, against a started server (example-session.ts). */
import { test } from 'node:test';
import { DOCUMENT_GROUPS } from './documents.ts';
import { runDocumentExamples } from './example-session.ts';

for (const document of DOCUMENT_GROUPS.readme) {
  test(`every example of ${document} runs as written`, { timeout: 240_000 }, async (t) => {
    const run = await runDocumentExamples(t, document);
    t.diagnostic(`${run.ran} run, ${run.written} written, ${run.checked} checked${run.notRun.map((n) => `; line ${n.line} not run: ${n.why}`).join('')}`);
  });
}
