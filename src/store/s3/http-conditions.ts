/**
 * S3's HTTP preconditions and ranges (RFC 7232/7233 as S3 applies them): If-Match and
 * If-Unmodified-Since failing give 412, If-None-Match and If-Modified-Since failing give 304 on
 * reads (412 on writes); a Range starting past the end is 416, a malformed one is ignored.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Conditional, EtagMatcher, ObjectMeta, RangeRequest } from '../engine/types.ts';
import { evaluateConditional } from '../engine/conditions.ts';

function etagList(value: string | undefined): EtagMatcher[] | undefined {
  if (value === undefined) return undefined;
  return value.split(',').map((part) => part.trim()).filter((part) => part !== '').map((part): EtagMatcher => {
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
    out.mustMatch = { secondsGranularity: true, ...(ifMatch ? { etagMatches: ifMatch } : {}), ...(ifUnmodifiedSince !== undefined ? { uploadedBefore: ifUnmodifiedSince + 1000 } : {}) };
  }
  if (ifNoneMatch || ifModifiedSince !== undefined) {
    out.mustChange = { secondsGranularity: true, ...(ifNoneMatch ? { etagDoesNotMatch: ifNoneMatch } : {}), ...(ifModifiedSince !== undefined ? { uploadedAfter: ifModifiedSince } : {}) };
  }
  return out;
}

/** The condition a write (PutObject, CompleteMultipartUpload) puts on the object it would replace. */
export function writeCondition(headers: IncomingHttpHeaders): Conditional | undefined {
  const conds = readPreconditions(headers);
  return conds.mustMatch || conds.mustChange ? { ...conds.mustMatch, ...conds.mustChange, secondsGranularity: true } : undefined;
}

/** 200 when the request may proceed, else the status to answer with. */
export function preconditionStatus(conds: { mustMatch?: Conditional; mustChange?: Conditional }, meta: ObjectMeta | null, read: boolean): 200 | 304 | 412 {
  if (conds.mustMatch && !evaluateConditional(conds.mustMatch, meta)) return 412;
  if (conds.mustChange && !evaluateConditional(conds.mustChange, meta)) return read ? 304 : 412;
  return 200;
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
