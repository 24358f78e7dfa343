/**
 * Runs bucket binding cases (case-kit.ts) in this process, on buckets of `edgeport/store`'s
 * openStoreBucket: each case on a bucket of its own, once on each side of list()'s compatibility
 * rule. test/runtime/workerd/store-binding.test.ts runs the same cases inside workerd.
 */
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { WORKERD } from '../../../src/runtime/workerd/workerd-package.ts';
import { listHonorsInclude } from '../../../src/store/binding/index.ts';
import { openStoreBucket } from '../../../src/store/index.ts';
import type { BindingCases, DigestAlgorithm } from './case-kit.ts';

/** Today, or the newest date the installed workerd supports when that is earlier. */
export const NEWEST_DATE = [new Date().toISOString().slice(0, 10), WORKERD.compatibilityDate].sort()[0]!;

/** Before list() honoured `include` (2022-08-04), and the newest date. */
const IN_PROCESS_DATES = ['2022-01-01', NEWEST_DATE];

export async function nodeDigest(algorithm: DigestAlgorithm, data: string | Uint8Array): Promise<string> {
  return createHash(algorithm).update(data).digest('hex');
}

/** A test per case; each runs the case on a fresh bucket per date of IN_PROCESS_DATES. */
export function runCasesInProcess(cases: BindingCases): void {
  for (const [name, run] of Object.entries(cases)) {
    test(name, { timeout: 60_000 }, async (t) => {
      for (const date of IN_PROCESS_DATES) {
        await t.test(`compatibility date ${date}`, { timeout: 30_000 }, async () => {
          const bucket = await openStoreBucket({ bucket: 'case', compatibilityDate: date });
          try {
            await run({ bucket, runtime: 'in-process', listHonorsInclude: listHonorsInclude(date, []), digest: nodeDigest });
          } finally {
            await bucket.close();
          }
        });
      }
    });
  }
}
