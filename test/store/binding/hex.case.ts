/** The binding's hex helpers (src/store/binding/hex.ts), which stand in for Node's Buffer inside workerd. */
import { bytesToHex, hexToBytes } from '../../../src/store/binding/hex.ts';
import { assert, type BindingCases } from './case-kit.ts';

export const CASES: BindingCases = {
  'bytesToHex: two lowercase digits a byte, for every byte value': () => {
    assert.equal(bytesToHex(new Uint8Array(0)), '');
    assert.equal(bytesToHex(Uint8Array.of(0, 1, 15, 16, 127, 128, 254, 255)), '00010f107f80feff');
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    const digits = bytesToHex(every);
    assert.equal(digits.length, 512);
    for (let i = 0; i < 256; i++) assert.equal(digits.slice(2 * i, 2 * i + 2), i.toString(16).padStart(2, '0'), `byte ${i}`);
    assert.equal(bytesToHex(every.subarray(250, 252)), 'fafb', 'a view: its own window only');
  },
  'hexToBytes: either case, back to the same bytes; a fresh ArrayBuffer of exactly those bytes': () => {
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    assert.deepEqual(hexToBytes(bytesToHex(every)), every);
    assert.deepEqual(hexToBytes(bytesToHex(every).toUpperCase()), every);
    assert.deepEqual(hexToBytes('aBcD'), Uint8Array.of(0xab, 0xcd));
    assert.deepEqual(hexToBytes(''), new Uint8Array(0));
    const bytes = hexToBytes('0102');
    assert.equal(bytes.buffer.byteLength, 2);
    assert.ok(bytes.buffer instanceof ArrayBuffer);
  },
  'hexToBytes: an odd length or a character that is not a hex digit is a TypeError': () => {
    assert.throws(() => hexToBytes('abc'), { name: 'TypeError', message: 'A hex string has an even number of digits, not 3.' });
    for (const bad of ['0g', 'g0', 'zz', '0 ', ' 0', '-1', '0x', '/0', ':0', '@0', 'G0', '`0', '{0', 'é0']) {
      assert.throws(() => hexToBytes(bad), { name: 'TypeError', message: `${JSON.stringify(bad)} is not a hex byte.` }, bad);
    }
    assert.throws(() => hexToBytes('00ff0Z'), { name: 'TypeError', message: '"0Z" is not a hex byte.' });
  },
};
