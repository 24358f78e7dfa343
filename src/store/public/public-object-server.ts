/**
 * A public bucket's objects over plain HTTP, as the platform's r2.dev URLs and R2 custom domains
 * serve them: read-only (GET and HEAD; any other method is 405 with `Allow: GET, HEAD`), the key
 * being the URL's path (percent-decoded, the query ignored), the object's HTTP metadata as
 * headers, one `Range` on GET (206, or 416 past the end; HEAD ignores it), and the preconditions
 * of RFC 9110 (304 on `If-None-Match` / `If-Modified-Since`, 412 on `If-Match` /
 * `If-Unmodified-Since`). Custom metadata is not sent. Browsers get the bucket's CORS rules, as the
 * platform applies them to public buckets: `OPTIONS` preflights for GET and HEAD, and the
 * Access-Control-* headers on answers to a request with an Origin a rule allows. Bodies stream
 * from where they live (segment-writer.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpMetadataAsHeaderBytes } from '../engine/http-metadata-text.ts';
import { StoreError } from '../engine/errors.ts';
import type { StoreEngine } from '../engine/store-engine.ts';
import type { GetResult, ObjectMeta } from '../engine/types.ts';
import { parseRange, preconditionStatus, readPreconditions } from '../s3/http-conditions.ts';
import { addCorsHeaders, preflightHeaders } from '../s3/cors-headers.ts';
import { S3Error } from '../s3/s3-error.ts';
import type { BucketCors } from '../engine/cors.ts';
import { engineBlobs, writeSegments } from '../segment-writer.ts';

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  const body = `${text}\n`;
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

function validators(meta: ObjectMeta): Record<string, string> {
  return { etag: `"${meta.etag}"`, 'last-modified': new Date(meta.uploaded).toUTCString() };
}

function objectHeaders(meta: ObjectMeta): Record<string, string | number> {
  // Stored text goes out as its UTF-8 bytes (engine/http-metadata-text.ts).
  const http = httpMetadataAsHeaderBytes(meta.httpMetadata);
  return {
    ...validators(meta),
    'accept-ranges': 'bytes',
    'content-type': http.contentType ?? 'application/octet-stream',
    ...(http.contentLanguage ? { 'content-language': http.contentLanguage } : {}),
    ...(http.contentDisposition ? { 'content-disposition': http.contentDisposition } : {}),
    ...(http.contentEncoding ? { 'content-encoding': http.contentEncoding } : {}),
    ...(http.cacheControl ? { 'cache-control': http.cacheControl } : {}),
    ...(http.cacheExpiry === undefined ? {} : { expires: new Date(http.cacheExpiry).toUTCString() }),
  };
}

/** The object key a request's path names, or null when its percent-encoding is broken. */
function keyOf(url: string): string | null {
  const path = url.split('?')[0]!.split('#')[0]!;
  try {
    return decodeURIComponent(path.replace(/^\/+/, ''));
  } catch {
    return null;
  }
}

/** Answers `req` from `bucket` of `store` (an account's view); resolves once the answer is written. */
export async function servePublicObject(store: StoreEngine, bucket: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  const rules = (name: string): Promise<BucketCors[]> => store.corsOfBucketsNamed(name);
  if (method === 'OPTIONS') return answerPreflight(req, res, bucket, rules);
  if (method !== 'GET' && method !== 'HEAD') return plain(res, 405, 'Method not allowed: a public bucket is read-only (GET and HEAD).', { allow: 'GET, HEAD' });
  // A browser's request: the Access-Control-* headers of the bucket's rule that allows it, on whatever the answer is.
  if (req.headers.origin !== undefined) await addCorsHeaders(req, res, bucket, rules);
  const key = keyOf(req.url ?? '/');
  if (key === null) return plain(res, 400, 'Bad request: the path is not valid percent-encoding.');
  if (key === '') return plain(res, 404, 'Object not found: name an object in the path.');
  const conds = readPreconditions(req.headers);
  if (method === 'HEAD') return serveHead(store, bucket, key, conds, res);
  const rangeHeader = req.headers.range;
  const range = parseRange(Array.isArray(rangeHeader) ? rangeHeader[0] : rangeHeader);
  let result: GetResult | null;
  try {
    result = await store.get(bucket, key, range ? { range } : {});
  } catch (error) {
    if (error instanceof StoreError && error.code === 'STORE_INVALID_RANGE') {
      const meta = await store.head(bucket, key);
      if (!meta) return plain(res, 404, 'Object not found.');
      const status = preconditionStatus(conds, meta, true);
      if (status !== 200) return answerPrecondition(res, meta, status);
      return plain(res, 416, 'Range not satisfiable.', { 'content-range': `bytes */${meta.size}` });
    }
    if (error instanceof StoreError && (error.code === 'STORE_INVALID_OBJECT_NAME' || error.code === 'STORE_NO_SUCH_KEY'))
      return plain(res, 404, 'Object not found.');
    throw error;
  }
  if (!result) return plain(res, 404, 'Object not found.');
  const { meta } = result;
  const status = preconditionStatus(conds, meta, true);
  if (status !== 200) {
    result.body?.discard();
    return answerPrecondition(res, meta, status);
  }
  const headers = objectHeaders(meta);
  if (!result.body) {
    res.writeHead(200, { ...headers, 'content-length': meta.size });
    res.end();
    return;
  }
  const served = result.range;
  if (range) headers['content-range'] = `bytes ${served.offset}-${served.offset + served.length - 1}/${meta.size}`;
  res.writeHead(range ? 206 : 200, { ...headers, 'content-length': served.length });
  const segments = result.body.segments;
  if (segments.length === 1 && segments[0]!.kind === 'inline') {
    res.end(segments[0]!.bytes);
    return;
  }
  await writeSegments(res, segments, engineBlobs(store));
  res.end();
}

async function serveHead(store: StoreEngine, bucket: string, key: string, conds: ReturnType<typeof readPreconditions>, res: ServerResponse): Promise<void> {
  let meta: ObjectMeta | null;
  try {
    meta = await store.head(bucket, key);
  } catch (error) {
    if (error instanceof StoreError && error.code === 'STORE_INVALID_OBJECT_NAME') meta = null;
    else throw error;
  }
  if (!meta) {
    res.writeHead(404);
    res.end();
    return;
  }
  const status = preconditionStatus(conds, meta, true);
  if (status !== 200) {
    res.writeHead(status, status === 304 ? validators(meta) : {});
    res.end();
    return;
  }
  res.writeHead(200, { ...objectHeaders(meta), 'content-length': meta.size });
  res.end();
}

/**
 * A browser's preflight, from the bucket's CORS rules: 200 with the Access-Control-* headers, else
 * the refusal as text (400 without an Origin or a method to ask for, 403 when no rule allows it or
 * it asks for a method other than GET and HEAD, which nothing here serves).
 */
async function answerPreflight(req: IncomingMessage, res: ServerResponse, bucket: string, rules: (name: string) => Promise<BucketCors[]>): Promise<void> {
  const asked = req.headers['access-control-request-method'];
  if (typeof asked === 'string' && asked !== '' && asked !== 'GET' && asked !== 'HEAD' && req.headers.origin) {
    return plain(res, 403, `CORS request not allowed: a public bucket is read-only, so only GET and HEAD may be asked for, not ${asked}.`);
  }
  let headers: Record<string, string>;
  try {
    headers = await preflightHeaders(req, bucket, rules);
  } catch (error) {
    if (error instanceof S3Error) return plain(res, error.status, error.message);
    throw error;
  }
  res.writeHead(200, { ...headers, 'content-length': 0 });
  res.end();
}

function answerPrecondition(res: ServerResponse, meta: ObjectMeta, status: 304 | 412): void {
  if (status === 304) {
    res.writeHead(304, validators(meta));
    res.end();
    return;
  }
  plain(res, 412, "Precondition failed: the object does not meet the request's If-Match or If-Unmodified-Since.");
}
