import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { createCrc32, createCrc32c, createCrc64Nvme, createTableCrc32, CRC32_POLY, type Crc } from '../../src/core/crypto/crc.ts';

/** The bit-at-a-time definition of a reflected CRC with all-ones init and final xor, on BigInt. */
function referenceCrc(width: 32 | 64, poly: bigint, data: Uint8Array): string {
  const mask = (1n << BigInt(width)) - 1n;
  let crc = mask;
  for (const byte of data) {
    crc ^= BigInt(byte);
    for (let bit = 0; bit < 8; bit++) crc = crc & 1n ? (crc >> 1n) ^ poly : crc >> 1n;
  }
  return ((crc ^ mask) & mask).toString(16).padStart(width / 4, '0');
}

const ALGORITHMS: Array<[string, () => Crc, (data: Uint8Array) => string]> = [
  ['CRC-32', createCrc32, (data) => referenceCrc(32, 0xedb88320n, data)],
  ['CRC-32 (table)', () => createTableCrc32(CRC32_POLY), (data) => referenceCrc(32, 0xedb88320n, data)],
  ['CRC-32C', createCrc32c, (data) => referenceCrc(32, 0x82f63b78n, data)],
  ['CRC-64/NVME', createCrc64Nvme, (data) => referenceCrc(64, 0x9a6c9329ac4bc9b5n, data)],
];

function digestHex(create: () => Crc, chunks: Uint8Array[]): string {
  const crc = create();
  for (const chunk of chunks) crc.update(chunk);
  return crc.digest().toString('hex');
}

test('check values of the CRC catalogue', { timeout: 10_000 }, () => {
  const check = Buffer.from('123456789');
  assert.equal(digestHex(createCrc32, [check]), 'cbf43926');
  assert.equal(
    digestHex(() => createTableCrc32(CRC32_POLY), [check]),
    'cbf43926',
  );
  assert.equal(digestHex(createCrc32c, [check]), 'e3069283');
  assert.equal(digestHex(createCrc64Nvme, [check]), 'ae8b14860a799888');
  assert.equal(digestHex(createCrc64Nvme, []), '0000000000000000');
});

test('any bytes in any chunking give the bit-at-a-time CRC', { timeout: 10_000 }, () => {
  for (const [name, create, reference] of ALGORITHMS) {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(300), { maxLength: 6 }), (bytes, cuts) => {
        const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let from = 0;
        for (const point of [...points, bytes.length]) {
          chunks.push(bytes.subarray(from, point));
          from = point;
        }
        assert.equal(digestHex(create, chunks), reference(bytes), name);
      }),
      { numRuns: 200 },
    );
  }
});
