import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { createCrc32, createCrc32c, createCrc64Nvme, type Crc } from '../../src/core/crypto/crc.ts';
import { combineCrcs, type CombinableCrc } from '../../src/core/crypto/crc-combine.ts';

const CRCS: Array<[CombinableCrc, () => Crc]> = [
  ['crc32', createCrc32],
  ['crc32c', createCrc32c],
  ['crc64nvme', createCrc64Nvme],
];

function crcOf(create: () => Crc, data: Uint8Array): Buffer {
  const crc = create();
  crc.update(data);
  return crc.digest();
}

test('combined CRCs of parts equal the CRC of their concatenation, for any parts (empty ones too)', { timeout: 60_000 }, () => {
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 6 }), (parts) => {
      for (const [name, create] of CRCS) {
        const whole = crcOf(create, Buffer.concat(parts));
        const combined = combineCrcs(
          name,
          parts.map((part) => ({ crc: crcOf(create, part), length: part.length })),
        );
        assert.equal(combined.toString('hex'), whole.toString('hex'), name);
      }
    }),
    { numRuns: 200 },
  );
});

test('combining a 5 MiB part with others (lengths past 2^22 bits) matches the whole', { timeout: 30_000 }, () => {
  const parts = [randomBytes(1000), randomBytes(0), randomBytes(5 * 1024 * 1024 + 3), randomBytes(7)];
  for (const [name, create] of CRCS) {
    const combined = combineCrcs(
      name,
      parts.map((part) => ({ crc: crcOf(create, part), length: part.length })),
    );
    assert.equal(combined.toString('hex'), crcOf(create, Buffer.concat(parts)).toString('hex'), name);
  }
});

test('an empty chunk fed to CRC-32 changes nothing (node:zlib answers 0 for some empty buffers)', { timeout: 10_000 }, () => {
  const crc = createCrc32();
  crc.update(Buffer.from('hello'));
  crc.update(randomBytes(0));
  crc.update(new Uint8Array(0));
  assert.equal(crc.digest().toString('hex'), crcOf(createCrc32, Buffer.from('hello')).toString('hex'));
});
