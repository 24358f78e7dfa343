/** The gas cap on calls that run EVM code: never more than the cap, never less than asked within it, and data no gas under the cap could pay for. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { capCallGas, dataOverCap, EVM_METHODS } from '../../src/gateway/evm/gas-cap.ts';

const CAP = 300_000;
const gasValue = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }).map((n) => `0x${n.toString(16)}`),
  fc.integer({ min: 0, max: 2 ** 40 }),
  fc.constantFrom(undefined, null, '', '0x', 'ten', -1, 1.5, '0xzz', {}, []),
);

test('every call object leaves with a gas the node reads as at most the cap; gas within the cap is kept as sent', { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(fc.constantFrom(...EVM_METHODS), gasValue, (method, gas) => {
      const call = { to: '0x' + '11'.repeat(20), data: '0x', ...(gas === undefined ? {} : { gas }) };
      const params = method === 'eth_simulateV1' ? [{ blockStateCalls: [{ calls: [call, call] }] }, 'latest'] : [call, 'latest'];
      const out = capCallGas(method, params, CAP);
      const calls =
        method === 'eth_simulateV1'
          ? (out[0] as { blockStateCalls: Array<{ calls: Array<{ gas: unknown }> }> }).blockStateCalls[0]!.calls
          : [out[0] as { gas: unknown }];
      assert.equal(out[1], 'latest');
      for (const sent of calls) {
        const value = typeof sent.gas === 'number' ? BigInt(sent.gas) : BigInt(sent.gas as string);
        assert.ok(value <= BigInt(CAP), `${JSON.stringify(gas)} became ${String(sent.gas)}`);
        const asked =
          typeof gas === 'number' && Number.isSafeInteger(gas) && gas >= 0
            ? BigInt(gas)
            : typeof gas === 'string' && /^0x[0-9a-f]+$/.test(gas)
              ? BigInt(gas)
              : undefined;
        if (asked !== undefined && asked <= BigInt(CAP)) assert.equal(sent.gas, gas, 'gas within the cap is kept');
        else assert.equal(sent.gas, `0x${CAP.toString(16)}`);
      }
    }),
  );
});

test('params that are not a call object are left for the node to refuse, as the same array', { timeout: 10_000 }, () => {
  for (const params of [[], ['0x12'], [null], [[1, 2]], [{ gas: '0x10' }, 'latest']]) assert.equal(capCallGas('eth_call', params, CAP), params);
  for (const params of [[], [{ blockStateCalls: 'x' }], [{ blockStateCalls: [null, { calls: 'x' }] }]]) {
    assert.deepEqual(capCallGas('eth_simulateV1', params, CAP), params);
  }
  const other = [{ gas: '0xffffffff' }];
  assert.equal(capCallGas('eth_getBalance', other, CAP), other, 'methods that run no EVM code are untouched');
});

test('data whose least cost (21000 + 4 gas a byte) is over the cap is answered without asking the node; data under it passes', { timeout: 10_000 }, () => {
  const fits = (CAP - 21_000) / 4;
  assert.equal(dataOverCap('eth_call', [{ data: `0x${'00'.repeat(fits)}` }], CAP), undefined);
  assert.deepEqual(dataOverCap('eth_call', [{ input: `0x${'00'.repeat(fits + 1)}` }], CAP), {
    code: -32000,
    message: `intrinsic gas too high: the call's ${fits + 1} bytes of data need at least ${21_000 + 4 * (fits + 1)} gas, over this gateway's gas cap of ${CAP} per call`,
  });
  assert.equal(dataOverCap('eth_getBalance', [{ data: `0x${'00'.repeat(10 * fits)}` }], CAP), undefined);
  assert.equal(dataOverCap('eth_call', ['0x'], CAP), undefined);
});
