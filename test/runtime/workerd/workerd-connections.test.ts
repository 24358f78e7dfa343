/** The edge's connections to workerd, against a raw server on a Unix socket: keep-alive, request bodies, and every way an exchange can fail. */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test, type TestContext } from 'node:test';
import { WorkerdConnections, type DispatchOptions } from '../../../src/runtime/workerd/workerd-connections.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

/** A server that hands each connection to `onConnection`; stopped when the test ends. */
async function rawServer(t: TestContext, onConnection: (socket: Socket) => void): Promise<{ path: string; connections: () => number }> {
  const path = join(tempDir(t), 'workerd.sock');
  const sockets = new Set<Socket>();
  let count = 0;
  const server = createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { path, connections: () => count };
}

/** Reads requests off `socket` (head, then a Content-Length or chunked body) and answers each with `answer`. */
function serveRequests(socket: Socket, answer: (head: string, body: string) => string): void {
  let buffered = '';
  socket.setEncoding('latin1');
  socket.on('data', (text: string) => {
    buffered += text;
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.slice(0, end);
      let rest = buffered.slice(end + 4);
      let body = '';
      const length = /content-length: (\d+)/i.exec(head);
      if (length) {
        if (rest.length < Number(length[1])) return;
        body = rest.slice(0, Number(length[1]));
        rest = rest.slice(body.length);
      } else if (/transfer-encoding: chunked/i.test(head)) {
        const last = rest.indexOf('0\r\n\r\n');
        if (last < 0) return;
        for (let at = 0; at < last;) {
          const lineEnd = rest.indexOf('\r\n', at);
          const size = parseInt(rest.slice(at, lineEnd), 16);
          body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
          at = lineEnd + 2 + size + 2;
        }
        rest = rest.slice(last + 5);
      }
      buffered = rest;
      socket.write(answer(head, body), 'latin1');
    }
  });
}

interface Outcome {
  status?: number;
  headers?: string[];
  body: string;
  completed: boolean;
  error?: NodeJS.ErrnoException;
}

function send(connections: WorkerdConnections, options: Partial<DispatchOptions>, hold?: (abort: (reason?: Error) => void) => void): Promise<Outcome> {
  const outcome: Outcome = { body: '', completed: false };
  return new Promise((resolve) => {
    connections.dispatch(
      { method: 'GET', path: '/', headers: ['host', 'example.com'], body: null, ...options },
      {
        onConnect(abort) {
          hold?.(abort);
        },
        onHeaders(status, headers) {
          outcome.status = status;
          outcome.headers = headers;
        },
        onData(chunk, release) {
          outcome.body += Buffer.from(chunk).toString('latin1');
          release();
          return true;
        },
        onComplete() {
          outcome.completed = true;
          resolve(outcome);
        },
        onError(error) {
          outcome.error = error;
          resolve(outcome);
        },
      },
    );
  });
}

test('answers of every framing come back whole, and one kept-alive connection carries request after request', { timeout: 10_000 }, async (t) => {
  const server = await rawServer(t, (socket) =>
    serveRequests(socket, (head, body) => {
      const target = head.split(' ')[1]!;
      if (target === '/chunked') return 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n';
      return `HTTP/1.1 201 Made\r\nx-echo: ${target}\r\ncontent-length: ${body.length + 2}\r\n\r\n${body}ok`;
    }),
  );
  const connections = new WorkerdConnections(server.path);
  t.after(() => connections.destroy());
  for (let i = 0; i < 3; i++) {
    const plain = await send(connections, { path: `/n${i}` });
    assert.deepEqual([plain.status, plain.headers, plain.body, plain.completed], [201, ['x-echo', `/n${i}`, 'content-length', '2'], 'ok', true]);
    const chunked = await send(connections, { path: '/chunked' });
    assert.equal(chunked.body, 'abcde');
    // A body of unknown length goes chunked; one with a Content-Length as it is.
    const streamed = await send(connections, { method: 'POST', body: Readable.from([Buffer.from('he'), Buffer.from('llo')]) });
    assert.equal(streamed.body, 'hellook');
    const sized = await send(connections, { method: 'PUT', headers: ['host', 'h', 'content-length', '5'], body: Readable.from([Buffer.from('sized')]) });
    assert.equal(sized.body, 'sizedok');
  }
  assert.equal(server.connections(), 1);
});

test('a refused connection fails with its code; a server that closes mid-answer, or answers garbage, fails the request', { timeout: 10_000 }, async (t) => {
  const missing = new WorkerdConnections(join(tempDir(t), 'nobody.sock'));
  assert.equal((await send(missing, {})).error?.code, 'ENOENT');
  const server = await rawServer(t, (socket) =>
    serveRequests(socket, (head) => {
      if (head.startsWith('GET /cut')) {
        setImmediate(() => socket.destroy());
        return 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly part';
      }
      return 'HTTP/1.1 200 OK\r\ncontent-length: nope\r\n\r\n';
    }),
  );
  const connections = new WorkerdConnections(server.path);
  t.after(() => connections.destroy());
  const cut = await send(connections, { path: '/cut' });
  assert.deepEqual([cut.status, cut.body, cut.completed], [200, 'only part', false]);
  assert.match(cut.error!.message, /before its response was complete/);
  const garbage = await send(connections, { path: '/garbage' });
  assert.match(garbage.error!.message, /invalid Content-Length/);
  await connections.destroy();
  assert.equal(connections.destroyed, true);
  assert.ok((await send(connections, {})).error);
});

test('an aborted request fails with its reason and its connection is not reused; destroy fails what is in flight', { timeout: 10_000 }, async (t) => {
  const server = await rawServer(t, (socket) =>
    serveRequests(socket, (head) => (head.startsWith('GET /hang') ? '' : 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n')),
  );
  const connections = new WorkerdConnections(server.path);
  t.after(() => connections.destroy());
  let abort: ((reason?: Error) => void) | undefined;
  const hanging = send(connections, { path: '/hang' }, (a) => {
    abort = a;
  });
  setTimeout(() => abort!(new Error('client left')), 50);
  assert.equal((await hanging).error?.message, 'client left');
  assert.equal((await send(connections, {})).completed, true);
  assert.equal(server.connections(), 2);
  const inFlight = send(connections, { path: '/hang' });
  setTimeout(() => void connections.destroy(), 50);
  assert.match((await inFlight).error!.message, /closed/);
});

/**
 * A server that, as workerd does, closes a connection idle for `idleMs` without a word (and one
 * that closes a reused connection as a request arrives on it, the race at its worst).
 */
async function idleClosingServer(t: TestContext, idleMs: number, dropSome: () => boolean) {
  return rawServer(t, (socket) => {
    let served = 0;
    // Idle between requests (a fresh connection's first request is never in that race: workerd gives it 15 s).
    socket.on('timeout', () => socket.end());
    let buffered = '';
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      buffered += text;
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const body = buffered.slice(end + 4, end + 4 + length);
        buffered = buffered.slice(end + 4 + length);
        // The idle close already under way as the request came: nothing of it is read.
        if (served > 0 && dropSome()) {
          socket.destroy();
          return;
        }
        if (served++ === 0) socket.setTimeout(idleMs);
        socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length + 2}\r\n\r\nok${body}`, 'latin1');
      }
    });
  });
}

test(
  '10,000 requests with the edge idling exactly as long as the server: none fails, requests on a connection closing under them go out again',
  { timeout: 120_000 },
  async (t) => {
    const idleMs = 40;
    let dropped = 0;
    const server = await idleClosingServer(t, idleMs, () => Math.random() < 0.02 && ++dropped > 0);
    // The racing values: the edge keeps an idle connection exactly as long as the server does.
    const connections = new WorkerdConnections(server.path, { idleMs });
    t.after(() => connections.destroy());
    let failed = 0;
    let sent = 0;
    const loops = Array.from({ length: 100 }, async (_, loop) => {
      for (let i = 0; i < 100; i++) {
        // Around the idle limit, either side of it.
        await new Promise((resolve) => setTimeout(resolve, idleMs - 5 + Math.random() * 10));
        const withBody = (loop + i) % 3 === 0;
        const payload = `b${loop}.${i}`;
        const outcome = await send(
          connections,
          withBody ? { method: 'POST', headers: ['host', 'h', 'content-length', String(payload.length)], body: Readable.from([Buffer.from(payload)]) } : {},
        );
        sent++;
        if (!outcome.completed || outcome.body !== (withBody ? `ok${payload}` : 'ok')) failed++;
      }
    });
    await Promise.all(loops);
    t.diagnostic(
      `${sent} requests, ${failed} failed, ${connections.retried} sent again on a fresh connection (${dropped} dropped by the server as it closed), ${server.connections()} connections`,
    );
    assert.equal(sent, 10_000);
    assert.equal(failed, 0);
    assert.ok(connections.retried >= dropped, 'every dropped request was sent again');
  },
);

test('a request is not sent again once its answer began or more of its body was read than is held to send again', { timeout: 10_000 }, async (t) => {
  let count = 0;
  const server = await rawServer(t, (socket) =>
    serveRequests(socket, (head) => {
      count++;
      if (head.startsWith('GET /part')) {
        setImmediate(() => socket.destroy());
        return 'HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\npart';
      }
      if (head.startsWith('POST')) {
        setImmediate(() => socket.destroy());
        return '';
      }
      return 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok';
    }),
  );
  const connections = new WorkerdConnections(server.path);
  t.after(() => connections.destroy());
  assert.equal((await send(connections, {})).body, 'ok');
  const part = await send(connections, { path: '/part' });
  assert.ok(part.error, 'an answer cut off after it began fails');
  assert.equal((await send(connections, {})).body, 'ok');
  const large = Buffer.alloc(100 * 1024, 97);
  const posted = await send(connections, {
    method: 'POST',
    headers: ['host', 'h', 'content-length', String(large.length)],
    body: Readable.from([large.subarray(0, 70 * 1024), large.subarray(70 * 1024)]),
  });
  assert.ok(posted.error, 'a body read past what is held is not sent twice');
  assert.equal(connections.retried, 0);
  assert.equal(count, 4);
});
