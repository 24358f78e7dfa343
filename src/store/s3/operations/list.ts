/**
 * ListObjectsV2, ListObjects (v1) and ListObjectVersions on the engine's list (one entry per key
 * or common prefix). Buckets are never versioned, so every object is its key's only version, with
 * the version id `null`, as S3 lists objects of a bucket that never had versioning enabled.
 */
import { encodeCursor } from '../../engine/list.ts';
import type { ListOptions, ListResult } from '../../engine/types.ts';
import { requireBucket, sendXml, TO_S3_CLASS, type S3Context } from '../context.ts';
import { S3_ERRORS } from '../s3-error.ts';
import { element, OWNER_XML, xmlDocument } from '../xml.ts';

function maxKeys(ctx: S3Context): number {
  const raw = ctx.query.get('max-keys');
  if (raw === null) return 1000;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw S3_ERRORS.invalidArgument('max-keys must be a non-negative integer.');
  return Math.min(n, 1000);
}

/** Refuses an `encoding-type` other than `url` (S3 takes that one or none; another is never ignored). */
export function assertEncodingType(query: URLSearchParams): void {
  const value = query.get('encoding-type');
  if (value !== null && value !== 'url') {
    throw S3_ERRORS.invalidArgument(`Invalid Encoding Method specified in Request: encoding-type must be url (or left out), not ${JSON.stringify(value)}.`);
  }
}

/** A key (or prefix, marker, delimiter) as a listing shows it: URL-encoded, `/` kept, with `encoding-type=url`. */
export function encodeKey(ctx: S3Context, key: string): string {
  return ctx.query.get('encoding-type') === 'url' ? encodeURIComponent(key).replace(/%2F/g, '/') : key;
}

/** Each listed object and common prefix; `owner`: the Owner of each object (ListObjects always, V2 with fetch-owner=true). */
function entries(ctx: S3Context, result: ListResult, owner: boolean): string {
  const contents = result.objects
    .map(
      (o) =>
        `<Contents>${element('Key', encodeKey(ctx, o.key))}${element('LastModified', new Date(o.uploaded).toISOString())}` +
        `${element('ETag', `"${o.etag}"`)}${element('Size', o.size)}${owner ? OWNER_XML : ''}${element('StorageClass', TO_S3_CLASS[o.storageClass])}</Contents>`,
    )
    .join('');
  const prefixes = result.delimitedPrefixes.map((p) => `<CommonPrefixes>${element('Prefix', encodeKey(ctx, p))}</CommonPrefixes>`).join('');
  return contents + prefixes;
}

async function run(ctx: S3Context, limit: number, options: ListOptions): Promise<ListResult> {
  if (limit === 0) {
    // max-keys=0: nothing is listed, but the bucket must exist.
    await ctx.engine.list(requireBucket(ctx), { ...options, limit: 1 });
    return { objects: [], delimitedPrefixes: [], truncated: false };
  }
  return ctx.engine.list(requireBucket(ctx), { ...options, limit });
}

function common(ctx: S3Context): { prefix: string; delimiter: string | undefined } {
  assertEncodingType(ctx.query);
  const delimiter = ctx.query.get('delimiter');
  return { prefix: ctx.query.get('prefix') ?? '', delimiter: delimiter ? delimiter : undefined };
}

export async function listObjectsV2(ctx: S3Context): Promise<void> {
  const limit = maxKeys(ctx);
  const owner = fetchOwner(ctx);
  const { prefix, delimiter } = common(ctx);
  const token = ctx.query.get('continuation-token');
  const startAfter = ctx.query.get('start-after');
  const result = await run(ctx, limit, {
    prefix,
    ...(delimiter ? { delimiter } : {}),
    ...(token ? { cursor: token } : {}),
    ...(startAfter ? { startAfter } : {}),
  });
  const inner =
    element('Name', requireBucket(ctx)) +
    element('Prefix', encodeKey(ctx, prefix)) +
    element('Delimiter', delimiter) +
    element('MaxKeys', limit) +
    element('KeyCount', result.objects.length + result.delimitedPrefixes.length) +
    element('IsTruncated', result.truncated) +
    element('ContinuationToken', token ?? undefined) +
    element('NextContinuationToken', result.truncated ? result.cursor : undefined) +
    element('StartAfter', startAfter ?? undefined) +
    element('EncodingType', ctx.query.get('encoding-type') ?? undefined) +
    entries(ctx, result, owner);
  sendXml(ctx, 200, xmlDocument('ListBucketResult', inner));
}

/** ListObjectsV2's `fetch-owner`: true or false (S3 refuses anything else). */
function fetchOwner(ctx: S3Context): boolean {
  const raw = ctx.query.get('fetch-owner');
  if (raw === null || raw === 'false') return false;
  if (raw === 'true') return true;
  throw S3_ERRORS.invalidArgument(`fetch-owner must be true or false, not ${raw}.`);
}

export async function listObjectsV1(ctx: S3Context): Promise<void> {
  const limit = maxKeys(ctx);
  const { prefix, delimiter } = common(ctx);
  const marker = ctx.query.get('marker') ?? '';
  // A marker that is a common prefix resumes after that whole group, as S3 does.
  const result = await run(ctx, limit, { prefix, ...(delimiter ? { delimiter } : {}), ...resumeAfter(marker, delimiter) });
  const nextMarker = lastEntry(result)?.key;
  const inner =
    element('Name', requireBucket(ctx)) +
    element('Prefix', encodeKey(ctx, prefix)) +
    element('Marker', encodeKey(ctx, marker)) +
    element('Delimiter', delimiter === undefined ? undefined : encodeKey(ctx, delimiter)) +
    element('MaxKeys', limit) +
    element('IsTruncated', result.truncated) +
    element('NextMarker', result.truncated && delimiter && nextMarker !== undefined ? encodeKey(ctx, nextMarker) : undefined) +
    element('EncodingType', ctx.query.get('encoding-type') ?? undefined) +
    entries(ctx, result, true);
  sendXml(ctx, 200, xmlDocument('ListBucketResult', inner));
}

/** The page's last entry, object or common prefix, in list order (UTF-8 bytes): where the next page resumes. */
function lastEntry(result: ListResult): { key: string; isPrefix: boolean } | undefined {
  const object = result.objects.at(-1)?.key;
  const prefix = result.delimitedPrefixes.at(-1);
  if (prefix !== undefined && (object === undefined || Buffer.compare(Buffer.from(prefix), Buffer.from(object)) > 0)) return { key: prefix, isPrefix: true };
  return object === undefined ? undefined : { key: object, isPrefix: false };
}

/** Where a marker resumes: after a whole group when it is a common prefix, else after that key. */
function resumeAfter(marker: string, delimiter: string | undefined): ListOptions {
  if (marker === '') return {};
  return delimiter && marker.endsWith(delimiter) ? { cursor: encodeCursor('p', marker) } : { startAfter: marker };
}

export async function listObjectVersions(ctx: S3Context): Promise<void> {
  const limit = maxKeys(ctx);
  const { prefix, delimiter } = common(ctx);
  const keyMarker = ctx.query.get('key-marker') ?? '';
  const versionIdMarker = ctx.query.get('version-id-marker') ?? '';
  if (versionIdMarker !== '' && keyMarker === '') throw S3_ERRORS.invalidArgument('A version-id marker cannot be specified without a key marker.');
  if (versionIdMarker !== '' && versionIdMarker !== 'null') throw S3_ERRORS.invalidArgument('Invalid version id specified');
  // Each key has one version, so resuming after (key, its version) is resuming after the key.
  const result = await run(ctx, limit, { prefix, ...(delimiter ? { delimiter } : {}), ...resumeAfter(keyMarker, delimiter) });
  const versions = result.objects
    .map(
      (o) =>
        `<Version>${element('Key', encodeKey(ctx, o.key))}<VersionId>null</VersionId><IsLatest>true</IsLatest>` +
        `${element('LastModified', new Date(o.uploaded).toISOString())}${element('ETag', `"${o.etag}"`)}${element('Size', o.size)}${OWNER_XML}` +
        `${element('StorageClass', TO_S3_CLASS[o.storageClass])}</Version>`,
    )
    .join('');
  const prefixes = result.delimitedPrefixes.map((p) => `<CommonPrefixes>${element('Prefix', encodeKey(ctx, p))}</CommonPrefixes>`).join('');
  const next = lastEntry(result);
  const inner =
    element('Name', requireBucket(ctx)) +
    element('Prefix', encodeKey(ctx, prefix)) +
    element('KeyMarker', encodeKey(ctx, keyMarker)) +
    element('VersionIdMarker', versionIdMarker) +
    element('MaxKeys', limit) +
    element('Delimiter', delimiter === undefined ? undefined : encodeKey(ctx, delimiter)) +
    element('IsTruncated', result.truncated) +
    (result.truncated && next !== undefined
      ? element('NextKeyMarker', encodeKey(ctx, next.key)) + (next.isPrefix ? '' : element('NextVersionIdMarker', 'null'))
      : '') +
    element('EncodingType', ctx.query.get('encoding-type') ?? undefined) +
    versions +
    prefixes;
  sendXml(ctx, 200, xmlDocument('ListVersionsResult', inner));
}
