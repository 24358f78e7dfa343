/**
 * S3's HTTP preconditions and ranges (RFC 7232/7233 as S3 applies them): If-Match and
 * If-Unmodified-Since failing give 412, If-None-Match and If-Modified-Since failing give 304 on
 * reads (412 on writes); a Range starting past the end is 416, a malformed one is ignored.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Conditional, EtagMatcher, ObjectMeta, RangeRequest } from '../engine/types.ts';
import { evaluateConditional } from '../engine/conditions.ts';
import { S3_ERRORS } from './s3-error.ts';

function etagList(value: string | undefined): EtagMatcher[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part): EtagMatcher => {
      if (part === '*') return { type: 'wildcard' };
      const weak = part.startsWith('W/');
      const bare = (weak ? part.slice(2) : part).replace(/^"(.*)"$/, '$1');
      return weak ? { type: 'weak', value: bare } : { type: 'strong', value: bare };
    });
}

function httpDate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** The two halves of a request's preconditions, evaluated apart so 412 and 304 can be told apart. */
export function readPreconditions(headers: IncomingHttpHeaders, prefix = ''): { mustMatch?: Conditional; mustChange?: Conditional } {
  const ifMatch = etagList(header(headers, `${prefix}if-match`));
  const ifUnmodifiedSince = httpDate(header(headers, `${prefix}if-unmodified-since`));
  const ifNoneMatch = etagList(header(headers, `${prefix}if-none-match`));
  const ifModifiedSince = httpDate(header(headers, `${prefix}if-modified-since`));
  const out: { mustMatch?: Conditional; mustChange?: Conditional } = {};
  if (ifMatch || ifUnmodifiedSince !== undefined) {
    out.mustMatch = {
      secondsGranularity: true,
      ...(ifMatch ? { etagMatches: ifMatch } : {}),
      ...(ifUnmodifiedSince !== undefined ? { uploadedBefore: ifUnmodifiedSince + 1000 } : {}),
    };
  }
  if (ifNoneMatch || ifModifiedSince !== undefined) {
    out.mustChange = {
      secondsGranularity: true,
      ...(ifNoneMatch ? { etagDoesNotMatch: ifNoneMatch } : {}),
      ...(ifModifiedSince !== undefined ? { uploadedAfter: ifModifiedSince } : {}),
    };
  }
  return out;
}

/** The condition a write (PutObject, CompleteMultipartUpload) puts on the object it would replace. */
export function writeCondition(headers: IncomingHttpHeaders): Conditional | undefined {
  const conds = readPreconditions(headers);
  return conds.mustMatch || conds.mustChange ? { ...conds.mustMatch, ...conds.mustChange, secondsGranularity: true } : undefined;
}

/**
 * What a DeleteObject asks of the object it would delete: If-Match (an etag list or `*`), S3's
 * x-amz-if-match-last-modified-time (an HTTP date, compared in whole seconds) and
 * x-amz-if-match-size (bytes), and the other three RFC 7232 headers, evaluated as on a write (an
 * If-(Un)Modified-Since that is no HTTP date is ignored, as RFC 7232 requires). Undefined when it
 * asks nothing. A malformed x-amz-if-match-* is InvalidArgument: S3's own conditions that cannot be
 * read are refused, never dropped (the object would be deleted unconditionally).
 */
export function deleteCondition(headers: IncomingHttpHeaders): Conditional | undefined {
  const written = writeCondition(headers);
  const cond: Conditional = { ...written, secondsGranularity: true };
  const time = header(headers, 'x-amz-if-match-last-modified-time');
  if (time !== undefined) {
    const ms = Date.parse(time);
    if (Number.isNaN(ms))
      throw S3_ERRORS.invalidArgument(`x-amz-if-match-last-modified-time must be an HTTP date (e.g. ${new Date(0).toUTCString()}), not ${time}.`);
    cond.uploadedAt = ms;
  }
  const size = header(headers, 'x-amz-if-match-size');
  if (size !== undefined) {
    if (!/^\d{1,16}$/.test(size.trim())) throw S3_ERRORS.invalidArgument(`x-amz-if-match-size must be a whole number of bytes, not ${size}.`);
    cond.sizeIs = Number(size.trim());
  }
  return written || cond.uploadedAt !== undefined || cond.sizeIs !== undefined ? cond : undefined;
}

/** Whether a condition can only hold for an object that exists (S3 answers NoSuchKey when it does not). */
export function namesObject(cond: Conditional): boolean {
  return cond.etagMatches !== undefined || cond.sizeIs !== undefined || cond.uploadedAt !== undefined;
}

/** The conditional headers of S3 requests (RFC 7232's four and S3's own for deletes). */
const CONDITION_HEADERS = [
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'x-amz-if-match-last-modified-time',
  'x-amz-if-match-size',
] as const;

/**
 * Refuses (501 NotImplemented, naming the header and the operation) a conditional header on a
 * write that does not evaluate one: a precondition edgeport cannot check is never ignored, so
 * nothing is changed on a condition the client believes held. PutObject, CopyObject, DeleteObject
 * and CompleteMultipartUpload evaluate them, and reads (GetObject, HeadObject) do; other reads
 * (listings, bucket lookups) answer in full, as a server that has no validator for them may.
 */
export function refuseUnevaluatedConditions(method: string, key: string | undefined, query: URLSearchParams, headers: IncomingHttpHeaders): void {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return;
  const inUpload = query.has('uploadId');
  const evaluated = key !== undefined && ((method === 'PUT' && !inUpload) || (method === 'DELETE' && !inUpload) || (method === 'POST' && inUpload));
  if (evaluated) return;
  const named = CONDITION_HEADERS.find((name) => headers[name] !== undefined);
  if (named === undefined) return;
  const operation =
    key === undefined
      ? `${method} on a bucket`
      : method === 'PUT'
        ? 'UploadPart'
        : method === 'DELETE'
          ? 'AbortMultipartUpload'
          : query.has('uploads')
            ? 'CreateMultipartUpload'
            : `${method} on an object`;
  throw S3_ERRORS.notImplemented(
    `The ${named} condition on ${operation} (it is evaluated only by PutObject, CopyObject, DeleteObject, CompleteMultipartUpload, GetObject and HeadObject)`,
  );
}

/** 200 when the request may proceed, else the status to answer with. */
export function preconditionStatus(conds: { mustMatch?: Conditional; mustChange?: Conditional }, meta: ObjectMeta | null, read: boolean): 200 | 304 | 412 {
  if (conds.mustMatch && !evaluateConditional(conds.mustMatch, meta)) return 412;
  if (conds.mustChange && !evaluateConditional(conds.mustChange, meta)) return read ? 304 : 412;
  return 200;
}

/**
 * Whether a Range applies under `If-Range` (RFC 7233 §3.2): the header absent, a strong etag equal
 * to the object's, or an HTTP date equal to its Last-Modified (in whole seconds). Otherwise the
 * whole object is served, so a client resuming a download never splices bytes of another version.
 */
export function rangeApplies(headers: IncomingHttpHeaders, meta: ObjectMeta): boolean {
  const value = header(headers, 'if-range')?.trim();
  if (value === undefined) return true;
  if (value.startsWith('"')) return value === `"${meta.etag}"`;
  if (value.startsWith('W/')) return false;
  const ms = Date.parse(value);
  return !Number.isNaN(ms) && Math.floor(ms / 1000) === Math.floor(meta.uploaded / 1000);
}

/**
 * A single `bytes=` range, by syntax only (the engine clamps it and refuses one starting past the
 * end); undefined for none or a malformed one, which S3 answers with the whole object.
 */
export function parseRange(value: string | undefined): RangeRequest | undefined {
  if (value === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(value.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') return { suffix: Number(m[2]) };
  const start = Number(m[1]);
  if (m[2] === '') return { offset: start };
  const end = Number(m[2]);
  if (end < start) return undefined;
  return { offset: start, length: end - start + 1 };
}
