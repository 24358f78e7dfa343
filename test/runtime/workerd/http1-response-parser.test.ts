/** The edge's parser of workerd's answers: exact on every framing however the bytes are split, and strict on anything else. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MAX_HEAD_BYTES, ResponseParseError, ResponseParser } from '../../../src/runtime/workerd/http1-response-parser.ts';

interface Parsed {
  status: number;
  statusText: string;
  headers: string[];
  body: Buffer;
  ends: boolean[];
}

/** Feeds `bytes` split at `cuts`, each piece in a buffer of its own that is scribbled over once fed (as reused read buffers are). */
function parse(bytes: Buffer, cuts: number[], method = 'GET', finish = false): Parsed {
  const parsed: Parsed = { status: 0, statusText: '', headers: [], body: Buffer.alloc(0), ends: [] };
  const bodies: Buffer[] = [];
  const parser = new ResponseParser({
    head(status, statusText, headers) {
      Object.assign(parsed, { status, statusText, headers });
    },
    body(chunk) {
      assert.equal(parsed.ends.length, 0, 'no body after the end');
      bodies.push(Buffer.from(chunk));
    },
    end(reusable) {
      parsed.ends.push(reusable);
    },
  });
  parser.expect(method);
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...points, bytes.length]) {
    if (to <= from) continue;
    const piece = Buffer.from(bytes.subarray(from, to));
    parser.feed(piece);
    piece.fill(0x58);
    from = to;
  }
  if (finish) parser.finish();
  parsed.body = Buffer.concat(bodies);
  return parsed;
}

const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/).filter((name) => !['content-length', 'transfer-encoding', 'connection'].includes(name));
const headerValue = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,40}[\x21-\x7e])?$/);
const headers = fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 });
const body = fc.uint8Array({ maxLength: 3000 }).map((bytes) => Buffer.from(bytes));
const cuts = fc.array(fc.nat(), { maxLength: 12 });

function head(status: number, fields: Array<[string, string]>, extra: string): string {
  return `HTTP/1.1 ${status} Some Reason\r\n${fields.map(([name, value]) => `${name}: ${value}\r\n`).join('')}${extra}\r\n`;
}

test('a Content-Length answer: its head and exactly its body, however the bytes are split, and the connection reusable', { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(headers, body, cuts, (fields, bytes, at) => {
      const raw = Buffer.concat([Buffer.from(head(200, fields, `Content-Length: ${bytes.length}\r\n`), 'latin1'), bytes]);
      const parsed = parse(raw, at);
      assert.equal(parsed.status, 200);
      assert.equal(parsed.statusText, 'Some Reason');
      assert.deepEqual(parsed.headers, [...fields.flat(), 'Content-Length', String(bytes.length)]);
      assert.deepEqual(parsed.body, bytes);
      assert.deepEqual(parsed.ends, [true]);
    }),
    { numRuns: 300 },
  );
});

test('a chunked answer (extensions, trailers): exactly its body, however the bytes are split', { timeout: 30_000 }, () => {
  const pieces = fc.array(
    fc.uint8Array({ minLength: 1, maxLength: 500 }).map((bytes) => Buffer.from(bytes)),
    { maxLength: 6 },
  );
  fc.assert(
    fc.property(pieces, fc.boolean(), fc.boolean(), cuts, (parts, extensions, trailers, at) => {
      const encoded = parts.map((part) =>
        Buffer.concat([Buffer.from(`${part.length.toString(16)}${extensions ? ';ext=1' : ''}\r\n`), part, Buffer.from('\r\n')]),
      );
      const raw = Buffer.concat([
        Buffer.from(head(200, [], 'Transfer-Encoding: chunked\r\n')),
        ...encoded,
        Buffer.from(`0\r\n${trailers ? 'x-trailer: yes\r\n' : ''}\r\n`),
      ]);
      const parsed = parse(raw, at);
      assert.deepEqual(parsed.body, Buffer.concat(parts));
      assert.deepEqual(parsed.ends, [true]);
    }),
    { numRuns: 300 },
  );
});

test('an answer without a length runs to the connection end; HEAD, 204 and 304 have no body; interim answers are passed over', { timeout: 10_000 }, () => {
  const closed = parse(Buffer.from('HTTP/1.1 200 OK\r\n\r\nall of it'), [5, 20], 'GET', true);
  assert.deepEqual([closed.body.toString(), closed.ends], ['all of it', [false]]);
  for (const [status, method] of [
    [200, 'HEAD'],
    [204, 'GET'],
    [304, 'GET'],
  ] as const) {
    const parsed = parse(Buffer.from(`HTTP/1.1 ${status} X\r\ncontent-length: 10\r\n\r\n`), [], method);
    assert.deepEqual([parsed.status, parsed.body.length, parsed.ends], [status, 0, [true]]);
  }
  const interim = parse(Buffer.from('HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'), [3, 40]);
  assert.deepEqual([interim.status, interim.body.toString(), interim.headers], [200, 'ok', ['content-length', '2']]);
  const close = parse(Buffer.from('HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 2\r\n\r\nok'), []);
  assert.deepEqual(close.ends, [false]);
  const http10 = parse(Buffer.from('HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok'), []);
  assert.deepEqual(http10.ends, [false]);
});

test('malformed answers are errors, never a crash or a wrong body', { timeout: 10_000 }, () => {
  const bad = [
    'HTTP/2 200 OK\r\n\r\n',
    'HTTP/1.1 20 OK\r\n\r\n',
    'garbage\r\n\r\n',
    'HTTP/1.1 200 OK\r\nno colon\r\n\r\n',
    'HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n',
    'HTTP/1.1 200 OK\r\n folded: x\r\n\r\n',
    'HTTP/1.1 200 OK\r\nx: a\u0001b\r\n\r\n',
    'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n',
    'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokX\r\n',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\nok\r\n',
    'HTTP/1.1 101 Switching Protocols\r\n\r\n',
    'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok-and-more',
  ];
  for (const text of bad) {
    assert.throws(() => parse(Buffer.from(text, 'latin1'), [7]), ResponseParseError, JSON.stringify(text));
  }
  assert.throws(() => parse(Buffer.from(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(MAX_HEAD_BYTES)}\r\n\r\n`), [1000, 30_000]), /over 65536 bytes/);
  assert.throws(() => parse(Buffer.from(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${'0'.repeat(5000)}`), [100]), /too long/);
  // Cut short: the connection ended inside the head or the body.
  assert.throws(() => parse(Buffer.from('HTTP/1.1 200 OK\r\ncontent-le'), [], 'GET', true), /before its response was complete/);
  assert.throws(() => parse(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nabc'), [], 'GET', true), /before its response was complete/);
});

test('any bytes at all: the parser answers or throws its own error, and a body it reports is within what it was fed', { timeout: 30_000 }, () => {
  const prefix = fc.constantFrom(
    'HTTP/1.1 200 OK\r\n',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n',
    'HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\n',
    '',
  );
  fc.assert(
    fc.property(prefix, fc.uint8Array({ maxLength: 300 }), cuts, fc.boolean(), (start, bytes, at, finish) => {
      const raw = Buffer.concat([Buffer.from(start), Buffer.from(bytes)]);
      try {
        const parsed = parse(raw, at, 'GET', finish);
        assert.ok(parsed.body.length <= raw.length);
      } catch (error) {
        assert.ok(error instanceof ResponseParseError, String(error));
      }
    }),
    { numRuns: 1000 },
  );
});
