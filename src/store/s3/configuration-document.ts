/**
 * The body of a bucket configuration PUT (PutBucketCors, PutBucketLifecycleConfiguration): read
 * whole up to a limit, checked against its payload hash and, as S3 requires for these operations,
 * against a Content-MD5 or a flexible checksum (x-amz-checksum-*), one of which must be sent.
 */
import { createHash } from 'node:crypto';
import type { S3Context } from './context.ts';
import { verifiedBody } from './payload.ts';
import { S3_ERRORS, S3Error } from './s3-error.ts';
import { contentMd5Hex } from './operations/object.ts';

/** A flexible checksum header (x-amz-checksum-crc32, ...), not the type/algorithm ones. */
function hasChecksum(headers: S3Context['req']['headers']): boolean {
  return (
    Object.keys(headers).some((name) => name.startsWith('x-amz-checksum-') && name !== 'x-amz-checksum-type' && name !== 'x-amz-checksum-algorithm') ||
    typeof headers['x-amz-trailer'] === 'string'
  );
}

/** The document as text; `what` names it in the refusal of one over `maxBytes`. */
export async function readConfigurationDocument(ctx: S3Context, maxBytes: number, what: string): Promise<string> {
  const headers = ctx.req.headers;
  const md5 = contentMd5Hex(headers);
  if (md5 === undefined && !hasChecksum(headers)) throw S3_ERRORS.invalidRequest('Missing required header for this request: Content-Md5.');
  // A body the handler read first has had its deferred signature checked there.
  const read = ctx.body;
  const source: AsyncIterable<Uint8Array> = read
    ? (async function* readFirst() {
        yield read;
      })()
    : ctx.req;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of verifiedBody(source, { headers, signing: ctx.body ? undefined : ctx.signing })) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new S3Error('MaxMessageLengthExceeded', 400, `Your request was too big: a ${what} is at most ${maxBytes} bytes.`);
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  if (md5 !== undefined && createHash('md5').update(body).digest('hex') !== md5) throw S3_ERRORS.badDigest();
  return body.toString('utf8');
}
