/**
 * S3's SSE-C request headers: `x-amz-server-side-encryption-customer-algorithm` (AES256), `-key`
 * (the 32-byte key, base64) and `-key-MD5` (its MD5, base64), for the object a request writes or
 * reads, and the same under `x-amz-copy-source-` for a copy's source. Checked as S3 checks them,
 * with S3's codes and words; the key reaches the engine as hex (src/store/engine/sse-c.ts) and is
 * never stored. A presigned URL may carry them in its query (presigned-headers.ts applies them).
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { ObjectMeta } from '../engine/types.ts';
import { S3_ERRORS, S3Error } from './s3-error.ts';

export const SSE_C_PREFIX = 'x-amz-server-side-encryption-customer-';
export const COPY_SOURCE_SSE_C_PREFIX = 'x-amz-copy-source-server-side-encryption-customer-';

function one(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * The customer's key the request gives (as 64 hex characters), undefined when it names none;
 * `prefix` picks the object's headers or the copy source's. An incomplete or inconsistent set is
 * refused: a key S3 would not take is never used, nor silently dropped.
 */
export function sseCKeyOf(headers: IncomingHttpHeaders, prefix = SSE_C_PREFIX): string | undefined {
  const algorithm = one(headers, `${prefix}algorithm`);
  const key = one(headers, `${prefix}key`);
  const md5 = one(headers, `${prefix}key-md5`);
  if (algorithm === undefined && key === undefined && md5 === undefined) return undefined;
  if (algorithm === undefined) {
    throw S3_ERRORS.invalidArgument('Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.');
  }
  if (algorithm !== 'AES256') {
    throw new S3Error(
      'InvalidEncryptionAlgorithmError',
      400,
      `The encryption request you specified is not valid. The valid value is AES256, not ${JSON.stringify(algorithm)}.`,
    );
  }
  if (key === undefined || key === '') {
    throw S3_ERRORS.invalidArgument('Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.');
  }
  const bytes = Buffer.from(key, 'base64');
  if (bytes.length !== 32 || bytes.toString('base64') !== key) {
    throw S3_ERRORS.invalidArgument('The secret key was invalid for the specified algorithm: it must be 32 bytes (256 bits), base64-encoded.');
  }
  if (md5 === undefined || md5 === '') {
    throw S3_ERRORS.invalidArgument(
      'Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.',
    );
  }
  if (createHash('md5').update(bytes).digest('base64') !== md5) {
    throw S3_ERRORS.invalidArgument('The calculated MD5 hash of the key did not match the hash that was provided.');
  }
  return bytes.toString('hex');
}

/** The response headers that confirm SSE-C for an object stored with it (the algorithm and the key's MD5). */
export function sseCResponseHeaders(meta: Pick<ObjectMeta, 'ssec'> | undefined): Record<string, string> {
  if (!meta?.ssec) return {};
  return { [`${SSE_C_PREFIX}algorithm`]: 'AES256', [`${SSE_C_PREFIX}key-MD5`]: meta.ssec.keyMd5 };
}

/** The same headers for a key the request gave (an upload's parts, whose answers carry no object). */
export function sseCKeyHeaders(hexKey: string | undefined): Record<string, string> {
  if (hexKey === undefined) return {};
  return { [`${SSE_C_PREFIX}algorithm`]: 'AES256', [`${SSE_C_PREFIX}key-MD5`]: createHash('md5').update(Buffer.from(hexKey, 'hex')).digest('base64') };
}

export function setSseCHeaders(res: ServerResponse, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}
