/** The splitter of workerd's output: the same lines however the bytes are chunked, none over the cap, every byte accounted for, and a long line never held whole. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LineSplitter, utf8Prefix } from '../../../src/runtime/workerd/output-lines.ts';

interface Line {
  text: string;
  cutBytes: number;
}

/** Feeds `bytes` split at `cuts`, each piece in a buffer of its own that is scribbled over once fed (as a reused read buffer would be). */
function split(bytes: Buffer, cuts: number[], max: number): Line[] {
  const lines: Line[] = [];
  const splitter = new LineSplitter(max, (text, cutBytes) => lines.push({ text, cutBytes }));
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const point of [...points, bytes.length]) {
    const piece = Buffer.from(bytes.subarray(from, point));
    splitter.push(piece);
    piece.fill(0x21);
    from = point;
  }
  splitter.end();
  return lines;
}

/** Raw lines of `bytes`: split at LF, a CRLF's CR not part of its line, a last line without LF still a line. */
function rawLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  for (let newline = bytes.indexOf(0x0a); newline !== -1; newline = bytes.indexOf(0x0a, start)) {
    lines.push(bytes.subarray(start, newline));
    start = newline + 1;
  }
  if (start < bytes.length) lines.push(bytes.subarray(start));
  return lines.map((line) => (line.at(-1) === 0x0d ? line.subarray(0, -1) : line));
}

/** Output with many newlines, CRs, long runs and multi-byte characters. */
const textOutput = fc
  .array(fc.oneof(fc.constantFrom('\n', '\r\n', '\r', 'é', '€', '😀', 'x'.repeat(50)), fc.string({ unit: 'grapheme', maxLength: 20 })), { maxLength: 60 })
  .map((parts) => Buffer.from(parts.join(''), 'utf8'));

test('arbitrary chunking never changes the lines, never yields one over the cap, and loses no byte', { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(textOutput, fc.array(fc.nat(), { maxLength: 30 }), fc.integer({ min: 4, max: 64 }), (bytes, cuts, max) => {
      const lines = split(bytes, cuts, max);
      assert.deepEqual(lines, split(bytes, [], max), 'the same lines as from one chunk');
      const raw = rawLines(bytes);
      assert.equal(lines.length, raw.length);
      for (const [index, line] of lines.entries()) {
        const kept = Buffer.from(line.text, 'utf8');
        assert.ok(kept.length <= max, `${kept.length} bytes > ${max}`);
        // Valid UTF-8 in: each line is its raw line's start, cut at a character boundary, and the rest is counted.
        assert.ok(raw[index]!.subarray(0, kept.length).equals(kept));
        assert.equal(kept.length + line.cutBytes, raw[index]!.length);
        assert.ok(line.cutBytes === 0 || raw[index]!.length > max);
        assert.ok(line.cutBytes === 0 || max - kept.length < 4, 'cut no more than a partial character below the cap');
      }
    }),
    { numRuns: 500 },
  );
});

test('bytes that are not UTF-8 never make a line longer than the cap', { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(), { maxLength: 20 }), fc.integer({ min: 4, max: 40 }), (bytes, cuts, max) => {
      const input = Buffer.from(bytes);
      const lines = split(input, cuts, max);
      assert.deepEqual(lines, split(input, [], max));
      assert.equal(lines.length, rawLines(input).length);
      for (const line of lines) assert.ok(Buffer.byteLength(line.text) <= max, `${Buffer.byteLength(line.text)} bytes > ${max}`);
    }),
    { numRuns: 500 },
  );
});

test('a 100 MB line in 64 KiB chunks: one line of the cap, the rest counted, nothing held', { timeout: 30_000 }, () => {
  const lines: Line[] = [];
  const splitter = new LineSplitter(4096, (text, cutBytes) => lines.push({ text, cutBytes }));
  const chunk = Buffer.alloc(64 * 1024, 'y');
  const total = 100 * 1024 * 1024;
  const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  for (let sent = 0; sent < total; sent += chunk.length) splitter.push(chunk);
  const heapGrowth = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers - heapBefore;
  splitter.push(Buffer.from('\nnext\n'));
  assert.deepEqual(
    lines.map(({ text, cutBytes }) => ({ length: text.length, cutBytes })),
    [
      { length: 4096, cutBytes: total - 4096 },
      { length: 4, cutBytes: 0 },
    ],
  );
  assert.ok(heapGrowth < 16 * 1024 * 1024, `memory grew by ${heapGrowth} bytes while reading the line`);
});

test('a cut line ends on a character boundary', { timeout: 30_000 }, () => {
  const lines: Line[] = [];
  const splitter = new LineSplitter(5, (text, cutBytes) => lines.push({ text, cutBytes }));
  splitter.push(Buffer.from('ab€€\n'));
  splitter.push(Buffer.from('abcde\r\nabcdef\r\n'));
  splitter.end();
  assert.deepEqual(lines, [
    { text: 'ab€', cutBytes: 3 },
    { text: 'abcde', cutBytes: 0 },
    { text: 'abcde', cutBytes: 1 },
  ]);
  assert.equal(utf8Prefix(Buffer.from('a€'), 3), 1);
  assert.equal(utf8Prefix(Buffer.from('a€'), 4), 4);
  assert.equal(utf8Prefix(Buffer.from('😀'), 3), 0);
});
