/**
 * Bytes as lowercase hex and back, with Web APIs only: the binding runs inside workerd, where a
 * script's isolate has no `Buffer` unless the script enables `nodejs_compat` (and even then only
 * from compatibility date 2024-09-23).
 */

const DIGITS = '0123456789abcdef';

/** `bytes` as lowercase hex, two digits a byte. */
export function bytesToHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += DIGITS[byte >> 4]! + DIGITS[byte & 15]!;
  return out;
}

/** The bytes `hex` spells (either case); throws a TypeError for an odd length or a non-hex digit. */
export function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  if (hex.length % 2 !== 0) throw new TypeError(`A hex string has an even number of digits, not ${hex.length}.`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    const high = digitValue(hex.charCodeAt(2 * i));
    const low = digitValue(hex.charCodeAt(2 * i + 1));
    if (high < 0 || low < 0) throw new TypeError(`${JSON.stringify(hex.slice(2 * i, 2 * i + 2))} is not a hex byte.`);
    out[i] = high * 16 + low;
  }
  return out;
}

function digitValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  const lower = code | 32;
  if (lower >= 97 && lower <= 102) return lower - 87; // a-f, A-F
  return -1;
}
