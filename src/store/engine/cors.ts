/**
 * Bucket CORS rules, as S3 defines them (PutBucketCors): the rule shape, its validation, and the
 * matching of a browser's request against a bucket's rules. The S3 API (XML) and the management
 * API (JSON) both store rules through the engine, so one validation and one matcher serve both.
 */
import { StoreError } from './errors.ts';
import { ReadThroughCache } from './read-through-cache.ts';

export const CORS_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'] as const;
export type CorsMethod = (typeof CORS_METHODS)[number];

export interface CorsRule {
  id?: string;
  /** Origins, each with at most one `*` (`https://*.example.com`, `*`). */
  allowedOrigins: string[];
  allowedMethods: CorsMethod[];
  /** Request headers a preflight may ask for, each with at most one `*`; compared case-insensitively. */
  allowedHeaders: string[];
  /** Response headers the browser lets the page read. */
  exposeHeaders: string[];
  /** How long the browser may cache a preflight's answer. */
  maxAgeSeconds?: number;
}

/** S3's bounds: 100 rules, a 64 KiB document; ours for a rule's ID (S3's) and for every list and string in it. */
export const CORS_LIMITS = { rules: 100, documentBytes: 64 * 1024, idLength: 255 } as const;

function invalid(message: string): StoreError {
  return new StoreError('STORE_INVALID_CORS', { message });
}

function isCorsMethod(value: string): value is CorsMethod {
  return (CORS_METHODS as readonly string[]).includes(value);
}

/** Throws STORE_INVALID_CORS, naming the first problem and its fix, unless S3 would accept the rules. */
export function assertCorsRules(rules: readonly CorsRule[]): void {
  if (rules.length === 0) throw invalid('A CORS configuration needs at least one rule.');
  if (rules.length > CORS_LIMITS.rules) throw invalid(`A CORS configuration has at most ${CORS_LIMITS.rules} rules; this one has ${rules.length}.`);
  for (const rule of rules) {
    if (rule.id !== undefined && rule.id.length > CORS_LIMITS.idLength) throw invalid(`A CORS rule ID is at most ${CORS_LIMITS.idLength} characters long.`);
    if (rule.allowedOrigins.length === 0) throw invalid('Every CORS rule needs at least one AllowedOrigin.');
    if (rule.allowedMethods.length === 0) throw invalid('Every CORS rule needs at least one AllowedMethod.');
    for (const method of rule.allowedMethods) {
      if (!isCorsMethod(method)) throw invalid(`Found unsupported HTTP method in CORS config. Unsupported method is ${method}`);
    }
    for (const origin of rule.allowedOrigins) {
      if (wildcards(origin) > 1) throw invalid(`AllowedOrigin "${origin}" can not have more than one wildcard.`);
    }
    for (const header of rule.allowedHeaders) {
      if (wildcards(header) > 1) throw invalid(`AllowedHeader "${header}" can not have more than one wildcard.`);
    }
    for (const header of rule.exposeHeaders) {
      if (header.includes('*')) throw invalid(`ExposeHeader "${header}" contains wildcard. We currently do not support wildcard for ExposeHeader.`);
    }
    if (rule.maxAgeSeconds !== undefined && (!Number.isSafeInteger(rule.maxAgeSeconds) || rule.maxAgeSeconds < 0)) {
      throw invalid('MaxAgeSeconds must be a whole number of seconds, 0 or more.');
    }
  }
  const size = Buffer.byteLength(JSON.stringify(rules));
  if (size > CORS_LIMITS.documentBytes) throw invalid(`A CORS configuration is at most ${CORS_LIMITS.documentBytes} bytes; this one is ${size}.`);
}

function wildcards(text: string): number {
  let count = 0;
  for (const c of text) if (c === '*') count++;
  return count;
}

/** Whether `value` matches `pattern`, whose one `*` (if any) stands for any run of characters. */
export function wildcardMatch(pattern: string, value: string): boolean {
  const star = pattern.indexOf('*');
  if (star < 0) return pattern === value;
  const head = pattern.slice(0, star);
  const tail = pattern.slice(star + 1);
  return value.length >= head.length + tail.length && value.startsWith(head) && value.endsWith(tail);
}

/** What a browser asks: the page's origin, the method, and (for a preflight) the headers it means to send, lowercase. */
export interface CorsRequest {
  origin: string;
  method: string;
  headers: readonly string[];
}

/** The first rule allowing the request, as S3 picks it, or undefined. Origins and methods compare exactly, headers case-insensitively. */
export function matchCorsRule(rules: readonly CorsRule[], request: CorsRequest): CorsRule | undefined {
  return rules.find(
    (rule) =>
      rule.allowedOrigins.some((origin) => wildcardMatch(origin, request.origin)) &&
      (rule.allowedMethods as readonly string[]).includes(request.method) &&
      request.headers.every((header) => rule.allowedHeaders.some((allowed) => wildcardMatch(allowed.toLowerCase(), header))),
  );
}

/** The requested header names of an Access-Control-Request-Headers value, lowercase, without blanks. */
export function requestedHeaders(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
}

/** A bucket's rules, by the bucket's stored name (`<account id>/<name>`, or bare for a bucket of no account). */
export interface BucketCors {
  bucket: string;
  rules: CorsRule[];
}

/**
 * The rules of every bucket of a name, kept in memory so that a request with an Origin costs no
 * metadata read on the hot path (requests without one never ask): see ReadThroughCache for how
 * long an entry lives and how many are kept.
 */
export class CorsCache extends ReadThroughCache<BucketCors[]> {}
