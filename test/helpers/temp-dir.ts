/** Each test owns a temporary directory, removed when the test ends (after what was started in it stops). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { onTestEnd } from './cleanup.ts';

export function tempDir(t: TestContext, name = 'edgeport-'): string {
  const dir = mkdtempSync(join(tmpdir(), name));
  // Retries: a process that was only just stopped may still have been writing into it.
  onTestEnd(t, () => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
  return dir;
}
