/** Telling a request meant for another port: JSON-RPC bodies, small JSON POSTs, listener addresses. */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { isJsonRpcText, listenerOrigin, mayBeJsonRpc, readJsonRpcBody, SNIFF_MAX_BYTES } from '../../src/core/http/wrong-port.ts';

test('isJsonRpcText: a JSON-RPC 2.0 request or a batch that starts with one; nothing else', { timeout: 10_000 }, () => {
  assert.equal(isJsonRpcText('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'), true);
  assert.equal(isJsonRpcText('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"}]'), true);
  for (const text of [
    '{"jsonrpc":"1.0","method":"x"}',
    '{"jsonrpc":"2.0","result":"0x1","id":1}',
    '{"name":"example.test"}',
    '[]',
    '[1]',
    'null',
    '"2.0"',
    '{"jsonrpc":"2.0"',
    '',
  ]) {
    assert.equal(isJsonRpcText(text), false, text);
  }
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.json()), (text) => typeof isJsonRpcText(text) === 'boolean'),
    { numRuns: 500 },
  );
});

test('mayBeJsonRpc: only a POST of JSON with a declared length up to SNIFF_MAX_BYTES is worth reading', { timeout: 10_000 }, () => {
  const json = (length: string) => ({ 'content-type': 'application/json; charset=utf-8', 'content-length': length });
  assert.equal(mayBeJsonRpc('POST', json('60')), true);
  assert.equal(mayBeJsonRpc('POST', new Headers(json(String(SNIFF_MAX_BYTES)))), true, 'Web Headers too');
  assert.equal(mayBeJsonRpc('POST', json(String(SNIFF_MAX_BYTES + 1))), false, 'too large to read');
  assert.equal(mayBeJsonRpc('POST', { 'content-type': 'application/json' }), false, 'no declared length (chunked)');
  assert.equal(mayBeJsonRpc('GET', json('60')), false);
  assert.equal(mayBeJsonRpc('POST', { 'content-type': 'text/plain', 'content-length': '60' }), false);
});

test("listenerOrigin: the listener's address, or for a wildcard one the host the client used with the listener's port", { timeout: 10_000 }, () => {
  assert.equal(listenerOrigin('http://127.0.0.1:8081', 'example.test:8080'), 'http://127.0.0.1:8081');
  assert.equal(listenerOrigin('http://0.0.0.0:8081', 'edge.example.test:8080'), 'http://edge.example.test:8081');
  assert.equal(listenerOrigin('http://[::]:8545', '[2001:db8::1]:8080'), 'http://[2001:db8::1]:8545');
  assert.equal(listenerOrigin('http://0.0.0.0:8081', undefined), 'http://0.0.0.0:8081');
  assert.equal(listenerOrigin('http://0.0.0.0:8081', 'bad host/'), 'http://0.0.0.0:8081', 'a Host that is no host name is not used');
});

test('readJsonRpcBody: a body cut short by a client that went away is no JSON-RPC, never a failure', { timeout: 10_000 }, async (t) => {
  let outcome: Promise<boolean> | undefined;
  const server = createServer((req) => {
    outcome = readJsonRpcBody(req);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write('POST /v1/sepolia HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":"2.0",');
  while (outcome === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
  socket.destroy();
  assert.equal(await outcome, false);
});
