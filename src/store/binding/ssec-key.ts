/**
 * The `ssecKey` option of put, get, createMultipartUpload and uploadPart: the customer's key for
 * SSE-C, as the runtime takes it (a string of 64 lowercase hex characters, or 32 bytes as an
 * ArrayBuffer or view), with its exact errors. It reaches the engine as hex.
 */
import { wrongField } from './binding-errors.ts';
import { bytesToHex } from './hex.ts';

const LOWER_HEX = /^[0-9a-f]+$/;

/** The key as the engine takes it (64 lowercase hex characters), or undefined when none was given. */
export function toSsecKey(value: unknown, struct: 'PutOptions' | 'GetOptions' | 'MultipartOptions' | 'UploadPartOptions'): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') {
    if (!LOWER_HEX.test(value)) throw new Error('SSE-C Key has invalid format');
    if (value.length !== 64) throw new Error('SSE-C Key must be 32 bytes in length');
    return value;
  }
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
    const bytes = value instanceof ArrayBuffer ? new Uint8Array(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    if (bytes.byteLength !== 32) throw new Error('SSE-C Key must be 32 bytes in length');
    return bytesToHex(bytes);
  }
  throw wrongField('ssecKey', struct, 'ArrayBuffer or ArrayBufferView or string');
}
