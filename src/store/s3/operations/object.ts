/**
 * Object operations: PutObject, GetObject, HeadObject, DeleteObject, DeleteObjects. Bodies stream
 * both ways: a put hands the verified request stream to the engine; a get pipes the engine's
 * segments to the socket with backpressure.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { StoreError } from '../../engine/errors.ts';
import { engineBlobs, writeSegments, primeFirstBlob } from '../../segment-writer.ts';
import type { BodyInput, Checksums, Conditional, GetResult, HttpMetadata, ObjectMeta, PutOptions } from '../../engine/types.ts';
import { FROM_S3_CLASS, readSmallBody, requireBucket, requireKey, sendEmpty, sendXml, TO_S3_CLASS, type S3Context } from '../context.ts';
import { deleteCondition, namesObject, parseRange, preconditionStatus, rangeApplies, readPreconditions, writeCondition } from '../http-conditions.ts';
import { declaredLength, S3_CHECKSUM_ALGORITHMS, verifiedUpload, type S3ChecksumAlgorithm } from '../payload.ts';
import { S3_ERRORS, S3Error } from '../s3-error.ts';
import { expirationHeader } from '../expiration-header.ts';
import { metadataValueFromHeader, metadataValueToHeader } from '../metadata-values.ts';
import { sseCKeyOf, sseCResponseHeaders } from '../sse-c-headers.ts';
import { SSE_HEADERS } from '../write-headers.ts';
import { element, parseRequestXml, xmlDocument } from '../xml.ts';
import { httpMetadataAsHeaderBytes, httpMetadataAsText } from '../../engine/http-metadata-text.ts';
import { headerBytes } from '../../../core/http/header-text.ts';
import { HTTP_TOKEN } from '../../../core/http/token.ts';

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * Standard headers -> httpMetadata; `aws-chunked` is a transfer detail, not the object's encoding.
 * A value beyond ASCII is kept as text (core/http/header-text.ts: its UTF-8, else one character a
 * byte), what a script reads; `form` 'text' for a browser form's fields, which are text already.
 */
export function httpMetadataFrom(headers: IncomingHttpHeaders, form: 'header' | 'text' = 'header'): HttpMetadata {
  const out: HttpMetadata = {};
  const contentType = header(headers, 'content-type');
  if (contentType !== undefined) out.contentType = contentType;
  const language = header(headers, 'content-language');
  if (language !== undefined) out.contentLanguage = language;
  const disposition = header(headers, 'content-disposition');
  if (disposition !== undefined) out.contentDisposition = disposition;
  const encoding = header(headers, 'content-encoding')
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s.toLowerCase() !== 'aws-chunked' && s !== '')
    .join(', ');
  if (encoding) out.contentEncoding = encoding;
  const cacheControl = header(headers, 'cache-control');
  if (cacheControl !== undefined) out.cacheControl = cacheControl;
  const expires = header(headers, 'expires');
  if (expires !== undefined && !Number.isNaN(Date.parse(expires))) out.cacheExpiry = Date.parse(expires);
  return form === 'text' ? out : httpMetadataAsText(out);
}

/**
 * The x-amz-meta-* headers as the object's metadata, each value as text (metadata-values.ts):
 * `form` 'text' for a browser form's fields, which are text already.
 */
export function customMetadataFrom(headers: IncomingHttpHeaders, form: 'header' | 'text' = 'header'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith('x-amz-meta-') && value !== undefined) {
      out[name.slice('x-amz-meta-'.length)] = metadataValueFromHeader(Array.isArray(value) ? value.join(',') : value, form);
    }
  }
  return out;
}

export function storageClassFrom(headers: IncomingHttpHeaders): PutOptions['storageClass'] {
  const value = header(headers, 'x-amz-storage-class');
  if (value === undefined) return undefined;
  const mapped = FROM_S3_CLASS[value];
  if (!mapped) throw S3_ERRORS.invalidStorageClass(value);
  return mapped;
}

export function contentMd5Hex(headers: IncomingHttpHeaders): string | undefined {
  const value = header(headers, 'content-md5');
  if (value === undefined) return undefined;
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length !== 16 || bytes.toString('base64') !== value) throw S3_ERRORS.invalidDigest();
  return bytes.toString('hex');
}

/** The object's metadata as response headers (GET and HEAD). */
export function objectHeaders(meta: ObjectMeta, overrides: URLSearchParams): Record<string, string | number> {
  // Stored text goes out as its UTF-8 bytes: what an S3 client sent, byte for byte.
  const http = httpMetadataAsHeaderBytes(meta.httpMetadata);
  const h: Record<string, string | number> = {
    etag: `"${meta.etag}"`,
    'last-modified': new Date(meta.uploaded).toUTCString(),
    'accept-ranges': 'bytes',
    'content-type': http.contentType ?? 'application/octet-stream',
  };
  if (http.contentLanguage) h['content-language'] = http.contentLanguage;
  if (http.contentDisposition) h['content-disposition'] = http.contentDisposition;
  if (http.contentEncoding) h['content-encoding'] = http.contentEncoding;
  if (http.cacheControl) h['cache-control'] = http.cacheControl;
  if (http.cacheExpiry !== undefined) h.expires = new Date(http.cacheExpiry).toUTCString();
  if (meta.storageClass !== 'Standard') h['x-amz-storage-class'] = TO_S3_CLASS[meta.storageClass];
  // A name a script stored that cannot be a header name (a space, a colon, beyond ASCII) is
  // counted in x-amz-missing-meta, as S3 counts metadata its REST face cannot show.
  let missing = 0;
  for (const [name, value] of Object.entries(meta.customMetadata)) {
    if (HTTP_TOKEN.test(name)) h[`x-amz-meta-${name}`] = metadataValueToHeader(value);
    else missing++;
  }
  if (missing > 0) h['x-amz-missing-meta'] = missing;
  // GetObject's response-* query parameters override the stored headers (S3 API reference).
  for (const [param, name] of RESPONSE_OVERRIDES) {
    const value = overrides.get(param);
    // Text beyond ASCII goes out as its UTF-8 bytes, as a stored header's does.
    if (value !== null) h[name] = headerBytes(value);
  }
  return h;
}

/** GetObject's response-* query parameters and the header each one sets. */
const RESPONSE_OVERRIDES = [
  ['response-content-type', 'content-type'],
  ['response-content-language', 'content-language'],
  ['response-expires', 'expires'],
  ['response-cache-control', 'cache-control'],
  ['response-content-disposition', 'content-disposition'],
  ['response-content-encoding', 'content-encoding'],
] as const;

/** What an HTTP header value may hold: no control character but tab (CR and LF would split the answer's headers). */
// eslint-disable-next-line no-control-regex -- the control characters are the point
const HEADER_VALUE = /^[^\x00-\x08\x0a-\x1f\x7f]*$/;

/**
 * Refuses (400 InvalidArgument, naming the parameter) a response-* override that cannot be a
 * header value, checked before the object is read: CR/LF would split the answer's headers.
 */
export function assertResponseOverrides(query: URLSearchParams): void {
  for (const [param] of RESPONSE_OVERRIDES) {
    const value = query.get(param);
    if (value !== null && !HEADER_VALUE.test(value)) {
      throw S3_ERRORS.invalidArgument(`${param} must be a valid HTTP header value: control characters such as CR and LF are not allowed.`);
    }
  }
}

export async function putObject(ctx: S3Context): Promise<void> {
  const headers = ctx.req.headers;
  const length = declaredLength(headers);
  if (length === undefined && header(headers, 'transfer-encoding') === undefined) throw S3_ERRORS.missingContentLength();
  const md5 = contentMd5Hex(headers);
  const onlyIf = writeCondition(headers);
  const storageClass = storageClassFrom(headers);
  const ssecKey = sseCKeyOf(headers);
  const options: PutOptions = {
    httpMetadata: httpMetadataFrom(headers),
    customMetadata: customMetadataFrom(headers),
    ...(md5 ? { expectedChecksum: { algorithm: 'md5', hex: md5 } } : {}),
    ...(storageClass ? { storageClass } : {}),
    ...(onlyIf ? { onlyIf } : {}),
    ...(ssecKey !== undefined ? { ssecKey } : {}),
  };
  const { body, checksums } = verifiedUpload(ctx.req, headers, ctx.signing);
  options.verifiedChecksums = checksums;
  // A body with nothing to verify that has wholly arrived (a small PUT comes in one packet with its
  // headers) is handed over as the bytes it is: no stream to iterate for it.
  const whole = body === ctx.req ? arrivedWhole(ctx.req, length) : undefined;
  const input: BodyInput = whole ?? { stream: body, ...(length !== undefined ? { length } : {}) };
  const meta = await ctx.engine.put(requireBucket(ctx), requireKey(ctx), input, options);
  if (!meta) {
    ctx.req.resume();
    throw await writeConditionFailure(ctx, onlyIf);
  }
  sendEmpty(ctx, 200, { etag: `"${meta.etag}"`, ...checksumHeaders(meta.checksums), ...sseCResponseHeaders(meta), ...(await expirationHeader(ctx, meta)) });
}

/** Bodies up to this size may be taken whole once they have arrived (arrivedWhole). */
const WHOLE_BODY_MAX = 64 * 1024;

/**
 * The request's whole body, when all of it (`length` bytes, at most WHOLE_BODY_MAX) has arrived:
 * its Content-Length frames it (no Transfer-Encoding), and node holds that many bytes of it, unread
 * (it never hands a request more than its Content-Length).
 */
function arrivedWhole(req: IncomingMessage, length: number | undefined): Uint8Array | undefined {
  if (length === undefined || length > WHOLE_BODY_MAX || req.readableLength !== length) return undefined;
  if (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) !== length) return undefined;
  if (length === 0) return new Uint8Array(0);
  const bytes = req.read() as Buffer | null;
  return bytes !== null && bytes.byteLength === length ? bytes : undefined;
}

/**
 * x-amz-checksum-<algorithm> (base64) for each flexible checksum the object has: the one a PUT
 * was verified against, a SHA-1/SHA-256 a script gave on put, or a multipart upload's COMPOSITE
 * checksum (`<base64>-<parts>`).
 */
export function checksumHeaders(checksums: Checksums): Record<string, string> {
  const out: Record<string, string> = {};
  for (const algorithm of S3_CHECKSUM_ALGORITHMS) {
    const stored = checksums[algorithm];
    if (stored !== undefined) out[`x-amz-checksum-${algorithm}`] = checksumBase64(stored);
  }
  return out;
}

/** `<ChecksumCRC32>base64</ChecksumCRC32>` for each of them, as response documents name them. */
export function checksumElements(checksums: Checksums): string {
  return Object.entries(checksumHeaders(checksums))
    .map(([name, value]) => element(`Checksum${name.slice('x-amz-checksum-'.length).toUpperCase()}`, value))
    .join('');
}

/** base64 of a stored (hex) checksum; a COMPOSITE one keeps its `-<parts>`. */
export function checksumBase64(stored: string): string {
  const dash = stored.indexOf('-');
  return dash < 0 ? Buffer.from(stored, 'hex').toString('base64') : Buffer.from(stored.slice(0, dash), 'hex').toString('base64') + stored.slice(dash);
}

/** COMPOSITE for a multipart upload's checksum of its parts' checksums, FULL_OBJECT otherwise. */
export function checksumType(checksums: Checksums): 'COMPOSITE' | 'FULL_OBJECT' {
  return Object.values(checksums).some((value) => value.includes('-')) ? 'COMPOSITE' : 'FULL_OBJECT';
}

export async function getObject(ctx: S3Context, head: boolean): Promise<void> {
  const bucket = requireBucket(ctx);
  const key = requireKey(ctx);
  const conds = readPreconditions(ctx.req.headers);
  let range = head ? undefined : parseRange(header(ctx.req.headers, 'range'));
  const part = partNumberOf(ctx.query);
  assertResponseOverrides(ctx.query);
  if (part !== undefined && range) throw S3_ERRORS.invalidRequest('Cannot specify both Range header and partNumber query parameter.');
  refuseSseOnRead(ctx.req.headers);
  // SSE-C: the key an encrypted object was stored with (required, and checked, for one; refused for any other).
  const ssecKey = sseCKeyOf(ctx.req.headers);
  const keyed = ssecKey !== undefined ? { ssecKey } : {};
  let result: GetResult | null;
  try {
    result =
      part !== undefined
        ? await ctx.engine.get(bucket, key, { part, ...keyed })
        : head
          ? await headAsGet(ctx, bucket, key, ssecKey)
          : await ctx.engine.get(bucket, key, range ? { range, ...keyed } : keyed);
    // If-Range naming another version of the object: the whole object, not the range.
    if (range && result && !rangeApplies(ctx.req.headers, result.meta)) {
      result.body?.discard();
      range = undefined;
      result = await ctx.engine.get(bucket, key, keyed);
    }
  } catch (error) {
    // An unsatisfiable range or part still answers a failed precondition first (RFC 7233 §3.1).
    if (!(error instanceof StoreError) || (error.code !== 'STORE_INVALID_RANGE' && error.code !== 'STORE_INVALID_PART_NUMBER')) throw error;
    const meta = await ctx.engine.head(bucket, key, keyed);
    const status = meta ? preconditionStatus(conds, meta, true) : 200;
    if (meta && status !== 200) return answerPrecondition(ctx, meta, status, head);
    // An If-Range the object fails makes the range moot: the whole object.
    if (!meta || !range || rangeApplies(ctx.req.headers, meta)) throw error;
    range = undefined;
    result = await ctx.engine.get(bucket, key, keyed);
  }
  if (!result) {
    if (head) return sendEmpty(ctx, 404);
    throw new StoreError('STORE_NO_SUCH_KEY');
  }
  const { meta } = result;
  const status = preconditionStatus(conds, meta, true);
  if (status !== 200) {
    result.body?.discard();
    return answerPrecondition(ctx, meta, status, head);
  }
  const headers = objectHeaders(meta, ctx.query);
  headers['x-amz-request-id'] = ctx.requestId;
  Object.assign(headers, sseCResponseHeaders(meta), await expirationHeader(ctx, meta));
  // Checksums, when asked for, describe what is served: the whole object, or one part of it (a
  // multipart object's part by its own checksum, as S3 answers), never another range.
  if (!range && header(ctx.req.headers, 'x-amz-checksum-mode')?.toUpperCase() === 'ENABLED') {
    const checksums = checksumHeaders(part === undefined ? meta.checksums : partChecksums(result, meta.checksums, part));
    if (Object.keys(checksums).length > 0) Object.assign(headers, checksums, { 'x-amz-checksum-type': checksumType(meta.checksums) });
  }
  const served = result.range;
  // A part of a multipart object is served as the range it covers, with the number of parts.
  const partial = range !== undefined || (part !== undefined && result.partsCount !== undefined && served.length > 0);
  if (part !== undefined && result.partsCount !== undefined) headers['x-amz-mp-parts-count'] = result.partsCount;
  if (partial) headers['content-range'] = `bytes ${served.offset}-${served.offset + served.length - 1}/${meta.size}`;
  if (head || !result.body) {
    result.body?.discard();
    headers['content-length'] = part !== undefined ? served.length : meta.size;
    ctx.res.writeHead(partial ? 206 : 200, headers);
    ctx.res.end();
    return;
  }
  headers['content-length'] = served.length;
  const segments = result.body.segments;
  // A small body in the row goes out with the headers in one write.
  if (segments.length === 1 && segments[0]!.kind === 'inline') {
    ctx.res.writeHead(partial ? 206 : 200, headers);
    ctx.res.end(segments[0]!.bytes);
    return;
  }
  // A remote blob store that is down fails the read here, while an error can still be answered.
  const blobs = engineBlobs(ctx.engine);
  const primed = await primeFirstBlob(segments, blobs);
  ctx.res.writeHead(partial ? 206 : 200, headers);
  await writeSegments(ctx.res, segments, blobs, primed);
  ctx.res.end();
}

const OBJECT_ATTRIBUTES = ['ETag', 'Checksum', 'ObjectParts', 'StorageClass', 'ObjectSize'];

/** GetObjectAttributes: the attributes `x-amz-object-attributes` names, in S3's order. */
export async function getObjectAttributes(ctx: S3Context): Promise<void> {
  refuseSseOnRead(ctx.req.headers);
  const wanted = new Set(
    (header(ctx.req.headers, 'x-amz-object-attributes') ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  );
  if (wanted.size === 0)
    throw S3_ERRORS.invalidRequest('The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty.');
  for (const name of wanted) if (!OBJECT_ATTRIBUTES.includes(name)) throw S3_ERRORS.invalidArgument(`Invalid attribute name specified: ${name}.`);
  const maxParts = wholeNumberHeader(ctx, 'x-amz-max-parts', 1000);
  const marker = wholeNumberHeader(ctx, 'x-amz-part-number-marker', 0);
  // Part 1 is any object's first byte range; it also tells how many parts a multipart object has.
  const ssecKey = sseCKeyOf(ctx.req.headers);
  const result = await ctx.engine.get(requireBucket(ctx), requireKey(ctx), { part: 1, ...(ssecKey !== undefined ? { ssecKey } : {}) });
  if (!result) throw new StoreError('STORE_NO_SUCH_KEY');
  result.body?.discard();
  const { meta } = result;
  const checksums = checksumElements(meta.checksums);
  const inner =
    (wanted.has('ETag') ? element('ETag', meta.etag) : '') +
    (wanted.has('Checksum') && checksums !== '' ? `<Checksum>${checksums}${element('ChecksumType', checksumType(meta.checksums))}</Checksum>` : '') +
    (wanted.has('ObjectParts') && result.partsCount !== undefined ? objectParts(result, meta.checksums, marker, maxParts) : '') +
    (wanted.has('StorageClass') ? element('StorageClass', TO_S3_CLASS[meta.storageClass]) : '') +
    (wanted.has('ObjectSize') ? element('ObjectSize', meta.size) : '');
  ctx.res.setHeader('last-modified', new Date(meta.uploaded).toUTCString());
  sendXml(ctx, 200, xmlDocument('GetObjectAttributesResponse', inner));
}

/** GetObjectAttributes' x-amz-max-parts / x-amz-part-number-marker: a whole number (max-parts above 1000 gets 1000, as ListParts). */
function wholeNumberHeader(ctx: S3Context, name: string, fallback: number): number {
  const raw = header(ctx.req.headers, name);
  if (raw === undefined) return fallback;
  if (!/^\d{1,10}$/.test(raw.trim())) throw S3_ERRORS.invalidArgument(`${name} must be a non-negative integer, not ${raw}.`);
  const n = Number(raw.trim());
  return name === 'x-amz-max-parts' ? Math.min(n, 1000) : n;
}

/**
 * The algorithm a multipart object's parts keep their checksums in: the one of the object's own
 * (COMPOSITE or FULL_OBJECT) checksum, made of them. None when the object has none (an upload made
 * without an algorithm, or with a part that kept no checksum).
 */
function partAlgorithm(checksums: Checksums): S3ChecksumAlgorithm | undefined {
  return S3_CHECKSUM_ALGORITHMS.find((name) => checksums[name] !== undefined);
}

/**
 * The checksums of part `part` of an object: a multipart object's part, its own (in the object's
 * algorithm); part 1 of any other object is the whole object, so the object's.
 */
function partChecksums(result: GetResult, checksums: Checksums, part: number): Checksums {
  if (result.parts === undefined) return checksums;
  const algorithm = partAlgorithm(checksums);
  const checksum = result.parts[part - 1]?.checksum;
  return algorithm !== undefined && checksum !== undefined ? { [algorithm]: checksum } : {};
}

/**
 * ObjectParts of a multipart object: its parts (number, size and, when its upload kept them, each
 * part's checksum), a page of at most `maxParts` after `marker`. S3 lists parts for objects with
 * checksums, which since its default CRC-64/NVME is every object it stores; edgeport adds no default
 * checksum, so a part made without one is listed with its number and size only.
 */
function objectParts(result: GetResult, checksums: Checksums, marker: number, maxParts: number): string {
  const algorithm = partAlgorithm(checksums);
  const after = (result.parts ?? []).map((part, index) => ({ number: index + 1, ...part })).filter((part) => part.number > marker);
  const page = after.slice(0, maxParts);
  const truncated = after.length > page.length;
  return (
    `<ObjectParts>${element('PartsCount', result.partsCount)}${element('PartNumberMarker', marker)}` +
    `${element('NextPartNumberMarker', page.at(-1)?.number ?? marker)}${element('MaxParts', maxParts)}${element('IsTruncated', truncated)}` +
    page
      .map(
        (part) =>
          `<Part>${element('PartNumber', part.number)}${element('Size', part.size)}` +
          `${algorithm !== undefined && part.checksum !== undefined ? checksumElements({ [algorithm]: part.checksum }) : ''}</Part>`,
      )
      .join('') +
    '</ObjectParts>'
  );
}

/**
 * SSE-S3/SSE-KMS headers describe how a write encrypts, never a read: S3 refuses them on GetObject,
 * HeadObject and GetObjectAttributes with 400 InvalidArgument.
 */
function refuseSseOnRead(headers: IncomingHttpHeaders): void {
  const named = SSE_HEADERS.find((name) => headers[name] !== undefined);
  if (named !== undefined)
    throw S3_ERRORS.invalidArgument(
      `${named} header is not supported for this operation: it applies to writes only (reads need no encryption parameters but SSE-C's).`,
    );
}

/** GetObject/HeadObject `partNumber` (1 to 10000), when given. */
function partNumberOf(query: URLSearchParams): number | undefined {
  const raw = query.get('partNumber');
  if (raw === null) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 10_000) throw S3_ERRORS.invalidArgument('Part number must be an integer between 1 and 10000, inclusive.');
  return n;
}

/** HeadObject: as S3, an SSE-C object's metadata needs its key (checked by the engine). */
async function headAsGet(ctx: S3Context, bucket: string, key: string, ssecKey: string | undefined): Promise<GetResult | null> {
  const meta = await ctx.engine.head(bucket, key, ssecKey !== undefined ? { ssecKey } : {});
  if (meta?.ssec && ssecKey === undefined) throw new StoreError('STORE_SSEC_KEY_REQUIRED');
  return meta ? { meta, range: { offset: 0, length: meta.size } } : null;
}

function answerPrecondition(ctx: S3Context, meta: ObjectMeta, status: 304 | 412, head: boolean): void {
  if (status === 412 && !head) throw preconditionFailed();
  sendEmpty(ctx, status, status === 304 ? { etag: `"${meta.etag}"`, 'last-modified': new Date(meta.uploaded).toUTCString() } : {});
}

/**
 * The error for a conditional write (PutObject, CopyObject, CompleteMultipartUpload) that wrote
 * nothing: S3 answers If-Match on a key with no object 404 NoSuchKey, any other failed condition
 * 412 PreconditionFailed.
 */
export async function writeConditionFailure(ctx: S3Context, onlyIf: Conditional | undefined): Promise<Error> {
  if (onlyIf?.etagMatches && !(await ctx.engine.head(requireBucket(ctx), requireKey(ctx)))) return new StoreError('STORE_NO_SUCH_KEY');
  return preconditionFailed();
}

export function preconditionFailed(): S3Error {
  return new S3Error('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold.');
}

export async function deleteObject(ctx: S3Context): Promise<void> {
  const bucket = requireBucket(ctx);
  const key = requireKey(ctx);
  const condition = deleteCondition(ctx.req.headers);
  if (!condition) {
    await ctx.engine.delete(bucket, [key]);
    return sendEmpty(ctx, 204);
  }
  const outcome = await ctx.engine.deleteIf(bucket, key, condition);
  // S3: a condition naming the object (If-Match, its time or size) on a key that has none is NoSuchKey.
  if (outcome === 'missing' && namesObject(condition)) throw new StoreError('STORE_NO_SUCH_KEY');
  if (outcome === 'precondition-failed') throw preconditionFailed();
  sendEmpty(ctx, 204);
}

/** One `<Object>` of a DeleteObjects document: its key and the conditions it names. */
interface DeleteEntry {
  key: string;
  condition?: Conditional;
  /** Why the entry is refused before anything is deleted (a version id other than null). */
  refusal?: { code: string; message: string };
}

function deleteEntry(object: Record<string, unknown>): DeleteEntry {
  // Key is required by S3's schema: an Object without one deletes nothing, it is MalformedXML.
  if (typeof object.Key !== 'string') throw S3_ERRORS.malformedXml();
  const key = object.Key;
  const version = object.VersionId === undefined ? undefined : String(object.VersionId).trim();
  if (version !== undefined && version !== 'null') {
    return {
      key,
      refusal: { code: 'InvalidArgument', message: `Invalid version id specified: buckets are not versioned, so only the version null exists (${version}).` },
    };
  }
  const condition: Conditional = { secondsGranularity: true };
  if (object.ETag !== undefined) {
    const etag = String(object.ETag).trim();
    condition.etagMatches = [etag === '*' ? { type: 'wildcard' } : { type: 'strong', value: etag.replace(/^"(.*)"$/, '$1') }];
  }
  if (object.LastModifiedTime !== undefined) {
    const ms = Date.parse(String(object.LastModifiedTime).trim());
    if (Number.isNaN(ms)) throw S3_ERRORS.malformedXml();
    condition.uploadedAt = ms;
  }
  if (object.Size !== undefined) {
    const size = String(object.Size).trim();
    if (!/^\d{1,16}$/.test(size)) throw S3_ERRORS.malformedXml();
    condition.sizeIs = Number(size);
  }
  return namesObject(condition) ? { key, condition } : { key };
}

/** An xs:boolean of a request document (`true`, `false`, `1`, `0`); anything else does not validate against S3's schema. */
function xsBoolean(value: unknown): boolean {
  const text = typeof value === 'string' ? value.trim() : undefined;
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw S3_ERRORS.malformedXml();
}

/**
 * DeleteObjects: each `<Object>` may name an `ETag` (or `*`), a `LastModifiedTime` and a `Size`,
 * checked against that key's object as it is deleted; one that fails is an `<Error>` entry
 * (PreconditionFailed, or NoSuchKey when the key has no object), and the others are deleted.
 */
export async function deleteObjects(ctx: S3Context): Promise<void> {
  const text = await readSmallBody(ctx);
  let entries: DeleteEntry[];
  let quiet: boolean;
  try {
    const doc = parseRequestXml(text) as { Delete?: { Object?: Array<Record<string, unknown>>; Quiet?: unknown } };
    if (!doc.Delete) throw new Error('no Delete');
    entries = (doc.Delete.Object ?? []).map((object) => deleteEntry(typeof object === 'object' && object !== null ? object : {}));
    quiet = xsBoolean(doc.Delete.Quiet ?? 'false');
  } catch (error) {
    if (error instanceof S3Error) throw error;
    throw S3_ERRORS.malformedXml();
  }
  if (entries.length === 0 || entries.length > 1000) throw S3_ERRORS.malformedXml();
  const bucket = requireBucket(ctx);
  // Unconditional keys go in one deletion; each conditional one is judged in its own.
  const plain = entries.filter((entry) => !entry.condition && !entry.refusal).map((entry) => entry.key);
  if (plain.length > 0) await ctx.engine.delete(bucket, plain);
  const errors = new Map<DeleteEntry, { code: string; message: string }>();
  for (const entry of entries) {
    if (entry.refusal) errors.set(entry, entry.refusal);
    if (!entry.condition || entry.refusal) continue;
    const outcome = await ctx.engine.deleteIf(bucket, entry.key, entry.condition);
    if (outcome === 'missing') errors.set(entry, { code: 'NoSuchKey', message: 'The specified key does not exist.' });
    if (outcome === 'precondition-failed')
      errors.set(entry, { code: 'PreconditionFailed', message: 'At least one of the pre-conditions you specified did not hold.' });
  }
  const inner = entries
    .map((entry) => {
      const error = errors.get(entry);
      if (error) return `<Error>${element('Key', entry.key)}${element('Code', error.code)}${element('Message', error.message)}</Error>`;
      return quiet ? '' : `<Deleted>${element('Key', entry.key)}</Deleted>`;
    })
    .join('');
  sendXml(ctx, 200, xmlDocument('DeleteResult', inner));
}
