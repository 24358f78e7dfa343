/** The cases of hex.case.ts in this process, and a property: every byte string survives the round trip. test/runtime/workerd/store-binding.test.ts runs the cases inside workerd. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { bytesToHex, hexToBytes } from '../../../src/store/binding/hex.ts';
import { CASES } from './hex.case.ts';
import { runCasesInProcess } from './in-process.ts';

runCasesInProcess(CASES);

test('property: bytesToHex agrees with Buffer, and hexToBytes undoes it', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      const digits = bytesToHex(bytes);
      assert.equal(digits, Buffer.from(bytes).toString('hex'));
      assert.deepEqual(hexToBytes(digits), new Uint8Array(bytes));
      assert.deepEqual(hexToBytes(digits.toUpperCase()), new Uint8Array(bytes));
    }),
  );
});
