/**
 * CORS on the S3 API, as S3 answers browsers: `OPTIONS` preflights (unsigned) and the
 * Access-Control-* headers of actual requests that carry an Origin, from the bucket's rules
 * (PutBucketCors). A request without an Origin never reads them; with one, they come from the
 * engine's in-memory cache.
 *
 * Which bucket: a preflight is unsigned, so it names a bucket but no account. It is matched against
 * the rules of every account's bucket of that name and allowed when one of them allows it, so it
 * tells nothing about a bucket whose owner published no matching rule: a bucket that does not
 * exist, one with no rules and one whose rules do not match all answer the same 403. An actual
 * request is signed: its CORS headers come from its own account's bucket (or, when it fails
 * authentication, from the rules a preflight would have used).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { matchCorsRule, requestedHeaders, type BucketCors, type CorsRule } from '../engine/cors.ts';
import { S3Error } from './s3-error.ts';

export const CORS_ERRORS = {
  missingOrigin: () => new S3Error('BadRequest', 400, 'Insufficient information. Origin request header needed.'),
  missingMethod: () => new S3Error('BadRequest', 400, 'Invalid Access-Control-Request-Method: null'),
  forbidden: () =>
    new S3Error(
      'AccessForbidden',
      403,
      'CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, ' +
        "request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.",
    ),
} as const;

const VARY = 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method';

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The first rule, among the buckets' (in stored-name order), that allows the request. */
function matching(buckets: readonly BucketCors[], origin: string, method: string, headers: readonly string[]): CorsRule | undefined {
  for (const { rules } of buckets) {
    const rule = matchCorsRule(rules, { origin, method, headers });
    if (rule) return rule;
  }
  return undefined;
}

/** The headers S3 sends for a rule that allowed `origin`; a preflight adds the headers it asked for. */
function ruleHeaders(rule: CorsRule, origin: string, askedHeaders: string | undefined): Record<string, string> {
  const any = rule.allowedOrigins.includes('*');
  const out: Record<string, string> = {
    'access-control-allow-origin': any ? '*' : origin,
    'access-control-allow-methods': rule.allowedMethods.join(', '),
    vary: VARY,
  };
  // S3 allows credentials (cookies, HTTP auth) for an origin a rule names; never for `*`, which browsers refuse with credentials.
  if (!any) out['access-control-allow-credentials'] = 'true';
  if (askedHeaders !== undefined && askedHeaders.trim() !== '') out['access-control-allow-headers'] = askedHeaders;
  if (rule.exposeHeaders.length > 0) out['access-control-expose-headers'] = rule.exposeHeaders.join(', ');
  if (rule.maxAgeSeconds !== undefined) out['access-control-max-age'] = String(rule.maxAgeSeconds);
  return out;
}

/**
 * The Access-Control-* headers answering a preflight, or throws (400 without an Origin or
 * Access-Control-Request-Method, 403 AccessForbidden when no rule allows it).
 */
export async function preflightHeaders(
  req: IncomingMessage,
  bucket: string | undefined,
  lookup: (bucket: string) => Promise<BucketCors[]>,
): Promise<Record<string, string>> {
  const origin = first(req.headers.origin);
  if (origin === undefined || origin === '') throw CORS_ERRORS.missingOrigin();
  const method = first(req.headers['access-control-request-method']);
  if (method === undefined || method === '') throw CORS_ERRORS.missingMethod();
  const asked = first(req.headers['access-control-request-headers']);
  // A name holding `/` or none (the service itself) is no bucket's: nothing allows it.
  const buckets = bucket === undefined || bucket.includes('/') ? [] : await lookup(bucket);
  const rule = matching(buckets, origin, method, requestedHeaders(asked));
  if (!rule) throw CORS_ERRORS.forbidden();
  return ruleHeaders(rule, origin, asked);
}

/** Answers a preflight: 200 with the Access-Control-* headers, or throws as preflightHeaders does. */
export async function answerPreflight(
  req: IncomingMessage,
  res: ServerResponse,
  bucket: string | undefined,
  lookup: (bucket: string) => Promise<BucketCors[]>,
  requestId: string,
): Promise<void> {
  const headers = await preflightHeaders(req, bucket, lookup);
  res.writeHead(200, { ...headers, 'content-length': 0, 'x-amz-request-id': requestId });
  res.end();
}

/**
 * Sets the Access-Control-* headers of an actual request (any answer, errors included) when it
 * carries an Origin that one of the bucket's rules allows for its method. Never throws: CORS
 * headers are an addition to the answer, not a reason to fail it.
 */
export async function addCorsHeaders(
  req: IncomingMessage,
  res: ServerResponse,
  bucket: string | undefined,
  lookup: (bucket: string) => Promise<BucketCors[]>,
): Promise<void> {
  const origin = first(req.headers.origin);
  if (origin === undefined || origin === '' || bucket === undefined || bucket.includes('/') || res.headersSent) return;
  let buckets: BucketCors[];
  try {
    buckets = await lookup(bucket);
  } catch {
    return;
  }
  const rule = matching(buckets, origin, req.method ?? 'GET', []);
  if (!rule || res.headersSent) return;
  for (const [name, value] of Object.entries(ruleHeaders(rule, origin, undefined))) res.setHeader(name, value);
}
