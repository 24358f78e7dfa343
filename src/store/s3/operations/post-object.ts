/**
 * PostObject: a browser form upload (`POST /<bucket>`, multipart/form-data) authorised by a SigV4
 * POST policy, as AWS's `createPresignedPost` / boto3's `generate_presigned_post` make them (S3 API
 * reference "POST Object" and "Creating a POST policy"). The request carries no Authorization
 * header: the form's x-amz-signature is the HMAC of its base64 policy under the SigV4 signing key
 * of x-amz-credential, and the policy's conditions bound every other field and the file's size.
 *
 * Order: the fields before the file (at most POST_PRE_DATA_MAX bytes) -> signature (behind the
 * failed-authentication limits) -> policy (expiry on the server's clock, each condition, every
 * field covered) -> the key's permission -> the file, streamed into the store and checked against
 * content-length-range before its last bytes are handed on, so a refused file is never stored.
 * Fields after the file are ignored, as S3 does.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { accountStore } from '../../engine/account-store.ts';
import { addCorsHeaders } from '../cors-headers.ts';
import { refuseUnsupportedWriteHeaders } from '../write-headers.ts';
import type { StoreEngine } from '../../engine/store-engine.ts';
import type { PutOptions } from '../../engine/types.ts';
import { assertAllowed, type S3AccessKey } from '../key-grant.ts';
import { S3_CHECKSUM_ALGORITHMS, verifiedUpload } from '../payload.ts';
import { formBoundary, readForm, type FormFile } from '../post-form.ts';
import { S3_ERRORS, S3Error } from '../s3-error.ts';
import type { LimitedVerifier } from '../signature-limits.ts';
import { ALGORITHM, awsUriEncode, signatureMatches, signingKey } from '../sigv4.ts';
import { element } from '../xml.ts';
import { checksumHeaders, contentMd5Hex, customMetadataFrom, httpMetadataFrom, storageClassFrom } from './object.ts';

/** S3's limit on the form fields before the file part (boundaries and part headers included). */
export const POST_PRE_DATA_MAX = 20 * 1024;
/** What is read after the file (fields S3 ignores) before the connection is closed instead. */
const POST_TRAILING_MAX = 64 * 1024;

export interface PostObjectOptions {
  /** The whole store (the key's account's view is taken once the key is known). */
  engine: StoreEngine;
  keys: (accessKeyId: string) => Promise<S3AccessKey | undefined> | S3AccessKey | undefined;
  verify: LimitedVerifier;
}

export interface PostObjectRequest {
  req: IncomingMessage;
  res: ServerResponse;
  bucket: string;
  /** The path the form was posted to, as received (`/bucket`, or `/` on a virtual host). */
  rawPath: string;
  requestId: string;
  now: number;
}

/** A form upload: POST on a bucket with no query, no Authorization header and a multipart/form-data body. */
export function isPostObject(
  method: string | undefined,
  bucket: string | undefined,
  key: string | undefined,
  rawQuery: string,
  headers: IncomingHttpHeaders,
): boolean {
  return (
    method === 'POST' &&
    bucket !== undefined &&
    key === undefined &&
    rawQuery === '' &&
    headers.authorization === undefined &&
    /^\s*multipart\/form-data\s*(;|$)/i.test(headers['content-type'] ?? '')
  );
}

const policyInvalid = (why: string) => new S3Error('InvalidPolicyDocument', 400, `Invalid Policy: ${why}`);
const policyRefused = (why: string) => new S3Error('AccessDenied', 403, `Invalid according to Policy: ${why}`);
const missingField = (name: string) =>
  S3_ERRORS.invalidArgument(
    `Bucket POST must contain a field named '${name}'. If it is specified, please check the order of the fields: every field must come before the file.`,
  );

/** Fields no policy condition needs to name (S3: the signature, the file, the policy itself, x-ignore-*). */
function exempt(name: string): boolean {
  return name === 'x-amz-signature' || name === 'file' || name === 'policy' || name.startsWith('x-ignore-');
}

export async function postObject(options: PostObjectOptions, request: PostObjectRequest): Promise<void> {
  const { req, res, bucket, requestId, now } = request;
  const boundary = formBoundary(req.headers['content-type']);
  if (boundary === undefined)
    throw new S3Error(
      'MalformedPOSTRequest',
      400,
      'The body of your POST request is not well-formed multipart/form-data: its Content-Type names no valid boundary.',
    );
  const form = await readForm(req, boundary, POST_PRE_DATA_MAX);

  // Field names are case-insensitive; each may be sent once.
  const fields = new Map<string, string>();
  for (const field of form.fields) {
    const name = field.name.toLowerCase();
    if (name.startsWith('x-ignore-')) continue;
    if (fields.has(name)) throw S3_ERRORS.invalidArgument(`The form field '${field.name}' appears more than once: send each field once.`);
    fields.set(name, field.value);
  }
  const file = form.file;
  if (!file) throw S3_ERRORS.invalidArgument('POST requires exactly one file upload per request: add a field named file, after every other field.');
  if (!fields.has('policy') && !fields.has('x-amz-signature')) {
    throw new S3Error(
      'AccessDenied',
      403,
      'Missing authentication: a form upload needs a POST policy signed with AWS Signature Version 4 ' +
        '(policy, x-amz-algorithm, x-amz-credential, x-amz-date and x-amz-signature fields, as createPresignedPost makes them).',
    );
  }
  // A Signature Version 2 form (AWSAccessKeyId, signature): refused as S3 refuses SigV2 where it takes SigV4 only.
  if (fields.has('awsaccesskeyid') && !fields.has('x-amz-algorithm')) throw S3_ERRORS.signatureV2();
  for (const name of ['key', 'policy', 'x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-signature']) {
    if (!fields.has(name)) throw missingField(name);
  }
  if (fields.has('bucket') && fields.get('bucket') !== bucket) {
    throw S3_ERRORS.invalidArgument(`The form's bucket field names '${fields.get('bucket')}', but the form was posted to bucket '${bucket}'.`);
  }

  // A form signed with temporary credentials carries their session token: edgeport issues none (as a signed header would be refused).
  if (fields.has('x-amz-security-token')) throw S3_ERRORS.sessionToken();
  const grant = await authenticate(options, fields, req.socket.remoteAddress);
  const engine = accountStore(options.engine, grant.accountId);
  // A page's upload: the Access-Control-* headers of the key's account's bucket, on errors too.
  if (req.headers.origin !== undefined) await addCorsHeaders(req, res, bucket, (name) => engine.corsOfBucketsNamed(name));
  const policy = parsePolicy(fields.get('policy')!);
  if (now >= policy.expiration) throw policyRefused('Policy expired.');
  const key = fields.get('key')!.replaceAll('${filename}', file.filename ?? '');
  if (key === '') throw S3_ERRORS.invalidArgument('User key must have a length greater than 0: the key field (after ${filename} is replaced) is empty.');
  const sizeRange = checkConditions(policy.conditions, fields, bucket, key);
  assertAllowed(grant, 'object-write', bucket);

  const acl = fields.get('acl');
  if (acl !== undefined && acl !== 'private') {
    throw new S3Error('AccessControlListNotSupported', 400, `The bucket does not allow ACLs: leave the acl field out or set it to private (not ${acl}).`);
  }
  // The form's fields stand for the headers a PutObject would send: the same ones are refused.
  const asHeaders = Object.fromEntries(fields) as IncomingHttpHeaders;
  refuseUnsupportedWriteHeaders('object', asHeaders, false);
  if (fields.has('tagging')) throw S3_ERRORS.notImplemented('Object tagging (the tagging field)');
  const storageClass = storageClassFrom(asHeaders);
  const md5 = contentMd5Hex(asHeaders);
  const put: PutOptions = {
    httpMetadata: httpMetadataFrom(asHeaders, 'text'),
    customMetadata: customMetadataFrom(asHeaders, 'text'),
    ...(storageClass ? { storageClass } : {}),
    ...(md5 ? { expectedChecksum: { algorithm: 'md5', hex: md5 } } : {}),
  };
  const { body, checksums } = verifiedUpload(sizeChecked(file, sizeRange), checksumHeader(fields), undefined);
  put.verifiedChecksums = checksums;
  const meta = await engine.put(bucket, key, { stream: body }, put);
  if (!meta) throw new Error('An unconditional put returned no object.');

  const drained = await form.drain(POST_TRAILING_MAX);
  respond(res, {
    bucket,
    key,
    etag: `"${meta.etag}"`,
    requestId,
    location: objectUrl(req, request.rawPath, key),
    close: !drained,
    headers: checksumHeaders(meta.checksums),
    status: fields.get('success_action_status'),
    redirect: fields.get('success_action_redirect') ?? fields.get('redirect'),
  });
}

/** Checks x-amz-algorithm, x-amz-credential, x-amz-date and the policy's signature; returns the key. */
async function authenticate(options: PostObjectOptions, fields: ReadonlyMap<string, string>, address: string | undefined): Promise<S3AccessKey> {
  if (fields.get('x-amz-algorithm') !== ALGORITHM) throw S3_ERRORS.invalidArgument(`x-amz-algorithm must be ${ALGORITHM}.`);
  const amzDate = fields.get('x-amz-date')!;
  if (!/^\d{8}T\d{6}Z$/.test(amzDate)) throw S3_ERRORS.invalidArgument('x-amz-date must be of the form yyyyMMddTHHmmssZ.');
  const [accessKeyId, date, region, service, terminator, ...rest] = fields.get('x-amz-credential')!.split('/');
  if (!accessKeyId || !date || !region || service !== 's3' || terminator !== 'aws4_request' || rest.length > 0 || date !== amzDate.slice(0, 8)) {
    throw S3_ERRORS.invalidArgument('x-amz-credential must be <access key id>/<yyyymmdd of x-amz-date>/<region>/s3/aws4_request.');
  }
  let grant: S3AccessKey | undefined;
  await options.verify.guarded(
    address,
    async (id) => (grant = await options.keys(id))?.secret,
    async (lookup) => {
      const secret = await lookup(accessKeyId);
      if (secret === undefined) throw S3_ERRORS.invalidAccessKeyId();
      if (!signatureMatches(signingKey(secret, date, region, 's3'), fields.get('policy')!, fields.get('x-amz-signature')!)) {
        throw S3_ERRORS.signatureDoesNotMatch();
      }
    },
  );
  return grant!;
}

type Condition = { kind: 'eq' | 'starts-with'; field: string; value: string; text: string } | { kind: 'content-length-range'; min: number; max: number };

interface Policy {
  expiration: number;
  conditions: Condition[];
}

/** Conditions as S3 quotes them in its refusals: `["eq", "$key", "a"]`. */
function quote(items: readonly unknown[]): string {
  return `[${items.map((item) => JSON.stringify(item)).join(', ')}]`;
}

function parsePolicy(base64: string): Policy {
  let document: unknown;
  try {
    const text = Buffer.from(base64, 'base64').toString('utf8');
    document = JSON.parse(text);
  } catch {
    throw policyInvalid('Invalid JSON: the policy field must be the base64 of a JSON document.');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw policyInvalid('Invalid JSON: the policy must be a JSON object.');
  const { expiration, conditions } = document as { expiration?: unknown; conditions?: unknown };
  if (expiration === undefined) throw policyInvalid('Policy missing expiration.');
  const expires = typeof expiration === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/.test(expiration) ? Date.parse(expiration) : Number.NaN;
  if (Number.isNaN(expires))
    throw policyInvalid(`Invalid 'expiration' value: ${JSON.stringify(expiration)}; use an ISO 8601 UTC time such as 2030-01-01T00:00:00Z.`);
  if (conditions === undefined) throw policyInvalid('Policy missing conditions.');
  if (!Array.isArray(conditions)) throw policyInvalid("Invalid 'conditions' value: it must be an array.");
  return { expiration: expires, conditions: conditions.map(parseCondition) };
}

function parseCondition(raw: unknown): Condition {
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const entries = Object.entries(raw);
    if (entries.length !== 1) throw policyInvalid('Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.');
    const [field, value] = entries[0]!;
    if (typeof value !== 'string') throw policyInvalid(`Invalid Simple-Condition: the value of ${JSON.stringify(field)} must be a string.`);
    return { kind: 'eq', field: field.toLowerCase(), value, text: JSON.stringify(raw) };
  }
  if (!Array.isArray(raw) || typeof raw[0] !== 'string')
    throw policyInvalid(`Invalid Condition: ${JSON.stringify(raw)} is neither {"field": "value"} nor ["operator", ...].`);
  const operator = raw[0].toLowerCase();
  if (operator === 'eq' || operator === 'starts-with') {
    const [, name, value] = raw as unknown[];
    if (raw.length !== 3 || typeof name !== 'string' || !name.startsWith('$') || typeof value !== 'string') {
      throw policyInvalid(`Invalid Condition: ${quote(raw)} must be ["${operator}", "$field", "value"].`);
    }
    return { kind: operator, field: name.slice(1).toLowerCase(), value, text: quote(raw) };
  }
  if (operator === 'content-length-range') {
    const bound = (value: unknown) => (typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN);
    const min = bound(raw[1]);
    const max = bound(raw[2]);
    if (raw.length !== 3 || !Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 0 || max < min) {
      throw policyInvalid(`Invalid content-length-range: ${quote(raw)} must be ["content-length-range", min, max] with whole numbers 0 <= min <= max.`);
    }
    return { kind: 'content-length-range', min, max };
  }
  throw policyInvalid(`Invalid Condition: unknown operator ${JSON.stringify(raw[0])}; use eq, starts-with or content-length-range.`);
}

/**
 * Every condition must hold and every field (but the exempt ones) be named by one; returns the
 * size range the file must fall in (every content-length-range at once).
 */
function checkConditions(conditions: readonly Condition[], fields: ReadonlyMap<string, string>, bucket: string, key: string): { min: number; max: number } {
  const covered = new Set<string>();
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  for (const condition of conditions) {
    if (condition.kind === 'content-length-range') {
      min = Math.max(min, condition.min);
      max = Math.min(max, condition.max);
      continue;
    }
    covered.add(condition.field);
    // The bucket is the one posted to; the key, the one the file is stored under.
    const value = condition.field === 'bucket' ? bucket : condition.field === 'key' ? key : (fields.get(condition.field) ?? '');
    const holds =
      condition.kind === 'eq'
        ? value === condition.value
        : // A Content-Type may list several types: each must start with the prefix.
          condition.field === 'content-type'
          ? value.split(',').every((type) => type.trim().startsWith(condition.value))
          : value.startsWith(condition.value);
    if (!holds) throw policyRefused(`Policy Condition failed: ${condition.text}`);
  }
  const extra = [...fields.keys()].filter((name) => !exempt(name) && !covered.has(name));
  if (extra.length > 0) throw policyRefused(`Extra input fields: ${extra.join(', ')}`);
  return { min, max };
}

/** The form's x-amz-checksum-<algorithm> field, as the header a PutObject would send, for the body to be verified against it. */
function checksumHeader(fields: ReadonlyMap<string, string>): IncomingHttpHeaders {
  const given = [...fields.keys()].filter(
    (name) => name.startsWith('x-amz-checksum-') && name !== 'x-amz-checksum-algorithm' && name !== 'x-amz-checksum-type',
  );
  if (given.length === 0) return {};
  const algorithms: readonly string[] = S3_CHECKSUM_ALGORITHMS;
  if (given.length > 1 || !algorithms.includes(given[0]!.slice('x-amz-checksum-'.length))) {
    throw S3_ERRORS.invalidRequest(`Give at most one checksum field, one of ${S3_CHECKSUM_ALGORITHMS.map((a) => `x-amz-checksum-${a}`).join(', ')}.`);
  }
  return { [given[0]!]: fields.get(given[0]!)! };
}

/** The file's bytes, refused past `max` at once and under `min` before its last bytes are handed on. */
async function* sizeChecked(file: FormFile, range: { min: number; max: number }): AsyncIterable<Uint8Array> {
  let size = 0;
  let held: Uint8Array | undefined;
  for await (const chunk of file.body) {
    size += chunk.byteLength;
    if (size > range.max) {
      throw new S3Error(
        'EntityTooLarge',
        400,
        `Your proposed upload exceeds the maximum allowed size: the policy's content-length-range allows at most ${range.max} bytes.`,
      );
    }
    if (held) yield held;
    held = chunk;
  }
  if (size < range.min) {
    throw new S3Error(
      'EntityTooSmall',
      400,
      `Your proposed upload is smaller than the minimum allowed size: ${size} bytes, and the policy's content-length-range asks for at least ${range.min}.`,
    );
  }
  if (held) yield held;
}

/** The stored object's URL, under the address the form was posted to. */
function objectUrl(req: IncomingMessage, rawPath: string, key: string): string {
  const scheme = (req.socket as TLSSocket).encrypted ? 'https' : 'http';
  return `${scheme}://${req.headers.host ?? 'localhost'}${rawPath.replace(/\/$/, '')}/${awsUriEncode(key, true)}`;
}

interface Outcome {
  bucket: string;
  key: string;
  etag: string;
  requestId: string;
  location: string;
  /** The request was not read to its end: the connection is closed after the answer. */
  close: boolean;
  headers: Record<string, string>;
  status: string | undefined;
  redirect: string | undefined;
}

/**
 * success_action_redirect (or redirect): 303 to it with bucket, key and etag added to its query;
 * else success_action_status 200 (empty), 201 (a PostResponse document) or 204 (the default, also
 * for any other value). A redirect that is not an absolute http(s) URL is ignored, as S3 does.
 */
function respond(res: ServerResponse, outcome: Outcome): void {
  const headers: Record<string, string | number> = { ...outcome.headers, etag: outcome.etag, 'x-amz-request-id': outcome.requestId };
  if (outcome.close) headers.connection = 'close';
  const target = redirectUrl(outcome.redirect);
  if (target) {
    target.searchParams.set('bucket', outcome.bucket);
    target.searchParams.set('key', outcome.key);
    target.searchParams.set('etag', outcome.etag);
    res.writeHead(303, { ...headers, location: target.href, 'content-length': 0 });
    res.end();
    return;
  }
  headers.location = outcome.location;
  if (outcome.status === '201') {
    // As S3 writes it: no namespace, unlike the API's other documents.
    const body =
      `<?xml version="1.0" encoding="UTF-8"?>\n<PostResponse>${element('Location', outcome.location)}${element('Bucket', outcome.bucket)}` +
      `${element('Key', outcome.key)}${element('ETag', outcome.etag)}</PostResponse>`;
    res.writeHead(201, { ...headers, 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  if (outcome.status === '200') headers['content-length'] = 0;
  res.writeHead(outcome.status === '200' ? 200 : 204, headers);
  res.end();
}

function redirectUrl(text: string | undefined): URL | undefined {
  if (text === undefined) return undefined;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}
