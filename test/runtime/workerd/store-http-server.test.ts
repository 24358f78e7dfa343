/** The store service's own HTTP/1.1 server: exact bodies however the bytes are split, keep-alive, and malformed input answered or closed, never a crash. */
import assert from 'node:assert/strict';
import { connect, type Server } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { createStoreHttpServer, MAX_HEAD_BYTES, type StoreHandler } from '../../../src/runtime/workerd/store-http-server.ts';
import { listenOnSocket } from '../../../src/runtime/workerd/socket-server.ts';
import { LINGER_BYTES, LINGER_MS } from '../../../src/core/http/lingering-close.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

/** Echoes each request: its call header, its length (as Content-Length says; `chunked` without one) and body, as the answer's headers and body. */
const echo: StoreHandler = async (request, response) => {
  const chunks: Buffer[] = [];
  for (;;) {
    const next = await request.body.next();
    if (next.done) break;
    chunks.push(next.value);
  }
  const body = Buffer.concat(chunks);
  response.writeHead(200, ['x-echo-call', request.call ?? '-', 'x-echo-length', String(request.length ?? 'chunked'), 'content-length', String(body.length)]);
  response.end(body);
};

async function start(t: TestContext, handler: StoreHandler = echo): Promise<{ path: string; failures: unknown[] }> {
  const path = join(tempDir(t), 'store.sock');
  const failures: unknown[] = [];
  const server: Server = createStoreHttpServer(handler, (error) => failures.push(error));
  const service = await listenOnSocket(server, path);
  t.after(() => service.close());
  return { path, failures };
}

interface ExchangeOptions {
  /** Ends the client's side once the answer so far satisfies it. */
  complete?: (answer: string) => boolean;
  /** Ends the client's side after the last piece. */
  endAfter?: boolean;
  /** Written once the first bytes of the answer came. */
  onceAnswered?: Buffer;
}

/** Writes `pieces` one after another on one connection and resolves with all it answered, once the server closes it or the answer is `complete`. */
function exchange(path: string, pieces: Buffer[], { complete, endAfter = false, onceAnswered }: ExchangeOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no end; got ${JSON.stringify(answer)}`));
    }, 5_000);
    socket.on('data', (chunk) => {
      if (answer === '' && onceAnswered) socket.write(onceAnswered);
      answer += chunk.toString('latin1');
      if (complete?.(answer)) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    void (async () => {
      for (const piece of pieces) {
        if (socket.destroyed) return;
        socket.write(piece);
        await new Promise((r) => setImmediate(r));
      }
      if (endAfter) socket.end();
    })();
  });
}

function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const to of [...points, bytes.length]) {
    if (to > from) pieces.push(bytes.subarray(from, to));
    from = to;
  }
  return pieces;
}

function chunked(parts: Buffer[]): Buffer {
  return Buffer.concat([...parts.flatMap((part) => [Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]), Buffer.from('0\r\n\r\n')]);
}

test('requests of every framing, pipelined on one connection and split anywhere, come to the handler exactly, in order', { timeout: 60_000 }, async (t) => {
  const server = await start(t);
  const part = fc.uint8Array({ minLength: 1, maxLength: 300 }).map((bytes) => Buffer.from(bytes));
  const request = fc.tuple(fc.constantFrom('length', 'chunked', 'none'), fc.array(part, { maxLength: 4 }), fc.stringMatching(/^[\x21-\x7e]{1,30}$/));
  await fc.assert(
    fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 10 }), async (requests, cuts) => {
      const expected: string[] = [];
      const bytes = Buffer.concat(
        requests.map(([framing, parts, call]) => {
          const body = framing === 'none' ? Buffer.alloc(0) : Buffer.concat(parts);
          const length = framing === 'chunked' ? 'chunked' : body.length;
          expected.push(
            `HTTP/1.1 200 OK\r\nx-echo-call: ${call}\r\nx-echo-length: ${length}\r\ncontent-length: ${body.length}\r\n\r\n${body.toString('latin1')}`,
          );
          const head = `POST / HTTP/1.1\r\nHost: store.internal\r\nX-Store-Call:  ${call}\r\n`;
          if (framing === 'length') return Buffer.concat([Buffer.from(`${head}Content-Length: ${body.length}\r\n\r\n`), body]);
          if (framing === 'chunked') return Buffer.concat([Buffer.from(`${head}Transfer-Encoding: chunked\r\n\r\n`), chunked(parts)]);
          return Buffer.from(`${head}\r\n`);
        }),
      );
      const all = expected.join('');
      const answer = await exchange(server.path, split(bytes, cuts), { complete: (text) => text.length >= all.length });
      assert.equal(answer, all);
    }),
    { numRuns: 60 },
  );
  assert.deepEqual(server.failures, []);
});

/** Answers a call starting `early` at once, its body unread; echoes any other. */
const earlyOrEcho: StoreHandler = async (request, response) => {
  if (!request.call?.startsWith('early')) return echo(request, response);
  response.writeHead(200, ['x-early', request.call, 'content-length', '0']);
  response.end();
};

test(
  'a request answered before its body ended keeps its connection: the rest of the body is dropped and the next request answered',
  { timeout: 60_000 },
  async (t) => {
    const server = await start(t, earlyOrEcho);
    const part = fc.uint8Array({ minLength: 1, maxLength: 3000 }).map((bytes) => Buffer.from(bytes));
    const request = fc.tuple(
      fc.boolean(),
      fc.constantFrom('length', 'chunked'),
      fc.array(part, { minLength: 1, maxLength: 4 }),
      fc.stringMatching(/^[a-z]{1,10}$/),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 10 }), async (requests, cuts) => {
        const expected: string[] = [];
        const bytes = Buffer.concat(
          requests.map(([early, framing, parts, name]) => {
            const call = early ? `early-${name}` : name;
            const body = Buffer.concat(parts);
            const length = framing === 'chunked' ? 'chunked' : body.length;
            expected.push(
              early
                ? `HTTP/1.1 200 OK\r\nx-early: ${call}\r\ncontent-length: 0\r\n\r\n`
                : `HTTP/1.1 200 OK\r\nx-echo-call: ${call}\r\nx-echo-length: ${length}\r\ncontent-length: ${body.length}\r\n\r\n${body.toString('latin1')}`,
            );
            const head = `POST / HTTP/1.1\r\nx-store-call: ${call}\r\n`;
            if (framing === 'length') return Buffer.concat([Buffer.from(`${head}content-length: ${body.length}\r\n\r\n`), body]);
            return Buffer.concat([Buffer.from(`${head}transfer-encoding: chunked\r\n\r\n`), chunked(parts)]);
          }),
        );
        const all = expected.join('');
        const answer = await exchange(server.path, split(bytes, cuts), { complete: (text) => text.length >= all.length });
        assert.equal(answer, all);
      }),
      { numRuns: 60 },
    );
    assert.deepEqual(server.failures, []);
  },
);

test(
  'after an early answer, a body over the lingering bound, one that stops coming or one malformed closes the connection, the answer intact',
  { timeout: 30_000 },
  async (t) => {
    const server = await start(t, earlyOrEcho);
    const answer = 'HTTP/1.1 200 OK\r\nx-early: early\r\ncontent-length: 0\r\n\r\n';
    const next = Buffer.from('POST / HTTP/1.1\r\nx-store-call: next\r\n\r\n');
    // The body is LINGER_BYTES and a bit more: the connection closes before the request that follows it.
    const length = LINGER_BYTES + 65_536;
    const huge = await exchange(server.path, [
      Buffer.from(`POST / HTTP/1.1\r\nx-store-call: early\r\ncontent-length: ${length}\r\n\r\n`),
      ...Array.from({ length: length / 65_536 }, () => Buffer.alloc(65_536, 0x61)),
      next,
    ]);
    assert.equal(huge, answer);
    // A body that stops coming: closed once LINGER_MS has passed.
    const started = performance.now();
    const stalled = await exchange(server.path, [Buffer.from('POST / HTTP/1.1\r\nx-store-call: early\r\ncontent-length: 100\r\n\r\nonly part')]);
    const closedMs = performance.now() - started;
    assert.equal(stalled, answer);
    assert.ok(closedMs >= LINGER_MS - 50 && closedMs < LINGER_MS + 2_000, `closed after ${Math.round(closedMs)} ms`);
    // A chunked body that turns malformed while it is dropped (sent once the answer came): the connection closes, the answer intact.
    const malformed = await exchange(server.path, [Buffer.from('POST / HTTP/1.1\r\nx-store-call: early\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n')], {
      onceAnswered: Buffer.concat([Buffer.from('zz\r\nnot a chunk\r\n'), next]),
    });
    assert.equal(malformed, answer);
    assert.deepEqual(server.failures, []);
  },
);

test('malformed requests are answered 400 (431 for a head over the limit) and their connection closed', { timeout: 30_000 }, async (t) => {
  const server = await start(t);
  const bad = [
    'GET\r\n\r\n',
    'GET / HTTP/2.0\r\n\r\n',
    'GET / HTTP/1.1\r\nno colon\r\n\r\n',
    'GET / HTTP/1.1\r\nbad name: x\r\n\r\n',
    'GET / HTTP/1.1\r\nx: a\u0001b\r\n\r\n',
    'POST / HTTP/1.1\r\ncontent-length: x\r\n\r\n',
    'POST / HTTP/1.1\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n',
    'POST / HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n',
    'POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n',
    'POST / HTTP/1.1\r\nx-store-call: a\r\nx-store-call: b\r\n\r\n',
  ];
  for (const text of bad) {
    const answer = await exchange(server.path, [Buffer.from(text, 'latin1')]);
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\nconnection: close\r\n/, JSON.stringify(text));
  }
  const huge = await exchange(server.path, [Buffer.from(`GET / HTTP/1.1\r\nx: ${'a'.repeat(MAX_HEAD_BYTES)}`)]);
  assert.match(huge, /^HTTP\/1\.1 431 /);
  // A malformed chunked body, once the handler has started: the connection closes (the handler's body read fails).
  const badChunk = await exchange(server.path, [Buffer.from('POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n')]);
  assert.equal(badChunk, '');
  assert.deepEqual(server.failures, []);
});

test(
  "a body cut off by the client fails the handler's read; a handler that throws closes its connection and is reported; the server lives on",
  { timeout: 30_000 },
  async (t) => {
    let failedRead: Error | undefined;
    let aborted = false;
    const server = await start(t, async (request, response) => {
      if (request.call === 'throw') throw new Error('handler bug');
      try {
        for (;;) if ((await request.body.next()).done) break;
      } catch (error) {
        failedRead = error as Error;
        aborted = request.aborted;
        return;
      }
      response.writeHead(200, ['content-length', '0']);
      response.end();
    });
    await exchange(server.path, [Buffer.from('POST / HTTP/1.1\r\ncontent-length: 100\r\n\r\nonly part')], { endAfter: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.match(failedRead!.message, /closed before the request body ended/);
    assert.equal(aborted, true);
    assert.equal(await exchange(server.path, [Buffer.from('POST / HTTP/1.1\r\nx-store-call: throw\r\n\r\n')]), '');
    assert.match(String(server.failures[0]), /handler bug/);
    const fine = await exchange(server.path, [Buffer.from('POST / HTTP/1.1\r\nconnection: close\r\n\r\n')]);
    assert.equal(fine, 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  },
);
