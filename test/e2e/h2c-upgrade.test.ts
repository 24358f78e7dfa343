/**
 * `curl --http2` against the cleartext listeners of the real `edgeport start`: curl offers HTTP/2
 * on its first request with `Upgrade: h2c`, `Connection: Upgrade, HTTP2-Settings` and
 * `HTTP2-Settings`, a POST's or PUT's body included. A server without h2c ignores the offer and
 * answers over HTTP/1.1 (RFC 7540 §3.2), as the management API, the S3 API and the gateway do here;
 * the same headers from a raw socket too. The API's port still takes WebSocket upgrades (tails).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { bodyOf, headerOf, openRaw, statusOf } from '../helpers/raw-connections.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const run = promisify(execFile);
const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'h2c@example.test', EDGEPORT_ADMIN_KEY: 'h2c-admin-key-0123456789abcdef' };
const S3_KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'H2CKEY0000000001', EDGEPORT_S3_SECRET_ACCESS_KEY: 'h2c-secret-0123456789abcdef0123' };
const AUTH = ['-H', `X-Auth-Email: ${ADMIN.EDGEPORT_ADMIN_EMAIL}`, '-H', `X-Auth-Key: ${ADMIN.EDGEPORT_ADMIN_KEY}`];
const SIGN = ['--aws-sigv4', 'aws:amz:auto:s3', '--user', `${S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID}:${S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY}`];

/** `curl --http2 -v` (extra arguments first): status, the HTTP version answered, body, and whether it offered h2c. */
async function curlHttp2(url: string, ...args: string[]): Promise<{ status: number; version: string; body: string; offeredH2c: boolean }> {
  const { stdout, stderr } = await run('curl', ['-s', '-v', '--http2', '--max-time', '20', '-w', '\n%{http_code} %{http_version}', ...args, url], {
    timeout: 30_000,
    maxBuffer: 1 << 20,
  });
  const end = stdout.lastIndexOf('\n');
  const [status, version] = stdout.slice(end + 1).split(' ');
  return { status: Number(status), version: version!, body: stdout.slice(0, end), offeredH2c: /^> Upgrade: h2c\r?$/im.test(stderr) };
}

test('curl --http2 over http:// is answered over HTTP/1.1 by the API, the S3 API and the gateway, bodies included', { timeout: 120_000 }, async (t) => {
  const server = await startEdgeport({ dataDir: tempDir(t), env: { ...ADMIN, ...S3_KEY }, owner: t, shedding: false });
  const api = server.urls['management API']!;
  const s3 = server.urls['S3-compatible API']!;
  const gateway = new URL(server.urls.gateway!).origin;

  const accounts = await curlHttp2(`${api}/accounts`, ...AUTH);
  assert.ok(accounts.offeredH2c, 'curl offered h2c');
  assert.deepEqual([accounts.status, accounts.version], [200, '1.1'], accounts.body);
  const accountId = (JSON.parse(accounts.body) as { result: Array<{ id: string }> }).result[0]!.id;
  const created = await curlHttp2(
    `${api}/accounts/${accountId}/store/buckets`,
    ...AUTH,
    '-H',
    'content-type: application/json',
    '--data',
    '{"name":"h2c-bucket"}',
  );
  assert.ok(created.offeredH2c, 'curl offered h2c with a body too');
  assert.deepEqual([created.status, created.version], [200, '1.1'], created.body);

  const put = await curlHttp2(`${s3}/h2c-bucket/hello.txt`, ...SIGN, '-X', 'PUT', '--data-binary', 'hello over HTTP/1.1');
  assert.ok(put.offeredH2c);
  assert.deepEqual([put.status, put.version], [200, '1.1'], put.body);
  const got = await curlHttp2(`${s3}/h2c-bucket/hello.txt`, ...SIGN);
  assert.deepEqual([got.status, got.version, got.body], [200, '1.1', 'hello over HTTP/1.1']);

  const chainId = await curlHttp2(`${gateway}/v1/sepolia`, '-H', 'content-type: application/json', '--data', '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
  assert.ok(chainId.offeredH2c);
  assert.deepEqual([chainId.status, chainId.version], [200, '1.1'], chainId.body);
  assert.equal((JSON.parse(chainId.body) as { result: string }).result, '0xaa36a7');

  // The same headers from a raw socket, at the API's port (which takes WebSocket upgrades) and the S3 API's.
  const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';
  const apiPort = Number(new URL(api).port);
  const raw = await (
    await openRaw(apiPort, {
      send: `GET /client/v4/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Auth-Email: ${ADMIN.EDGEPORT_ADMIN_EMAIL}\r\nX-Auth-Key: ${ADMIN.EDGEPORT_ADMIN_KEY}\r\n${h2c}\r\n`,
    })
  ).closed;
  assert.equal(statusOf(raw.text), 200, raw.text);
  assert.equal(headerOf(raw.text, 'upgrade'), undefined, 'no protocol switched to');
  assert.equal((JSON.parse(bodyOf(raw.text)) as { result: Array<{ id: string }> }).result[0]!.id, accountId);
  const rawS3 = await (await openRaw(Number(new URL(s3).port), { send: `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n${h2c}\r\n` })).closed;
  assert.equal(statusOf(rawS3.text), 403, 'an unsigned request, answered by the S3 API itself');
  assert.match(bodyOf(rawS3.text), /<Code>AccessDenied<\/Code>/);

  // A WebSocket handshake still reaches the tails' upgrade handler: no such tail here.
  const handshake = await (
    await openRaw(apiPort, {
      send:
        `GET /client/v4/tail-sockets/${'0'.repeat(32)}/${'x'.repeat(32)} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    })
  ).closed;
  assert.equal(statusOf(handshake.text), 404, handshake.text);
  assert.match(handshake.text, /No such tail/);
});
