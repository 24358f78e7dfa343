/** ListObjectsV2 and ListObjects (v1) on the engine's list (one entry per key or common prefix). */
import { encodeCursor } from '../../engine/list.ts';
import type { ListOptions, ListResult } from '../../engine/types.ts';
import { requireBucket, sendXml, TO_S3_CLASS, type S3Context } from '../context.ts';
import { S3_ERRORS } from '../s3-error.ts';
import { element, xmlDocument } from '../xml.ts';

function maxKeys(ctx: S3Context): number {
  const raw = ctx.query.get('max-keys');
  if (raw === null) return 1000;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw S3_ERRORS.invalidArgument('max-keys must be a non-negative integer.');
  return Math.min(n, 1000);
}

function encodeKey(ctx: S3Context, key: string): string {
  return ctx.query.get('encoding-type') === 'url' ? encodeURIComponent(key).replace(/%2F/g, '/') : key;
}

function entries(ctx: S3Context, result: ListResult): string {
  const contents = result.objects.map((o) => `<Contents>${element('Key', encodeKey(ctx, o.key))}${element('LastModified', new Date(o.uploaded).toISOString())}${element('ETag', `"${o.etag}"`)}${element('Size', o.size)}${element('StorageClass', TO_S3_CLASS[o.storageClass])}</Contents>`).join('');
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
  const delimiter = ctx.query.get('delimiter');
  return { prefix: ctx.query.get('prefix') ?? '', delimiter: delimiter ? delimiter : undefined };
}

export async function listObjectsV2(ctx: S3Context): Promise<void> {
  const limit = maxKeys(ctx);
  const { prefix, delimiter } = common(ctx);
  const token = ctx.query.get('continuation-token');
  const startAfter = ctx.query.get('start-after');
  const result = await run(ctx, limit, {
    prefix, ...(delimiter ? { delimiter } : {}), ...(token ? { cursor: token } : {}), ...(startAfter ? { startAfter } : {}),
  });
  const inner = element('Name', requireBucket(ctx)) + element('Prefix', encodeKey(ctx, prefix)) + element('Delimiter', delimiter)
    + element('MaxKeys', limit) + element('KeyCount', result.objects.length + result.delimitedPrefixes.length)
    + element('IsTruncated', result.truncated) + element('ContinuationToken', token ?? undefined)
    + element('NextContinuationToken', result.truncated ? result.cursor : undefined) + element('StartAfter', startAfter ?? undefined)
    + element('EncodingType', ctx.query.get('encoding-type') ?? undefined) + entries(ctx, result);
  sendXml(ctx, 200, xmlDocument('ListBucketResult', inner));
}

export async function listObjectsV1(ctx: S3Context): Promise<void> {
  const limit = maxKeys(ctx);
  const { prefix, delimiter } = common(ctx);
  const marker = ctx.query.get('marker') ?? '';
  // A marker that is a common prefix resumes after that whole group, as S3 does.
  const resume: ListOptions = marker === '' ? {}
    : delimiter && marker.endsWith(delimiter) ? { cursor: encodeCursor('p', marker) } : { startAfter: marker };
  const result = await run(ctx, limit, { prefix, ...(delimiter ? { delimiter } : {}), ...resume });
  const lastObject = result.objects.at(-1)?.key;
  const lastPrefix = result.delimitedPrefixes.at(-1);
  const nextMarker = lastPrefix !== undefined && (lastObject === undefined || lastPrefix > lastObject) ? lastPrefix : lastObject;
  const inner = element('Name', requireBucket(ctx)) + element('Prefix', prefix) + element('Marker', marker) + element('Delimiter', delimiter)
    + element('MaxKeys', limit) + element('IsTruncated', result.truncated)
    + element('NextMarker', result.truncated && delimiter ? nextMarker : undefined) + entries(ctx, result);
  sendXml(ctx, 200, xmlDocument('ListBucketResult', inner));
}
