/** The WebSocket frame parser: any frame, masked or not, in any split, reads back as sent; oversized ones are refused from their header alone. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { frame, parseFrame } from '../../src/core/http/websocket.ts';

/** A client's frame: the server's framing with the mask bit and key added when `mask` is given. */
function clientFrame(opcode: number, payload: Buffer, mask: Buffer | undefined): Buffer {
  const plain = frame(opcode, payload);
  if (!mask) return plain;
  const headLength = plain.length - payload.length;
  const head = Buffer.from(plain.subarray(0, headLength));
  head[1] = head[1]! | 0x80;
  const body = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([head, mask, body]);
}

test('a frame of any size (the 7-, 16- and 64-bit lengths), masked or not, parses back whole; every shorter prefix is incomplete', { timeout: 60_000 }, () => {
  fc.assert(fc.property(
    fc.constantFrom(0x1, 0x2, 0x8, 0x9, 0xa),
    fc.oneof(fc.uint8Array({ maxLength: 130 }), fc.uint8Array({ minLength: 65_530, maxLength: 65_540 })),
    fc.option(fc.uint8Array({ minLength: 4, maxLength: 4 }), { nil: undefined }),
    fc.uint8Array({ maxLength: 8 }),
    (opcode, bytes, mask, trailing) => {
      const payload = Buffer.from(bytes);
      const encoded = clientFrame(opcode, payload, mask ? Buffer.from(mask) : undefined);
      const parsed = parseFrame(Buffer.concat([encoded, Buffer.from(trailing)]), 1 << 20);
      assert.ok(typeof parsed === 'object');
      assert.deepEqual([parsed.fin, parsed.opcode, parsed.length], [true, opcode, encoded.length]);
      assert.ok(parsed.payload.equals(payload));
      for (const cut of [0, 1, 2, 3, encoded.length - 1]) if (cut >= 0 && cut < encoded.length) assert.equal(parseFrame(encoded.subarray(0, cut), 1 << 20), 'incomplete');
    },
  ), { numRuns: 200 });
});

test('a frame over the limit is refused from its header, before its payload arrives', { timeout: 10_000 }, () => {
  assert.equal(parseFrame(Buffer.from([0x81, 126, 0x01, 0x00]), 255), 'too-large');
  const huge = Buffer.from([0x81, 127, 0, 0, 0, 1, 0, 0, 0, 0]);
  assert.equal(parseFrame(huge, 64 * 1024), 'too-large');
  assert.equal(parseFrame(Buffer.from([0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), 64 * 1024), 'too-large');
});
