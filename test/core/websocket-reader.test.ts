/**
 * The WebSocket reader (RFC 6455, server side): any valid client frames, masked, in any split,
 * read back as the messages sent (fragments joined, control frames between them); every frame the
 * RFC says must fail the connection fails it with the RFC's code (1002, 1007, 1009), after the
 * input before it and with nothing after; no input whatsoever makes it throw.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isSendableCloseCode, WebSocketReader, type WebSocketInput } from '../../src/core/http/websocket-reader.ts';
import { clientFrame, closePayload, type ClientFrame } from '../helpers/websocket-client.ts';

const MAX = 64 * 1024;

/** Everything the reader makes of `bytes` pushed in pieces cut at `cuts` (fractions of the length). */
function readAll(bytes: Buffer, cuts: number[] = [], options: { maxMessageBytes?: number; unmaskedFirstText?: boolean } = {}): WebSocketInput[] {
  const reader = new WebSocketReader({ maxMessageBytes: options.maxMessageBytes ?? MAX, ...(options.unmaskedFirstText ? { unmaskedFirstText: true } : {}) });
  const points = [...new Set(cuts.map((cut) => Math.floor(cut * bytes.length)))].sort((a, b) => a - b);
  const inputs: WebSocketInput[] = [];
  let from = 0;
  for (const to of [...points, bytes.length]) {
    reader.push(bytes.subarray(from, to));
    from = to;
    for (let input = reader.next(); input !== undefined; input = reader.next()) inputs.push(input);
  }
  return inputs;
}

const cutsArb = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 });
const maskArb = fc.uint8Array({ minLength: 4, maxLength: 4 }).map((bytes) => Buffer.from(bytes));
const bytesArb = (maxLength: number) => fc.uint8Array({ maxLength }).map((bytes) => Buffer.from(bytes));
const controlArb = fc.record({ opcode: fc.constantFrom(0x9, 0xa), payload: bytesArb(125) });

/** One message as the client sends it: its frames (a control frame may sit between fragments) and what the reader yields for it. */
const messageArb = fc.oneof(
  fc
    .record({
      text: fc.string({ unit: 'grapheme', maxLength: 200 }),
      pieces: fc.integer({ min: 1, max: 4 }),
      between: fc.option(controlArb, { nil: undefined }),
    })
    .map(({ text, pieces, between }) => {
      // Cut by bytes, so a character may be split across fragments: only the whole message must be UTF-8.
      const data = Buffer.from(text, 'utf8');
      const size = Math.ceil(data.length / pieces) || 1;
      const parts: Buffer[] = [];
      for (let at = 0; at < data.length || parts.length === 0; at += size) parts.push(data.subarray(at, at + size));
      const frames: ClientFrame[] = parts.map((payload, i) => ({ opcode: i === 0 ? 0x1 : 0x0, fin: i === parts.length - 1, payload }));
      const expected: WebSocketInput[] = [];
      if (between && frames.length > 1) {
        frames.splice(1, 0, between);
        expected.push({ kind: between.opcode === 0x9 ? 'ping' : 'pong', data: between.payload });
      }
      expected.push({ kind: 'text', data });
      return { frames, expected };
    }),
  fc
    .oneof(
      bytesArb(300),
      bytesArb(70_000).filter((bytes) => bytes.length <= MAX),
    )
    .map((data) => ({ frames: [{ opcode: 0x2, payload: data }] as ClientFrame[], expected: [{ kind: 'binary', data }] as WebSocketInput[] })),
  controlArb.map(({ opcode, payload }) => ({
    frames: [{ opcode, payload }],
    expected: [{ kind: opcode === 0x9 ? 'ping' : 'pong', data: payload }] as WebSocketInput[],
  })),
);

/** A close frame with a code any client may send and a UTF-8 reason, and what the reader yields for it. */
const closeArb = fc
  .record({
    code: fc.oneof(fc.constantFrom(1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014), fc.integer({ min: 3000, max: 4999 })),
    reason: fc.string({ maxLength: 30 }).filter((reason) => Buffer.byteLength(reason) <= 123),
  })
  .map(({ code, reason }) => {
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    return {
      frame: { opcode: 0x8, payload: Buffer.concat([payload, Buffer.from(reason, 'utf8')]) },
      expected: { kind: 'close', code, reason } as WebSocketInput,
    };
  });

function encode(frames: ClientFrame[], mask: Buffer): Buffer {
  return Buffer.concat(frames.map((each) => clientFrame({ mask, ...each })));
}

test(
  'valid client frames, masked, in any split: messages joined from fragments with control frames between, then a close with its reason',
  { timeout: 120_000 },
  () => {
    fc.assert(
      fc.property(fc.array(messageArb, { maxLength: 5 }), fc.option(closeArb, { nil: undefined }), maskArb, cutsArb, (messages, close, mask, cuts) => {
        const frames = [...messages.flatMap((message) => message.frames), ...(close ? [close.frame] : [])];
        const expected = [...messages.flatMap((message) => message.expected), ...(close ? [close.expected] : [])];
        assert.deepEqual(readAll(encode(frames, mask), cuts), expected);
      }),
      { numRuns: 300 },
    );
  },
);

test("the RFC's examples (§5.7): a fragmented text with a ping between, and a close with a reason, read as sent", { timeout: 10_000 }, () => {
  const mask = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);
  const bytes = encode(
    [
      { opcode: 0x1, fin: false, payload: Buffer.from('Hel') },
      { opcode: 0x9, payload: Buffer.from('Hello') },
      { opcode: 0x0, fin: true, payload: Buffer.from('lo') },
      { opcode: 0x8, payload: Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye ✓')]) },
    ],
    mask,
  );
  assert.deepEqual(readAll(bytes), [
    { kind: 'ping', data: Buffer.from('Hello') },
    { kind: 'text', data: Buffer.from('Hello') },
    { kind: 'close', code: 1000, reason: 'bye ✓' },
  ]);
  // The RFC's own masked "Hello" (§5.7), byte for byte; and a close with no code.
  assert.deepEqual(readAll(Buffer.from([0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58])), [{ kind: 'text', data: Buffer.from('Hello') }]);
  assert.deepEqual(readAll(clientFrame({ opcode: 0x8, payload: Buffer.alloc(0) })), [{ kind: 'close', code: null, reason: '' }]);
});

/** Text that is not UTF-8: a bad sequence somewhere in valid text. */
const INVALID_UTF8 = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]];
const invalidTextArb = fc
  .record({ before: fc.string({ maxLength: 20 }), bad: fc.constantFrom(...INVALID_UTF8), after: fc.string({ maxLength: 20 }) })
  .map(({ before, bad, after }) => Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)]));

/** Each must-fail case: the bad frames, and the code the RFC gives it. */
const MUST_FAIL: Record<string, { code: number; frames: fc.Arbitrary<ClientFrame[]> }> = {
  'control frame payload over 125 bytes': {
    code: 1002,
    frames: fc
      .record({
        opcode: fc.constantFrom(0x8, 0x9, 0xa),
        payload: fc.integer({ min: 126, max: 2000 }).map((n) => closePayload(1000, Buffer.alloc(n - 2, 0x61))),
      })
      .map((f) => [f]),
  },
  'fragmented control frame': {
    code: 1002,
    frames: fc.record({ opcode: fc.constantFrom(0x8, 0x9, 0xa), payload: fc.constant(closePayload(1000)), fin: fc.constant(false) }).map((f) => [f]),
  },
  'invalid UTF-8 text': { code: 1007, frames: invalidTextArb.map((payload) => [{ opcode: 0x1, payload }]) },
  'invalid UTF-8 text across fragments': {
    code: 1007,
    frames: fc.tuple(invalidTextArb, fc.double({ min: 0, max: 1, noNaN: true })).map(([payload, at]) => {
      const cut = Math.floor(at * payload.length);
      return [
        { opcode: 0x1, fin: false, payload: payload.subarray(0, cut) },
        { opcode: 0x0, payload: payload.subarray(cut) },
      ];
    }),
  },
  'invalid UTF-8 close reason': {
    code: 1007,
    frames: invalidTextArb.filter((reason) => reason.length <= 123).map((reason) => [{ opcode: 0x8, payload: closePayload(1000, reason) }]),
  },
  'RSV bits without an extension': {
    code: 1002,
    frames: fc
      .record({ rsv: fc.integer({ min: 1, max: 7 }), opcode: fc.constantFrom(0x1, 0x2, 0x9), payload: bytesArb(10).map((b) => Buffer.from(b.toString('hex'))) })
      .map((f) => [f]),
  },
  'reserved opcode': {
    code: 1002,
    frames: fc.record({ opcode: fc.constantFrom(3, 4, 5, 6, 7, 0xb, 0xc, 0xd, 0xe, 0xf), payload: bytesArb(10) }).map((f) => [f]),
  },
  'continuation without a start': {
    code: 1002,
    frames: fc.record({ opcode: fc.constant(0x0), fin: fc.boolean(), payload: fc.constant(Buffer.from('x')) }).map((f) => [f]),
  },
  'new data frame while a fragmented message is open': {
    code: 1002,
    frames: fc.constantFrom(0x1, 0x2).map((opcode) => [
      { opcode: 0x1, fin: false, payload: Buffer.from('a') },
      { opcode, payload: Buffer.from('b') },
    ]),
  },
  'unmasked client frame': {
    code: 1002,
    frames: fc.record({ opcode: fc.constantFrom(0x1, 0x2, 0x8, 0x9, 0xa), payload: fc.constant(closePayload(1000)), mask: fc.constant(null) }).map((f) => [f]),
  },
  'close code no endpoint may send': {
    code: 1002,
    frames: fc
      .oneof(
        fc.constantFrom(0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535),
        fc.integer({ min: 0, max: 65535 }).filter((code) => !isSendableCloseCode(code)),
      )
      .map((code) => [{ opcode: 0x8, payload: closePayload(code) }]),
  },
  'close frame of 1 byte': { code: 1002, frames: fc.constant([{ opcode: 0x8, payload: Buffer.from([0x03]) }]) },
  'message over the limit, in one frame': {
    code: 1009,
    frames: fc.integer({ min: MAX + 1, max: MAX + 100 }).map((n) => [{ opcode: 0x2, payload: Buffer.alloc(n) }]),
  },
  'message over the limit, in fragments': {
    code: 1009,
    frames: fc.integer({ min: 2, max: 5 }).map((count) =>
      Array.from({ length: count }, (_, i) => ({
        opcode: i === 0 ? 0x2 : 0x0,
        fin: i === count - 1,
        payload: Buffer.alloc(Math.ceil((MAX + 1) / count) + 1),
      })),
    ),
  },
};

for (const [name, { code, frames }] of Object.entries(MUST_FAIL)) {
  test(`must fail: ${name} -> ${code}, after the input before it and with nothing after`, { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 3 }),
        frames,
        fc.array(messageArb, { maxLength: 2 }),
        maskArb,
        cutsArb,
        (before, bad, after, mask, cuts) => {
          const bytes = encode([...before.flatMap((m) => m.frames), ...bad, ...after.flatMap((m) => m.frames)], mask);
          const inputs = readAll(bytes, cuts);
          const expected = before.flatMap((m) => m.expected);
          assert.deepEqual(inputs.slice(0, expected.length), expected);
          assert.equal(inputs.length, expected.length + 1, JSON.stringify(inputs.slice(expected.length)));
          const last = inputs.at(-1)!;
          assert.equal(last.kind, 'fail');
          assert.equal(last.kind === 'fail' && last.code, code);
        },
      ),
      { numRuns: 100 },
    );
  });
}

test(
  'an oversized message is refused from its header, before its payload arrives; a 64-bit length with its top bit set is a protocol error',
  { timeout: 10_000 },
  () => {
    assert.deepEqual(readAll(Buffer.from([0x82, 0xfe, 0x01, 0x00]), [], { maxMessageBytes: 255 }), [
      { kind: 'fail', code: 1009, reason: 'message over 255 bytes' },
    ]);
    assert.deepEqual(
      readAll(Buffer.from([0x82, 0xff, 0, 0, 0, 1, 0, 0, 0, 0])).map((input) => input.kind === 'fail' && input.code),
      [1009],
    );
    assert.deepEqual(
      readAll(Buffer.from([0x82, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])).map((input) => input.kind === 'fail' && input.code),
      [1002],
    );
    // A declared 60 KiB frame holds nothing beyond what arrived: the reader waits for the rest.
    const reader = new WebSocketReader({ maxMessageBytes: MAX });
    reader.push(clientFrame({ opcode: 0x2, payload: Buffer.alloc(60 * 1024) }).subarray(0, 100));
    assert.equal(reader.next(), undefined);
    assert.equal(reader.bufferedBytes, 100);
  },
);

test("wrangler's quirk: the first frame may be unmasked when it is a whole text message, and only then", { timeout: 10_000 }, () => {
  const settings = clientFrame({ opcode: 0x1, payload: Buffer.from('{"debug":false}'), mask: null });
  assert.deepEqual(readAll(settings, [], { unmaskedFirstText: true }), [{ kind: 'text', data: Buffer.from('{"debug":false}') }]);
  assert.deepEqual(
    readAll(settings).map((input) => input.kind === 'fail' && input.code),
    [1002],
    'not without the option',
  );
  const twice = Buffer.concat([settings, settings]);
  assert.deepEqual(
    readAll(twice, [], { unmaskedFirstText: true }).map((input) => (input.kind === 'fail' ? input.code : input.kind)),
    ['text', 1002],
  );
  for (const first of [
    { opcode: 0x2, payload: Buffer.from('x') },
    { opcode: 0x9, payload: Buffer.from('x') },
    { opcode: 0x1, fin: false, payload: Buffer.from('x') },
  ]) {
    assert.deepEqual(
      readAll(clientFrame({ ...first, mask: null }), [], { unmaskedFirstText: true }).map((input) => input.kind === 'fail' && input.code),
      [1002],
    );
  }
});

test(
  'any bytes at all, in any split: the reader never throws, fails with 1002, 1007 or 1009 at most once, and yields nothing after a close or a failure',
  { timeout: 120_000 },
  () => {
    const garbage = fc.oneof(
      bytesArb(400),
      // Valid frames with a few bytes flipped: closer to real attacks than noise.
      fc
        .tuple(fc.array(messageArb, { maxLength: 4 }), maskArb, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { maxLength: 4 }))
        .map(([messages, mask, flips]) => {
          const bytes = encode(
            messages.flatMap((m) => m.frames),
            mask,
          );
          for (const [at, bits] of flips) if (bytes.length > 0) bytes[at % bytes.length]! ^= bits;
          return bytes;
        }),
    );
    fc.assert(
      fc.property(garbage, cutsArb, fc.boolean(), (bytes, cuts, quirk) => {
        const inputs = readAll(bytes, cuts, { unmaskedFirstText: quirk });
        const ends = inputs.filter((input) => input.kind === 'fail' || input.kind === 'close');
        assert.ok(ends.length <= 1);
        if (ends.length === 1) assert.equal(inputs.at(-1), ends[0]);
        for (const input of inputs) {
          if (input.kind === 'fail') assert.ok([1002, 1007, 1009].includes(input.code));
          if (input.kind === 'text') assert.ok(Buffer.from(input.data.toString('utf8')).equals(input.data), 'text is UTF-8');
          if (input.kind === 'ping' || input.kind === 'pong') assert.ok(input.data.length <= 125);
        }
      }),
      { numRuns: 1000 },
    );
  },
);
