/** Chain errors reshaped to geth's: reverts as code 3 with their data, EDR's request echo dropped. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeErrorString, normalizeEdrError } from '../../src/gateway/backends/revert-error.ts';

const errorString = (text: string) => {
  const bytes = Buffer.from(text, 'utf8').toString('hex');
  return `0x08c379a0${'20'.padStart(64, '0')}${bytes.length / 2 === 0 ? '0'.padStart(64, '0') : (bytes.length / 2).toString(16).padStart(64, '0')}${bytes.padEnd(Math.ceil(bytes.length / 64) * 64, '0')}`;
};

test('Error(string) reasons decode, UTF-8 included; anything else is not a reason', { timeout: 10_000 }, () => {
  assert.equal(decodeErrorString(errorString('nope')), 'nope');
  assert.equal(
    decodeErrorString(errorString('déjà vu, a reason longer than one word of thirty-two bytes')),
    'déjà vu, a reason longer than one word of thirty-two bytes',
  );
  assert.equal(decodeErrorString('0x4e487b71' + '1'.padStart(64, '0')), undefined, 'Panic(uint256)');
  assert.equal(decodeErrorString('0x08c379a0'), undefined, 'truncated');
  assert.equal(decodeErrorString(`0x08c379a0${'ff'.padStart(64, '0')}${'0'.repeat(64)}`), undefined, 'offset past the end');
});

test("EDR reverts become geth's shape; other errors keep code and message only", { timeout: 10_000 }, () => {
  const data = errorString('nope');
  assert.deepEqual(
    normalizeEdrError(
      { code: -32000, message: "reverted with reason string 'nope'", data: { reason: { Revert: data }, data, transactionHash: null } },
      'eth_call',
    ),
    { code: 3, message: 'execution reverted: nope', data },
  );
  const custom = '0xdeadbeef';
  assert.deepEqual(normalizeEdrError({ code: -32000, message: 'reverted with an unrecognized custom error', data: { data: custom } }, 'eth_estimateGas'), {
    code: 3,
    message: 'execution reverted',
    data: custom,
  });
  assert.deepEqual(normalizeEdrError({ code: -32000, message: 'Transaction reverted without a reason', data: { data: '0x' } }, 'eth_call'), {
    code: -32000,
    message: 'execution reverted',
  });
  assert.deepEqual(normalizeEdrError({ code: -32000, message: 'Nonce too low', data: null }, 'eth_sendRawTransaction'), {
    code: -32000,
    message: 'Nonce too low',
  });
  assert.deepEqual(normalizeEdrError({ code: -32602, message: 'invalid value', data: { jsonrpc: '2.0', method: 'x' } }, 'eth_getBalance'), {
    code: -32602,
    message: 'invalid value',
  });
  assert.deepEqual(normalizeEdrError({ code: -32004, message: 'Method trace_filter is not supported', data: {} }, 'trace_filter'), {
    code: -32601,
    message: 'The method trace_filter is not available on the embedded chain.',
  });
});
