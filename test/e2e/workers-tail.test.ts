/**
 * Tails of deployed scripts (`wrangler tail`), end to end through `edgeport start`: a tail opened
 * through the API, its WebSocket (trace-v1, undici's client) receives an event per request with
 * the request, the status, console output and a thrown exception; a client sending its first frame
 * unmasked, as wrangler does, is served; another account can neither open, list nor close it; the
 * per-script limit answers 10057; a closed tail's socket is closed, and once the last is closed
 * the script keeps serving (restarted without tails).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { WebSocket } from 'undici';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { testDbUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { moduleFile, sdkFor, servedWithin, viaEdge } from '../helpers/workers-upload.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'tailer@example.test', EDGEPORT_ADMIN_KEY: 'workers-tail-admin-key-0123' };

const SCRIPT = `export default {
  async fetch(request) {
    const url = new URL(request.url);
    console.log('serving', url.pathname, { n: 1 });
    console.warn('careful');
    if (url.pathname === '/boom') throw new RangeError('it broke');
    return new Response('tailed');
  },
};`;

interface TailEvent {
  outcome: string;
  scriptName: string;
  eventTimestamp: number;
  event: { request: { url: string; method: string; headers: Record<string, string> }; response?: { status: number } };
  logs: Array<{ message: unknown[]; level: string; timestamp: number }>;
  exceptions: Array<{ name: string; message: string; timestamp: number }>;
}

function api(apiUrl: string, email: string, key: string) {
  return async (
    method: string,
    path: string,
  ): Promise<{ status: number; body: { success: boolean; result: unknown; errors: Array<{ code: number; message: string }> } }> => {
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { 'x-auth-email': email, 'x-auth-key': key, 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: '{"filters":[]}' } : {}),
    });
    return { status: response.status, body: (await response.json()) as never };
  };
}

/** The events a socket received, in order, and a wait for the next one. */
function eventQueue(ws: WebSocket): { next(withinMs: number): Promise<TailEvent>; received: TailEvent[] } {
  const received: TailEvent[] = [];
  let waiter: (() => void) | undefined;
  ws.addEventListener('message', (message) => {
    received.push(JSON.parse(String(message.data)) as TailEvent);
    waiter?.();
  });
  let taken = 0;
  return {
    received,
    async next(withinMs) {
      const deadline = Date.now() + withinMs;
      while (received.length <= taken) {
        assert.ok(Date.now() < deadline, `no tail event within ${withinMs} ms`);
        await new Promise<void>((resolve) => {
          waiter = resolve;
          setTimeout(resolve, 100);
        });
      }
      return received[taken++]!;
    },
  };
}

/** Requests `path` until the tail sees one: the script's version restarts with tails once a tail opens. */
async function untilTailed(edgeUrl: string, path: string, queue: { received: unknown[] }, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (queue.received.length === 0) {
    assert.ok(Date.now() < deadline, `no request was tailed within ${withinMs} ms`);
    assert.equal((await viaEdge(edgeUrl, 'tail.test', path)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test('wrangler tail: events per request over trace-v1, tenancy and limits', { timeout: 180_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const dbUrl = await testDbUrl(t);
  const server = await startEdgeport({ owner: t, dataDir, env: { ...ADMIN, ...(dbUrl ? { EDGEPORT_DB_URL: dbUrl } : {}) } });
  const apiUrl = server.urls['management API']!;
  const edgeUrl = server.urls.edge!;
  const client = sdkFor(apiUrl, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
  const [account] = (await client.accounts.list()).result;
  const account_id = account!.id;
  const zone = await client.zones.create({ account: { id: account_id }, name: 'tail.test' });
  await client.workers.scripts.update('tailed', {
    account_id,
    metadata: { main_module: 'index.js', compatibility_date: '2025-01-01' },
    files: [await moduleFile(SCRIPT)],
  });
  await client.workers.routes.create({ zone_id: zone.id, pattern: 'tail.test/*', script: 'tailed' });
  await servedWithin(edgeUrl, 'tail.test', 'tailed', 5_000);
  const call = api(apiUrl, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
  const tailsPath = `/accounts/${account_id}/workers/scripts/tailed/tails`;

  const opened = await call('POST', tailsPath);
  assert.equal(opened.status, 200, JSON.stringify(opened.body));
  const tail = opened.body.result as { id: string; url: string; expires_at: string };
  assert.match(tail.url, /^ws:\/\//);
  assert.ok(Date.parse(tail.expires_at) > Date.now());
  const ws = new WebSocket(tail.url, 'trace-v1');
  t.after(() => ws.close());
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve());
    ws.addEventListener('error', () => reject(new Error('the tail socket did not open')));
  });
  assert.equal(ws.protocol, 'trace-v1');
  ws.send(JSON.stringify({ debug: false }));
  const queue = eventQueue(ws);
  await untilTailed(edgeUrl, '/hello?x=1', queue, 20_000);
  // Once tailed, every request is: the next one is the failing one.
  const ok = queue.received.at(-1);
  assert.equal((await viaEdge(edgeUrl, 'tail.test', '/boom')).status, 500);
  let boom = await queue.next(10_000);
  while (new URL(boom.event.request.url).pathname !== '/boom') boom = await queue.next(10_000);
  assert.equal(ok!.outcome, 'ok');
  assert.equal(ok!.scriptName, 'tailed');
  assert.ok(Math.abs(ok!.eventTimestamp - Date.now()) < 60_000);
  assert.equal(ok!.event.request.method, 'GET');
  assert.equal(new URL(ok!.event.request.url).pathname, '/hello');
  assert.equal(ok!.event.response?.status, 200);
  assert.ok(!Object.keys(ok!.event.request.headers).some((name) => name.startsWith('x-edgeport-')), JSON.stringify(ok!.event.request.headers));
  assert.deepEqual(
    ok!.logs.map(({ message, level }) => ({ message, level })),
    [
      { message: ['serving', '/hello', { n: 1 }], level: 'log' },
      { message: ['careful'], level: 'warn' },
    ],
  );
  assert.deepEqual(ok!.exceptions, []);
  assert.equal(boom.outcome, 'exception');
  assert.deepEqual(
    boom.exceptions.map(({ name, message }) => ({ name, message })),
    [{ name: 'RangeError', message: 'it broke' }],
  );

  // Another account: the tail is as missing as an unknown one; it cannot open one on a script it does not have.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(ROOT, 'bin/edgeport.js'), 'accounts', 'create', 'other@example.test', '--data-dir', dataDir],
    { env: { ...process.env, ...(dbUrl ? { EDGEPORT_DB_URL: dbUrl } : {}) } },
  );
  const otherKey = /X-Auth-Key: +(\S+)/.exec(stdout)?.[1];
  assert.ok(otherKey, stdout);
  const other = api(apiUrl, 'other@example.test', otherKey);
  const otherAccount = ((await other('GET', '/accounts')).body.result as Array<{ id: string }>)[0]!.id;
  for (const [method, path] of [
    ['POST', tailsPath],
    ['GET', tailsPath],
    ['DELETE', `${tailsPath}/${tail.id}`],
  ] as const) {
    const refused = await other(method, path);
    assert.deepEqual([refused.status, refused.body.errors[0]?.code], [404, 7003], `${method} ${path}: ${JSON.stringify(refused.body)}`);
  }
  const onOwn = await other('DELETE', `/accounts/${otherAccount}/workers/scripts/tailed/tails/${tail.id}`);
  assert.deepEqual([onOwn.status, onOwn.body.errors[0]?.code], [404, 10007]);
  const unknown = await call('DELETE', `${tailsPath}/${'0'.repeat(32)}`);
  assert.deepEqual([unknown.status, unknown.body.errors[0]?.code], [404, 10007]);

  // A first frame unmasked, as wrangler sends it, is accepted; the socket gets the next request's event.
  const raw = await rawTail(((await call('POST', tailsPath)).body.result as { url: string }).url);
  t.after(() => raw.socket.destroy());
  raw.socket.write(Buffer.concat([Buffer.from([0x81, 15]), Buffer.from('{"debug":false}')]));
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal((await viaEdge(edgeUrl, 'tail.test', '/raw')).status, 200);
  const frame = await raw.nextText(20_000);
  assert.equal(new URL((JSON.parse(frame) as TailEvent).event.request.url).pathname, '/raw');

  // Limits: at most 10 tails per script (two open already).
  const listed = await call('GET', tailsPath);
  assert.equal((listed.body.result as unknown[]).length, 2);
  for (let i = 2; i < 10; i++) assert.equal((await call('POST', tailsPath)).status, 200);
  const over = await call('POST', tailsPath);
  assert.deepEqual([over.status, over.body.errors[0]?.code], [429, 10057]);
  assert.match(over.body.errors[0]!.message, /already has 10 tails open/);

  // Closing a tail closes its socket.
  const closed = new Promise<number>((resolve) => ws.addEventListener('close', (event) => resolve(event.code)));
  assert.equal((await call('DELETE', `${tailsPath}/${tail.id}`)).status, 200);
  assert.equal(await closed, 1000);
  assert.equal((await call('DELETE', `${tailsPath}/${tail.id}`)).status, 404);

  // With the last tail closed, the script goes back to running without tails, and keeps serving.
  for (const { id } of (await call('GET', tailsPath)).body.result as Array<{ id: string }>)
    assert.equal((await call('DELETE', `${tailsPath}/${id}`)).status, 200);
  assert.deepEqual((await call('GET', tailsPath)).body.result, []);
  for (let i = 0; i < 20; i++) {
    assert.equal((await viaEdge(edgeUrl, 'tail.test', '/after')).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

/** A WebSocket client by hand: the handshake, then frames read from the raw socket. */
async function rawTail(url: string): Promise<{ socket: Socket; nextText(withinMs: number): Promise<string> }> {
  const target = new URL(url.replace(/^ws/, 'http'));
  const socket = await new Promise<Socket>((resolve, reject) => {
    const req = request({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'sec-websocket-protocol': 'trace-v1',
      },
    });
    req.on('upgrade', (res, upgraded: Socket) => {
      assert.equal(res.headers['sec-websocket-accept'], 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
      resolve(upgraded);
    });
    req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
  let buffered = Buffer.alloc(0);
  return {
    socket,
    nextText: (withinMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no frame within ${withinMs} ms`)), withinMs);
        const onData = (chunk: Buffer) => {
          buffered = Buffer.concat([buffered, chunk]);
          if (buffered.length < 2) return;
          // Server frames are unmasked; the events here are under 64 KiB.
          const short = buffered[1]! & 0x7f;
          const [offset, length] = short === 126 ? [4, buffered.readUInt16BE(2)] : [2, short];
          if (buffered.length < offset + length) return;
          assert.equal(buffered[0], 0x81);
          clearTimeout(timer);
          socket.off('data', onData);
          resolve(buffered.subarray(offset, offset + length).toString('utf8'));
        };
        socket.on('data', onData);
      }),
  };
}
