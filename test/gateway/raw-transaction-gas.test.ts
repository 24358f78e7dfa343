/** The gas limit read from a signed raw transaction: every envelope viem signs, and malformed input never throws. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { serializeTransaction, type TransactionSerializable } from 'viem';
import { rawTransactionGas } from '../../src/gateway/evm/raw-transaction-gas.ts';

const SIGNATURE = { r: `0x${'12'.repeat(32)}`, s: `0x${'34'.repeat(32)}`, yParity: 1, v: 28n } as const;
const TO = `0x${'56'.repeat(20)}` as const;

const quantity = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const data = fc.uint8Array({ maxLength: 300 }).map((bytes) => `0x${Buffer.from(bytes).toString('hex')}` as `0x${string}`);

const transaction = fc
  .record({ gas: quantity, nonce: fc.integer({ min: 0, max: 2 ** 31 }), fee: quantity, data, kind: fc.constantFrom('legacy', 'eip2930', 'eip1559', 'eip7702') })
  .map(({ gas, nonce, fee, data: input, kind }): TransactionSerializable => {
    const common = { gas, nonce, to: TO, value: fee, data: input };
    switch (kind) {
      case 'legacy':
        return { ...common, type: 'legacy', gasPrice: fee };
      case 'eip2930':
        return { ...common, type: 'eip2930', chainId: 11155111, gasPrice: fee, accessList: [{ address: TO, storageKeys: [`0x${'00'.repeat(32)}`] }] };
      case 'eip1559':
        return { ...common, type: 'eip1559', chainId: 11155111, maxFeePerGas: fee, maxPriorityFeePerGas: fee / 2n };
      default:
        return {
          ...common,
          type: 'eip7702',
          chainId: 11155111,
          maxFeePerGas: fee,
          maxPriorityFeePerGas: 0n,
          authorizationList: [{ address: TO, chainId: 11155111, nonce: 1, ...SIGNATURE }],
        };
    }
  });

test('the gas limit of every envelope viem signs is read as signed', { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(transaction, (tx) => {
      assert.equal(rawTransactionGas(serializeTransaction(tx, SIGNATURE)), tx.gas);
    }),
    { numRuns: 500 },
  );
});

test('a blob transaction (EIP-4844) is read too', { timeout: 10_000 }, () => {
  const raw = serializeTransaction(
    {
      type: 'eip4844',
      chainId: 11155111,
      nonce: 3,
      gas: 123_456n,
      maxFeePerGas: 9n,
      maxPriorityFeePerGas: 1n,
      maxFeePerBlobGas: 2n,
      to: TO,
      blobVersionedHashes: [`0x01${'ab'.repeat(31)}`],
    },
    SIGNATURE,
  );
  assert.equal(rawTransactionGas(raw), 123_456n);
});

test('anything that is not a readable transaction gives undefined, never a throw', { timeout: 30_000 }, () => {
  for (const raw of [undefined, null, 7, '', '0x', '0x0', '0xzz', '0x05c0', '0xc0', '0x02', '0x02c3010203', '0xf9ffff', `0x02f8${'ff'.repeat(3)}`]) {
    assert.equal(rawTransactionGas(raw), undefined, String(raw));
  }
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      const gas = rawTransactionGas(`0x${Buffer.from(bytes).toString('hex')}`);
      assert.ok(gas === undefined || gas >= 0n);
    }),
    { numRuns: 1_000 },
  );
  // Truncating a real transaction anywhere gives undefined or a number, never a throw.
  const raw = serializeTransaction({ type: 'eip1559', chainId: 1, nonce: 1, gas: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, to: TO }, SIGNATURE);
  for (let end = 2; end < raw.length; end += 2) rawTransactionGas(raw.slice(0, end));
});
