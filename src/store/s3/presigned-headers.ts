/**
 * A presigned URL carries the x-amz-* headers its signer hoisted into the query (the AWS SDKs move
 * x-amz-meta-*, x-amz-acl, x-amz-server-side-encryption... there, so the URL works from a plain
 * link): S3 reads them as the request's headers, and so does edgeport, once the signature (which
 * covers the query) has been verified. A header the request really sent wins. Checksums are the
 * exception: the JS SDK (since 3.729) signs the CRC-32 of the empty body it had at presigning time
 * into every presigned PUT, and AWS ignores checksums in a presigned URL's query, so edgeport does.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** The presigned form's own parameters, and the payload hash the verifier has already judged. */
const NOT_HEADERS = new Set([
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-signedheaders',
  'x-amz-signature',
  'x-amz-security-token',
  'x-amz-content-sha256',
  'x-amz-sdk-checksum-algorithm',
]);

/** Printable ASCII: the same as header text and as bytes. */
const PLAIN = /^[\x20-\x7e]*$/;

/** Copies the query's hoisted x-amz-* parameters into `headers` (lower-cased, as node gives headers). */
export function applyHoistedHeaders(headers: IncomingHttpHeaders, query: URLSearchParams): void {
  for (const [name, value] of query) {
    if (name.length < 6 || (name.charCodeAt(0) | 0x20) !== 0x78) continue; // 'x' or 'X': most names stop here
    const lower = name.toLowerCase();
    if (!lower.startsWith('x-amz-') || NOT_HEADERS.has(lower) || lower.startsWith('x-amz-checksum-') || headers[lower] !== undefined) continue;
    // As node gives a header: one character per byte (latin1), so the value reads as a sent header's would.
    headers[lower] = PLAIN.test(value) ? value : Buffer.from(value, 'utf8').toString('latin1');
  }
}
