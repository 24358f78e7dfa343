/**
 * AWS Signature Version 4 verification for the S3 API: the Authorization header form and the
 * presigned-URL (query) form, with the payload hash the client declared (a hex SHA-256,
 * UNSIGNED-PAYLOAD, or one of the aws-chunked streaming modes, checked chunk by chunk in
 * payload.ts). Spec: AWS "Signature Version 4 signing process" and "Authenticating Requests:
 * Using Query Parameters" / "Using the Authorization Header (chunked upload)".
 */
import * as crypto from 'node:crypto';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { S3_ERRORS, type S3Error } from './s3-error.ts';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const MAX_SKEW_MS = 15 * 60 * 1000;
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export interface SigningContext {
  accessKeyId: string;
  /** yyyymmddThhmmssZ */
  amzDate: string;
  /** date/region/s3/aws4_request */
  scope: string;
  signingKey: Buffer;
  /** The request's signature: the seed of chunk signatures. */
  signature: string;
  /** As declared by the client: hex SHA-256, UNSIGNED-PAYLOAD or a STREAMING-* mode; DEFERRED below. */
  payloadHash: string;
  /**
   * When a client signed the body's SHA-256 without declaring it (no x-amz-content-sha256, as curl
   * does), the signature can only be checked once the body is read: this checks it then, and
   * answers undefined when it matches, else the SignatureDoesNotMatch to throw (showing what the
   * signature should have covered).
   */
  verifyDeferred?: (bodySha256: string) => S3Error | undefined;
}

export type SecretLookup = (accessKeyId: string) => string | undefined | Promise<string | undefined>;

const RFC3986_EXTRA = /[!'()*]/g;

/**
 * AWS URI encoding: everything but A-Z a-z 0-9 - _ . ~ is %XX (uppercase); '/' kept when asked.
 * encodeURIComponent differs only in leaving !'()* alone.
 */
export function awsUriEncode(text: string, keepSlash: boolean): string {
  let out = encodeURIComponent(text);
  if (out.includes('!') || out.includes("'") || out.includes('(') || out.includes(')') || out.includes('*')) {
    out = out.replace(RFC3986_EXTRA, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  }
  return keepSlash ? out.replace(/%2F/g, '/') : out;
}

/** Unreserved characters and '%' only (a character class: far quicker than a per-character alternation). */
const UNRESERVED_OR_PERCENT = /^[A-Za-z0-9\-_.~%]*$/;
/** An escape the canonical form spells differently: not upper-case hex, or of an unreserved character. */
const NOT_CANONICAL_ESCAPE = /%(?![0-9A-F]{2})|%(?:3[0-9]|4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A]|2D|2E|5F|7E)/;

/** Already canonical: unreserved characters and upper-case %XX escapes of anything but an unreserved character. */
function isCanonical(raw: string): boolean {
  return UNRESERVED_OR_PERCENT.test(raw) && (!raw.includes('%') || !NOT_CANONICAL_ESCAPE.test(raw));
}

/**
 * The canonical (AWS URI-encoded) form of one received, percent-encoded component. Clients send
 * components already in that form nearly always, so that case is recognised without decoding.
 */
function canonicalComponent(raw: string): string {
  if (isCanonical(raw)) return raw;
  try {
    return awsUriEncode(decodeURIComponent(raw), false);
  } catch {
    // Escapes that are not UTF-8 (e.g. %A0): keep each escaped byte as the client signed it.
    return raw.replace(/%([0-9A-Fa-f]{2})|[^%]+|%/g, (match, hex: string | undefined) => {
      if (hex === undefined) return awsUriEncode(match, false);
      const char = String.fromCharCode(parseInt(hex, 16));
      return /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${hex.toUpperCase()}`;
    });
  }
}

export function canonicalUri(rawPath: string): string {
  return rawPath.split('/').map(canonicalComponent).join('/') || '/';
}

/** A query all of whose names and values are canonical already (checked once, not per component); an '=' in a value is not. */
const CANONICAL_QUERY_CHARACTERS = /^[A-Za-z0-9\-_.~%=&]*$/;

export function canonicalQuery(rawQuery: string, skip?: string): string {
  if (rawQuery === '') return '';
  const keys: string[] = [];
  const values: string[] = [];
  const allCanonical = CANONICAL_QUERY_CHARACTERS.test(rawQuery) && (!rawQuery.includes('%') || !NOT_CANONICAL_ESCAPE.test(rawQuery));
  // Clients nearly always send their parameters sorted already: then no sort is needed.
  let sorted = true;
  for (const part of rawQuery.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const key = allCanonical ? rawKey : canonicalComponent(rawKey);
    if (key === skip) continue;
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    const value = allCanonical && !rawValue.includes('=') ? rawValue : canonicalComponent(rawValue);
    const last = keys.length - 1;
    if (sorted && last >= 0 && compareParams(keys[last]!, values[last]!, key, value) > 0) sorted = false;
    keys.push(key);
    values.push(value);
  }
  let out = '';
  if (sorted) {
    for (let i = 0; i < keys.length; i++) out += i === 0 ? `${keys[i]}=${values[i]}` : `&${keys[i]}=${values[i]}`;
    return out;
  }
  const order = keys.map((_, i) => i).sort((a, b) => compareParams(keys[a]!, values[a]!, keys[b]!, values[b]!));
  for (const i of order) out += out === '' ? `${keys[i]}=${values[i]}` : `&${keys[i]}=${values[i]}`;
  return out;
}

/** By name, then by value (code unit order, as AWS sorts). */
function compareParams(ak: string, av: string, bk: string, bv: string): number {
  if (ak !== bk) return ak < bk ? -1 : 1;
  return av < bv ? -1 : av > bv ? 1 : 0;
}

/** Spaces and tabs (and the other ASCII white space) around and inside a header value; never a byte above 0x7f. */
const HEADER_SPACE_RUN = /[ \t\n\v\f\r]+/g;
const HEADER_SPACE_ENDS = /^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g;

/**
 * The canonical headers, each value as its received bytes: node gives header values decoded as
 * latin1 (one character per byte), so a UTF-8 value (`é` is C3 A9) is two characters here, and
 * the canonical request is hashed as latin1 (canonicalRequestHash) to get those bytes back. Only
 * ASCII white space is trimmed and collapsed: JavaScript's \s would also take 0xA0, a byte of
 * many UTF-8 characters (`à` is C3 A0).
 */
function canonicalHeaders(headers: IncomingHttpHeaders, signed: readonly string[]): string {
  return signed
    .map((name) => {
      const raw = headers[name];
      const value = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
      return `${name}:${value.replace(HEADER_SPACE_ENDS, '').replace(HEADER_SPACE_RUN, ' ')}\n`;
    })
    .join('');
}

/** Anything beyond ASCII: only header values can hold it (the URI and query parts are percent-encoded). */
// eslint-disable-next-line no-control-regex -- every ASCII character, control characters included
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * The SHA-256 of a canonical request (or of canonical trailers): its characters are bytes (header
 * values as node decoded them, latin1), so it is hashed as latin1; a hash of the string would
 * encode each such byte as UTF-8 and never match a signature over a non-ASCII value.
 */
export function canonicalRequestHash(text: string): string {
  return NON_ASCII.test(text) ? sha256Hex(Buffer.from(text, 'latin1')) : sha256Hex(text);
}

const keyCache = new Map<string, Buffer>();

/** The derived key changes once a day per secret and region: cache it (bounded). */
export function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  const id = `${secret}\0${date}\0${region}\0${service}`;
  let key = keyCache.get(id);
  if (!key) {
    key = deriveSigningKey(secret, date, region, service);
    if (keyCache.size > 1000) keyCache.clear();
    keyCache.set(id, key);
  }
  return key;
}

function deriveSigningKey(secret: string, date: string, region: string, service: string): Buffer {
  const kDate = createHmac('sha256', `AWS4${secret}`).update(date).digest();
  const kRegion = createHmac('sha256', kDate).update(region).digest();
  const kService = createHmac('sha256', kRegion).update(service).digest();
  return createHmac('sha256', kService).update('aws4_request').digest();
}

/** crypto.hash (Node 20.12+) hashes in one call, about twice as fast as a Hash object for short input. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string }).hash;

export function sha256Hex(data: string | Uint8Array): string {
  return oneShotHash ? oneShotHash('sha256', data, 'hex') : createHash('sha256').update(data).digest('hex');
}

/** A signing key's HMAC pads: the key XOR 0x36 (64 bytes), and the key XOR 0x5c followed by room for the inner digest (96). */
interface HmacPads {
  inner: Buffer;
  outer: Buffer;
}

/** Pads per signing key (signingKey() hands out one Buffer per key, so they are computed once a day per key). */
const padsOf = new WeakMap<Buffer, HmacPads>();

function hmacPads(key: Buffer): HmacPads {
  let pads = padsOf.get(key);
  if (!pads) {
    // A key longer than the block is hashed first (RFC 2104); SigV4's derived keys are 32 bytes.
    const block = key.length > 64 ? createHash('sha256').update(key).digest() : key;
    pads = { inner: Buffer.alloc(64, 0x36), outer: Buffer.alloc(96, 0) };
    pads.outer.fill(0x5c, 0, 64);
    for (let i = 0; i < block.length; i++) {
      pads.inner[i]! ^= block[i]!;
      pads.outer[i]! ^= block[i]!;
    }
    padsOf.set(key, pads);
  }
  return pads;
}

/**
 * HMAC-SHA256 (RFC 2104) as two one-shot hashes of the key's cached pads and the text: createHmac
 * sets up an OpenSSL MAC context per call, which cost more than both hashes (3 vs 1.5 us here).
 */
export function hmacHex(key: Buffer, text: string): string {
  if (!oneShotHash) return createHmac('sha256', key).update(text).digest('hex');
  const pads = hmacPads(key);
  const message = Buffer.allocUnsafe(64 + Buffer.byteLength(text));
  pads.inner.copy(message, 0);
  message.write(text, 64, 'utf8');
  // The outer pad's last 32 bytes are scratch for the inner digest (this runs synchronously).
  pads.outer.write(oneShotHash('sha256', message, 'hex'), 64, 'hex');
  return oneShotHash('sha256', pads.outer, 'hex');
}

/** Compares an HMAC of `text` with a hex signature in constant time. */
export function signatureMatches(key: Buffer, text: string, signature: string): boolean {
  if (signature.length !== 64 || !/^[0-9a-f]{64}$/.test(signature)) return false;
  return timingSafeEqual(Buffer.from(hmacHex(key, text), 'latin1'), Buffer.from(signature, 'latin1'));
}

const PAYLOAD_MODES = new Set([
  'UNSIGNED-PAYLOAD',
  'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
  'DEFERRED',
]);

/** A declared payload hash edgeport can check: a mode it implements, or a hex SHA-256. */
function isPayloadHash(value: string): boolean {
  return PAYLOAD_MODES.has(value) || /^[0-9a-f]{64}$/.test(value);
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

function parseAmzDate(amzDate: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!m) return Number.NaN;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

/**
 * An HTTP `Date` (`Sun, 06 Nov 1994 08:49:37 GMT`, or with a numeric zone such as `-0000`, which
 * Python's email.utils.formatdate writes) in SigV4's basic form (`19941106T084937Z`), or undefined
 * when it is no date. Read with Date.parse, as the conditional headers' dates are: the signature
 * over the time and the skew window decide the rest.
 */
function httpDateToAmzDate(value: string): string | undefined {
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString().replace(/[-:]|\.\d{3}/g, '');
}

/**
 * The time a header-signed request was signed at: `X-Amz-Date`, or when it sends none its `Date`
 * (SigV4 takes either; X-Amz-Date wins when both are sent), in the basic form the string to sign
 * holds. A request with neither, or with an X-Amz-Date that is no such time, is refused as S3
 * refuses it.
 */
function headerSigningTime(headers: IncomingHttpHeaders): { amzDate: string; signedAt: number } {
  const amz = headers['x-amz-date'];
  const date = headers.date;
  const amzDate = typeof amz === 'string' ? amz : typeof date === 'string' ? httpDateToAmzDate(date) : undefined;
  const signedAt = amzDate === undefined ? Number.NaN : parseAmzDate(amzDate);
  if (Number.isNaN(signedAt)) throw S3_ERRORS.missingRequestDate();
  return { amzDate: amzDate!, signedAt };
}

/**
 * Signature Version 2 (an `Authorization: AWS <key>:<signature>` header, or `AWSAccessKeyId` and
 * `Signature` in the query): refused as S3 refuses it in the regions that take SigV4 only.
 */
function isSignatureV2(authorization: string | undefined, query: URLSearchParams): boolean {
  if (authorization !== undefined) return /^AWS [^:\s]+:/.test(authorization);
  return query.get('X-Amz-Algorithm') === null && query.has('AWSAccessKeyId') && query.has('Signature');
}

/** X-Amz-Expires as S3 checks it: a whole number of seconds, not negative, at most a week (604800). */
function presignedExpiry(raw: string | null): number {
  if (raw === null) throw S3_ERRORS.authorizationQueryParameters(MISSING_QUERY_PARAMETERS);
  if (!/^-?\d+$/.test(raw)) throw S3_ERRORS.authorizationQueryParameters('X-Amz-Expires should be a number');
  const expires = Number(raw);
  if (expires < 0) throw S3_ERRORS.authorizationQueryParameters('X-Amz-Expires must be non-negative');
  if (expires > MAX_PRESIGN_SECONDS) {
    throw S3_ERRORS.authorizationQueryParameters(
      'X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds',
    );
  }
  return expires;
}

/** A presigned URL's own query parameters, every one of them required. */
const PRESIGN_PARAMETERS = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Signature', 'X-Amz-Date', 'X-Amz-SignedHeaders', 'X-Amz-Expires'] as const;

const MISSING_QUERY_PARAMETERS =
  'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.';

export interface VerifiableRequest {
  method: string;
  /** The parsed query (the same parameters as rawQuery). */
  query: URLSearchParams;
  /** Path as received, still percent-encoded. */
  rawPath: string;
  /** Query string as received, without '?'. */
  rawQuery: string;
  headers: IncomingHttpHeaders;
}

/** Verifies a request's SigV4 signature (header or query form); throws the S3 error otherwise. */
export async function verifySignature(request: VerifiableRequest, lookup: SecretLookup, now: number): Promise<SigningContext> {
  const query = request.query;
  const authorization = request.headers.authorization;
  if (isSignatureV2(authorization, query)) throw S3_ERRORS.signatureV2();
  // edgeport's keys are long-lived: a session token (temporary credentials) names a key it never issued.
  if (request.headers['x-amz-security-token'] !== undefined || query.has('X-Amz-Security-Token')) throw S3_ERRORS.sessionToken();
  // Any of a presigned URL's own parameters makes it one (a truncated URL is told what it lacks, not that it is unsigned).
  const presigned = query.get('X-Amz-Algorithm') !== null || (!authorization && PRESIGN_PARAMETERS.some((name) => query.has(name)));
  if (!authorization && !presigned) throw S3_ERRORS.missingSecurityHeader();

  let credential: string;
  let signedHeaders: string[];
  let signature: string;
  let amzDate: string;
  let payloadHash: string;
  if (presigned) {
    if (PRESIGN_PARAMETERS.some((name) => query.get(name) === null)) throw S3_ERRORS.authorizationQueryParameters(MISSING_QUERY_PARAMETERS);
    if (query.get('X-Amz-Algorithm') !== ALGORITHM) throw S3_ERRORS.authorizationQueryParameters(`X-Amz-Algorithm only supports "${ALGORITHM}"`);
    credential = query.get('X-Amz-Credential') ?? '';
    signedHeaders = (query.get('X-Amz-SignedHeaders') ?? '').split(';');
    signature = query.get('X-Amz-Signature') ?? '';
    amzDate = query.get('X-Amz-Date') ?? '';
    const expires = presignedExpiry(query.get('X-Amz-Expires'));
    const signedAt = parseAmzDate(amzDate);
    if (Number.isNaN(signedAt)) throw S3_ERRORS.authorizationQueryParameters(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`);
    // A URL valid for 0 seconds has expired as soon as it was signed.
    if (expires === 0 || now > signedAt + expires * 1000) throw S3_ERRORS.expiredPresigned();
    if (signedAt - now > MAX_SKEW_MS) throw S3_ERRORS.requestTimeTooSkewed();
    const declared = request.headers['x-amz-content-sha256'];
    payloadHash = typeof declared === 'string' ? declared : 'UNSIGNED-PAYLOAD';
  } else {
    const m = /^AWS4-HMAC-SHA256\s+Credential=([^,\s]+)\s*,\s*SignedHeaders=([^,\s]+)\s*,\s*Signature=([0-9a-f]{64})\s*$/.exec(authorization ?? '');
    if (!m) throw S3_ERRORS.authorizationMalformed('expected "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...".');
    [, credential, , signature] = m as unknown as [string, string, string, string];
    signedHeaders = m[2]!.split(';');
    const time = headerSigningTime(request.headers);
    amzDate = time.amzDate;
    if (Math.abs(now - time.signedAt) > MAX_SKEW_MS) throw S3_ERRORS.requestTimeTooSkewed();
    const declared = request.headers['x-amz-content-sha256'];
    payloadHash = typeof declared === 'string' ? declared : hasBody(request.headers) ? 'DEFERRED' : EMPTY_SHA256;
  }

  if (!isPayloadHash(payloadHash)) {
    throw S3_ERRORS.invalidArgument(
      'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, ' +
        'STREAMING-AWS4-HMAC-SHA256-PAYLOAD(-TRAILER) or the hex SHA-256 of the body.',
    );
  }
  const scopeProblem = credentialProblem(credential, amzDate.slice(0, 8), presigned);
  if (scopeProblem !== undefined) {
    throw presigned
      ? S3_ERRORS.authorizationQueryParameters(`Error parsing the X-Amz-Credential parameter; ${scopeProblem}`)
      : S3_ERRORS.authorizationMalformed(scopeProblem);
  }
  const [accessKeyId, date, region] = credential.split('/') as [string, string, string];
  if (!signedHeaders.includes('host')) throw S3_ERRORS.authorizationMalformed('SignedHeaders must include host.');
  const secret = await lookup(accessKeyId);
  if (secret === undefined) throw S3_ERRORS.invalidAccessKeyId();

  const head = [
    request.method,
    canonicalUri(request.rawPath),
    canonicalQuery(request.rawQuery, presigned ? 'X-Amz-Signature' : undefined),
    canonicalHeaders(request.headers, signedHeaders),
    signedHeaders.join(';'),
  ].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const key = signingKey(secret, date, region, 's3');
  const context: SigningContext = { accessKeyId, amzDate, scope, signingKey: key, signature, payloadHash };
  if (payloadHash === 'DEFERRED') {
    context.verifyDeferred = (hash) => (requestSignatureMatches(context, head, hash) ? undefined : signatureMismatch(context, head, hash));
    return context;
  }
  if (!requestSignatureMatches(context, head, payloadHash)) throw signatureMismatch(context, head, payloadHash);
  return context;
}

/**
 * SignatureDoesNotMatch as S3 answers it: the answer shows what the signature should have covered
 * (the canonical request of `head` with the payload hash `hash`), so a client can see where its
 * signing differs.
 */
function signatureMismatch(context: SigningContext, head: string, hash: string): S3Error {
  const canonicalRequest = `${head}\n${hash}`;
  return S3_ERRORS.signatureDoesNotMatch({
    AWSAccessKeyId: context.accessKeyId,
    StringToSign: stringToSignOf(context, canonicalRequest),
    SignatureProvided: context.signature,
    CanonicalRequest: canonicalRequest.replace(SSE_C_KEY_LINE, '$1<an SSE-C key is never shown>'),
  });
}

/** A signed SSE-C key in a canonical request (its value is a secret, even in an error sent to its own sender). */
const SSE_C_KEY_LINE = /^((?:x-amz-copy-source-)?x-amz-server-side-encryption-customer-key:).*$/gm;

/**
 * What is wrong with a credential scope (`<key>/<yyyymmdd>/<region>/s3/aws4_request`), said as
 * what it should be, or undefined when nothing is. `day` is the request's own date.
 */
function credentialProblem(credential: string, day: string, presigned: boolean): string | undefined {
  const parts = credential.split('/');
  const [accessKeyId, date, region, service, terminator] = parts;
  if (parts.length !== 5 || !accessKeyId || !date || !region) {
    return `the Credential "${credential}" is not <access key id>/<yyyymmdd>/<region>/s3/aws4_request (it has ${parts.length} slash-separated parts, not 5).`;
  }
  if (service !== 's3') return `incorrect service "${service}". This endpoint belongs to "s3".`;
  if (terminator !== 'aws4_request') return `incorrect terminal "${terminator}". This endpoint uses "aws4_request".`;
  if (date !== day) {
    return `Invalid credential date "${date}". This date is not the same as ${presigned ? 'X-Amz-Date' : "the request's X-Amz-Date (or Date)"}, "${day}".`;
  }
  return undefined;
}

/** Whether the request signature is that of the canonical request `head` with the payload hash `hash`. */
function requestSignatureMatches(context: SigningContext, head: string, hash: string): boolean {
  return signatureMatches(context.signingKey, stringToSignOf(context, `${head}\n${hash}`), context.signature);
}

function stringToSignOf(context: SigningContext, canonicalRequest: string): string {
  return `${ALGORITHM}\n${context.amzDate}\n${context.scope}\n${canonicalRequestHash(canonicalRequest)}`;
}
