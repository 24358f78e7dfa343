/**
 * Malformed request heads at the edge of `edgeport start`, sent raw: two Host headers (once a 500
 * through an origin), none, or an invalid one (once a 500 through a script, or a 530) are 400s
 * that say what is wrong; a Host with a port is routed by its host; nothing malformed is a 5xx
 * (530 stays the answer for a host no zone serves).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startEdgeport, writeScriptConfig } from '../helpers/edgeport-server.ts';
import { managementApi } from '../helpers/management-api.ts';
import { bodyOf, headerOf, openRaw, statusOf } from '../helpers/raw-connections.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { listen } from '../helpers/listen.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'owner@example.test', EDGEPORT_ADMIN_KEY: 'e2e-admin-key-0123456789' };

async function startOrigin(t: TestContext): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(`origin: host=${req.headers.host} url=${req.url}`));
  });
  const port = await listen(server, t);
  return `http://127.0.0.1:${port}`;
}

/** Sends a raw head; resolves with the answer once it is complete (by Content-Length) or the edge closes. */
async function exchange(port: number, head: string | Buffer): Promise<{ status: number; body: string }> {
  const connection = await openRaw(port, { send: head });
  const complete = (text: string): boolean => {
    const length = headerOf(text, 'content-length');
    return length !== undefined && Buffer.byteLength(bodyOf(text), 'latin1') >= Number(length);
  };
  await Promise.race([
    connection.closed,
    new Promise<void>((resolve) => {
      const check = (): void => {
        if (complete(connection.received())) resolve();
      };
      connection.socket.on('data', check);
    }),
  ]);
  connection.socket.destroy();
  const text = connection.received();
  return { status: statusOf(text), body: Buffer.from(bodyOf(text), 'latin1').toString() };
}

test('the edge answers malformed Host headers with 400s that say what is wrong, never a 5xx', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const origin = await startOrigin(t);
  const args = writeScriptConfig(dir, {
    name: 'echo',
    route: 'script.test/*',
    bucket: 'echo-bucket',
    source: 'export default { async fetch(request) { await request.arrayBuffer(); return new Response(`script: ${request.url}`); } };',
  });
  const server = await startEdgeport({ owner: t, dataDir: join(dir, 'data'), args, env: ADMIN });
  const api = managementApi(server.urls['management API']!, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
  const [account] = await api.call<Array<{ id: string }>>('GET', '/accounts');
  await api.call('POST', '/zones', { name: 'origin.test', account: { id: account!.id }, origin });
  await api.call('POST', '/zones', { name: 'script.test', account: { id: account!.id } });
  const port = Number(new URL(server.urls.edge!).port);
  const get = (headers: string, line = 'GET /p HTTP/1.1') => exchange(port, `${line}\r\n${headers}Connection: close\r\n\r\n`);

  // Through an origin this was a 500; through a script, the second Host silently won.
  for (const [first, second] of [
    ['origin.test', 'other.test'],
    ['script.test', 'other.test'],
    ['origin.test', 'origin.test'],
  ]) {
    const answer = await get(`Host: ${first}\r\nHost: ${second}\r\n`);
    assert.equal(answer.status, 400, `${first} + ${second}`);
    assert.match(answer.body, /^error 400: the request has 2 Host headers: send exactly one\.\nRay ID: [0-9a-f]{16}\n$/);
  }
  const noHost = await get('', 'GET /p HTTP/1.0');
  assert.equal(noHost.status, 400);
  assert.match(noHost.body, /^error 400: the request has no Host header/);
  for (const [value, zone] of [
    ['origin.test:abc', 'origin'],
    ['script.test:abc', 'script'],
    ['script.test:70000', 'script'],
    ['origin.test/x', 'origin'],
    ['user@origin.test', 'origin'],
    ['[::1', '-'],
  ]) {
    const answer = await get(`Host: ${value}\r\n`);
    assert.equal(answer.status, 400, `Host: ${value} (${zone})`);
    assert.match(
      answer.body,
      new RegExp(`^error 400: the Host header ${JSON.stringify(value).replace(/[[\].]/g, '\\$&')} is not a host name with an optional port`),
    );
  }
  assert.deepEqual(
    await get('Host: Origin.TEST:8080\r\n'),
    { status: 200, body: 'origin: host=Origin.TEST:8080 url=/p' },
    'a port is forwarded, not routed on',
  );
  assert.deepEqual(await get('Host: script.test:8080\r\n'), { status: 200, body: 'script: http://script.test:8080/p' });
  assert.equal((await get('Host: unknown.test\r\n')).status, 530, 'a host no zone serves is still 530');

  // Heads Node's parser refuses (400/431/417) or that are odd but valid: none is a 5xx.
  const heads: Array<string | Buffer> = [
    'GET * HTTP/1.1\r\nHost: origin.test\r\n\r\n',
    'GET http://elsewhere.test/p HTTP/1.1\r\nHost: origin.test\r\n\r\n',
    'GET /%FF%00 HTTP/1.1\r\nHost: script.test\r\n\r\n',
    Buffer.from('GET / HTTP/1.1\r\nHost: origin.test\r\nX-A: a\x7fb\r\n\r\n', 'latin1'),
    Buffer.from('GET / HTTP/1.1\r\nHost: script.test\r\nX-A: a\xffb\r\n\r\n', 'latin1'),
    'GET / HTTP/1.1\r\nHost: origin.test\r\nX-A: a\r\n folded\r\n\r\n',
    'POST / HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc',
    'POST / HTTP/1.1\r\nHost: script.test\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    'GET / HTTP/1.1\r\nHost: origin.test\r\nExpect: teapot\r\n\r\n',
    `GET / HTTP/1.1\r\nHost: origin.test\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    'GET / HTTP/1.1\r\nHost: script.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
    'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
  ];
  for (const head of heads) {
    const { status } = await exchange(port, head);
    assert.ok(status > 0 && status < 500, `${JSON.stringify(head.toString('latin1').slice(0, 60))} answered ${status}`);
  }
});
