/**
 * The listener's connection limits over real sockets: per client address and in all, refused with
 * a prepared 503 at once (never left hanging), counted back down when connections close; plus the
 * counting itself (ConnectionLimiter, clientKey).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { ConnectionLimiter, clientKey } from '../../src/cli/connection-limiter.ts';
import { listen } from '../../src/cli/listener.ts';
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
  assert.equal(
    bodyOf(text),
    'error 503: Too many open connections from your address: at most 5 are allowed, and fewer while edgeport is busy. Close or reuse idle connections, then retry.\n',
  );
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

test(
  "a full listener closes the heaviest client's oldest idle connection for a lighter client, never one whose request is in progress",
  { timeout: 30_000 },
  async (t) => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const listener = await listen(
      (req, res) => {
        req.resume();
        // /slow answers only when the test lets it: its connection has a request in progress meanwhile.
        if (req.url === '/slow') void held.then(() => res.end('slow ok'));
        else res.end('ok');
      },
      '127.0.0.1',
      0,
      'test listener',
      { limits: { maxConnections: 8, maxConnectionsPerClient: 100 } },
    );
    onTestEnd(t, () => listener.close());
    onTestEnd(t, () => release());
    // 127.0.0.2 first sends a request that stays in progress, then fills half the listener and its fair share with partial heads.
    const busy = await openRaw(listener.port, { localAddress: '127.0.0.2', send: 'GET /slow HTTP/1.1\r\nHost: example.test\r\n\r\n' });
    await sleep(50);
    const heavy = await openMany(3, listener.port, { localAddress: '127.0.0.2', send: PARTIAL });
    const others = [
      ...(await openMany(2, listener.port, { localAddress: '127.0.0.3', send: PARTIAL })),
      ...(await openMany(2, listener.port, { localAddress: '127.0.0.4', send: PARTIAL })),
    ];
    onTestEnd(t, () => [busy, ...heavy, ...others].forEach((c) => c.socket.destroy()));
    await sleep(50);
    assert.equal([busy, ...heavy, ...others].filter((c) => c.socket.destroyed).length, 0, 'eight connections are held');
    // Full: 127.0.0.5 is served; 127.0.0.2's oldest idle connection (not the busy one) made room.
    assert.equal((await get(listener.url, '127.0.0.5')).status, 200);
    const evicted = await heavy[0]!.closed;
    assert.equal(evicted.text, '', 'an evicted connection is closed without an answer');
    await sleep(50);
    assert.equal(busy.socket.destroyed, false, 'the connection with a request in progress stays');
    release();
    await sleep(50);
    assert.match(busy.received(), /slow ok$/);
  },
);

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
  stubborn.on('data', (chunk: Buffer) => {
    answer += chunk.toString();
  });
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

test('ConnectionLimiter: under half full the per-client limit holds, and release counts down (once)', { timeout: 10_000 }, () => {
  const limiter = new ConnectionLimiter<object>({ maxConnections: 100, maxConnectionsPerClient: 2 });
  const [a1, a2, a3, b1] = [{}, {}, {}, {}];
  assert.deepEqual(limiter.admit('a', a1), {});
  assert.deepEqual(limiter.admit('a', a2), {});
  assert.deepEqual(limiter.admit('a', a3), { refused: 'LISTENER_CLIENT_CONNECTION_LIMIT' });
  assert.deepEqual(limiter.admit('b', b1), {});
  assert.equal(limiter.total, 3);
  limiter.release(a1);
  limiter.release(a1);
  assert.equal(limiter.openFrom('a'), 1);
  assert.equal(limiter.total, 2);
  assert.deepEqual(limiter.admit('a', a3), {});
  for (const c of [a2, a3, b1]) limiter.release(c);
  assert.equal(limiter.total, 0);
  assert.equal(limiter.openFrom('a'), 0);
});

test('ConnectionLimiter: from half full a client gets its fair share, which leaves room for one more client', { timeout: 10_000 }, () => {
  const limiter = new ConnectionLimiter<object>({ maxConnections: 100, maxConnectionsPerClient: 40 });
  const admitted = (key: string): number => {
    let n = 0;
    while (limiter.admit(key, {}).refused === undefined) n += 1;
    return n;
  };
  // Empty: the first client takes its whole cap (40 < 50).
  assert.equal(admitted('a'), 40);
  // 40 open, 2 clients with b: b may go to 50 total freely, then to floor(100 / 3) = 33.
  assert.equal(admitted('b'), 33);
  assert.equal(limiter.capFor(), 33);
  // A third: floor(100 / 4) = 25; the listener is not full (98), so nobody is evicted.
  assert.equal(admitted('c'), 25);
  assert.ok(limiter.total < 100, `room is left: ${limiter.total}`);
});

test(
  "ConnectionLimiter: when full, a lighter client takes the heaviest client's oldest idle connection; busy ones are never taken",
  { timeout: 10_000 },
  () => {
    const limiter = new ConnectionLimiter<{ id: string }>({ maxConnections: 6, maxConnectionsPerClient: 100 });
    // a fills half the listener before fair shares apply; b and c then get floor(6 / 3) = 2 and floor(6 / 4) = 1.
    const a = [{ id: 'a0' }, { id: 'a1' }, { id: 'a2' }];
    for (const c of a) assert.deepEqual(limiter.admit('a', c), {});
    assert.deepEqual(limiter.admit('a', { id: 'a3' }), { refused: 'LISTENER_CLIENT_CONNECTION_LIMIT' });
    for (const id of ['b0', 'b1']) assert.deepEqual(limiter.admit('b', { id }), {});
    assert.deepEqual(limiter.admit('c', { id: 'c0' }), {});
    assert.equal(limiter.total, 6);
    limiter.busy(a[0]!);
    // Full: d (0 open) takes a's oldest idle connection, a1 (a0 has a request in progress).
    assert.deepEqual(limiter.admit('d', { id: 'd0' }), { evict: a[1] });
    assert.equal(limiter.openFrom('a'), 2);
    assert.equal(limiter.total, 6);
    // An evicted connection's own close later is ignored.
    limiter.release(a[1]!);
    assert.equal(limiter.total, 6);
    // Once a0 is idle again it is a's newest idle connection: a2 goes before it.
    limiter.idle(a[0]!);
    assert.deepEqual(limiter.admit('e', { id: 'e0' }), { evict: a[2] });
    // Now b is the heaviest (2; a holds a0 only): its oldest goes.
    assert.deepEqual(limiter.admit('f', { id: 'f0' }), { evict: { id: 'b0' } });
    // Every client holds 1: nobody holds more than a newcomer would after admission, so it is refused.
    assert.deepEqual(limiter.admit('g', { id: 'g0' }), { refused: 'LISTENER_CONNECTION_LIMIT' });
    assert.equal(limiter.total, 6);
  },
);

test('ConnectionLimiter: a per-client limit of 0 turns fair shares off (a reverse proxy is every client)', { timeout: 10_000 }, () => {
  const limiter = new ConnectionLimiter<object>({ maxConnections: 10, maxConnectionsPerClient: 0 });
  for (let i = 0; i < 10; i++) assert.deepEqual(limiter.admit('proxy', {}), {}, `connection ${i}`);
  assert.deepEqual(limiter.admit('proxy', {}), { refused: 'LISTENER_CONNECTION_LIMIT' });
  assert.equal(limiter.capFor(), Infinity);
});

test('ConnectionLimiter: whatever the order of admissions, busy marks and releases, the counts add up and never pass the limits', { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom('admit', 'busy', 'idle', 'release'), fc.integer({ min: 0, max: 5 }), fc.nat(30)), { maxLength: 300 }),
      (steps) => {
        const limiter = new ConnectionLimiter<object>({ maxConnections: 12, maxConnectionsPerClient: 8 });
        const open: Array<{ key: string; c: object }> = [];
        for (const [op, client, pick] of steps) {
          const key = `k${client}`;
          if (op === 'admit') {
            const c = {};
            const result = limiter.admit(key, c);
            if (result.refused === undefined) {
              if (result.evict !== undefined) {
                const at = open.findIndex((o) => o.c === result.evict);
                assert.ok(at >= 0, 'an evicted connection was open');
                open.splice(at, 1);
              }
              open.push({ key, c });
            }
          } else if (open.length > 0) {
            const target = open[pick % open.length]!;
            if (op === 'busy') limiter.busy(target.c);
            else if (op === 'idle') limiter.idle(target.c);
            else {
              limiter.release(target.c);
              open.splice(open.indexOf(target), 1);
            }
          }
          assert.equal(limiter.total, open.length);
          assert.ok(limiter.total <= 12);
          for (let i = 0; i <= 5; i++) {
            assert.equal(limiter.openFrom(`k${i}`), open.filter((o) => o.key === `k${i}`).length);
            assert.ok(limiter.openFrom(`k${i}`) <= 8);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
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
