/**
 * The listener's connection limits over real sockets: per client address and in all, refused with
 * a prepared 503 at once (never left hanging), counted back down when connections close; plus the
 * counting itself (ConnectionLimiter, clientKey).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectionLimiter, clientKey } from '../../src/cli/connection-limiter.ts';
import { bodyOf, headerOf, openMany, openRaw, statusOf } from '../helpers/raw-connections.ts';
import { onTestEnd } from '../helpers/cleanup.ts';
import { okListener } from '../helpers/ok-listener.ts';

const PARTIAL = 'GET / HTTP/1.1\r\nHost: example.test\r\n';
const FULL = 'GET / HTTP/1.1\r\nHost: example.test\r\n\r\n';


async function get(url: string, localAddress: string): Promise<{ status: number; text: string }> {
  const connection = await openRaw(Number(new URL(url).port), { localAddress, send: 'GET / HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n\r\n' });
  const { text } = await connection.closed;
  return { status: statusOf(text), text };
}

test('over the per-client limit a connection gets a 503 at once; other clients are served; closing frees a slot', { timeout: 30_000 }, async (t) => {
  const listener = await okListener(t, { maxConnectionsPerClient: 5 });
  const held = await openMany(5, listener.port, { localAddress: '127.0.0.1', send: PARTIAL });
  onTestEnd(t, () => held.forEach((c) => c.socket.destroy()));

  // The refused client sent its whole request at once: it still reads the whole answer (no reset).
  const refused = await openRaw(listener.port, { localAddress: '127.0.0.1', send: FULL });
  const { afterMs, text } = await refused.closed;
  assert.equal(statusOf(text), 503, text);
  assert.equal(headerOf(text, 'retry-after'), '1');
  assert.equal(headerOf(text, 'connection'), 'close');
  assert.equal(bodyOf(text), 'error 503: Too many open connections from your address: at most 5 are allowed. Close or reuse idle connections, then retry.\n');
  assert.ok(afterMs < 1_500, `refused after ${afterMs} ms`);

  assert.deepEqual(await get(listener.url, '127.0.0.2').then((r) => r.status), 200, 'another address is served');
  held[0]!.socket.destroy();
  await held[0]!.closed;
  await sleep(50);
  assert.equal((await get(listener.url, '127.0.0.1')).status, 200, 'a closed connection frees its slot');
});

test('over the total limit a connection from any address gets a 503 at once, not a hang', { timeout: 30_000 }, async (t) => {
  const listener = await okListener(t, { maxConnections: 3, maxConnectionsPerClient: 0 });
  const held = await Promise.all(['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((localAddress) => openRaw(listener.port, { localAddress, send: PARTIAL })));
  onTestEnd(t, () => held.forEach((c) => c.socket.destroy()));
  const started = performance.now();
  const { status, text } = await get(listener.url, '127.0.0.5');
  const refusedMs = performance.now() - started;
  console.log(`total limit: a fourth connection was refused in ${refusedMs.toFixed(1)} ms`);
  assert.equal(status, 503);
  assert.match(bodyOf(text), /^error 503: edgeport has too many open connections: at most 3 are allowed\./);
  assert.ok(refusedMs < 1_500, `refused after ${refusedMs} ms`);
  held[2]!.socket.destroy();
  await held[2]!.closed;
  await sleep(50);
  assert.equal((await get(listener.url, '127.0.0.5')).status, 200);
});

test('a limit of 0 is no limit', { timeout: 30_000 }, async (t) => {
  const listener = await okListener(t, { maxConnections: 0, maxConnectionsPerClient: 0 });
  const held = await openMany(300, listener.port, { localAddress: '127.0.0.1', send: PARTIAL });
  onTestEnd(t, () => held.forEach((c) => c.socket.destroy()));
  assert.equal((await get(listener.url, '127.0.0.1')).status, 200);
  assert.equal(held.filter((c) => c.socket.destroyed).length, 0);
});

test('a refused connection whose client never closes is closed by the server after about a second', { timeout: 30_000 }, async (t) => {
  const listener = await okListener(t, { maxConnectionsPerClient: 1 });
  const held = await openRaw(listener.port, { localAddress: '127.0.0.1', send: PARTIAL });
  onTestEnd(t, () => held.socket.destroy());
  // Half-open on the client's side: it reads the answer and the server's FIN but never sends its own.
  const stubborn = connect({ port: listener.port, host: '127.0.0.1', allowHalfOpen: true });
  onTestEnd(t, () => stubborn.destroy());
  let answer = '';
  stubborn.on('data', (chunk: Buffer) => { answer += chunk.toString(); });
  const ended = new Promise<void>((resolve) => stubborn.once('end', () => resolve()));
  const failed = new Promise<string>((resolve) => stubborn.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message)));
  await ended;
  assert.equal(statusOf(answer), 503);
  // Once the server has let go of the socket, a write is answered with a reset.
  await sleep(1_500);
  stubborn.write('GET / HTTP/1.1\r\n');
  await sleep(100);
  stubborn.write('Host: example.test\r\n');
  assert.match(await failed, /ECONNRESET|EPIPE/);
});

test('ConnectionLimiter: the per-client limit is checked first, and release counts down', { timeout: 10_000 }, () => {
  const limiter = new ConnectionLimiter({ maxConnections: 3, maxConnectionsPerClient: 2 });
  assert.equal(limiter.admit('a'), undefined);
  assert.equal(limiter.admit('a'), undefined);
  assert.equal(limiter.admit('a'), 'LISTENER_CLIENT_CONNECTION_LIMIT');
  assert.equal(limiter.admit('b'), undefined);
  assert.equal(limiter.admit('c'), 'LISTENER_CONNECTION_LIMIT');
  assert.equal(limiter.admit('a'), 'LISTENER_CLIENT_CONNECTION_LIMIT', 'a client over its own limit hears about its own limit');
  assert.equal(limiter.total, 3);
  limiter.release('a');
  assert.equal(limiter.openFrom('a'), 1);
  assert.equal(limiter.admit('c'), undefined);
  limiter.release('a');
  limiter.release('b');
  limiter.release('c');
  assert.equal(limiter.total, 0);
  assert.equal(limiter.openFrom('a'), 0);
});

test('clientKey: IPv4 (also IPv4-mapped) as is, IPv6 by its /64', { timeout: 10_000 }, () => {
  assert.equal(clientKey('127.0.0.1'), '127.0.0.1');
  assert.equal(clientKey('::ffff:10.1.2.3'), '10.1.2.3');
  assert.equal(clientKey('::FFFF:10.1.2.3'), '10.1.2.3');
  assert.equal(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
  assert.equal(clientKey('2001:0db8:0001:0002::'), '2001:db8:1:2::/64');
  assert.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(clientKey('2001:db8:0:0:1::1'), '2001:db8:0:0::/64');
  assert.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(clientKey('::1'), '0:0:0:0::/64');
  assert.equal(clientKey('::'), '0:0:0:0::/64');
  assert.equal(clientKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
  assert.equal(clientKey(undefined), '');
});
