/** within(): a promise's value before its deadline, the fallback after it, and no timer left either way. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { within } from '../../src/core/within.ts';

test('within gives the value when it comes first, the fallback when the deadline does, and clears its timer', { timeout: 10_000 }, async () => {
  const handles = () => (process as unknown as { getActiveResourcesInfo(): string[] }).getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  const before = handles();
  assert.equal(await within(Promise.resolve('value'), 60_000, 'late'), 'value');
  assert.equal(handles(), before, 'no timer is left after an early value');
  assert.equal(await within(new Promise<string>(() => undefined), 20, 'late'), 'late');
  await assert.rejects(within(Promise.reject(new Error('failed')), 60_000, 'late'), /failed/);
  assert.equal(handles(), before, 'no timer is left after a rejection');
});
