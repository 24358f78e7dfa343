/**
 * CopyObject and the copy source shared with UploadPartCopy: `x-amz-copy-source` (bucket/key,
 * URL-encoded), its `x-amz-copy-source-if-*` conditions (412 on failure) and, for parts,
 * `x-amz-copy-source-range`. The source streams into the destination; nothing is buffered.
 */
import type { PutOptions } from '../../engine/types.ts';
import { assertNullVersion, requireBucket, requireKey, sendXml, type S3Context } from '../context.ts';
import { preconditionStatus, readPreconditions, writeCondition } from '../http-conditions.ts';
import { assertAllowed } from '../key-grant.ts';
import { S3_ERRORS, S3Error } from '../s3-error.ts';
import { COPY_SOURCE_SSE_C_PREFIX, setSseCHeaders, sseCKeyOf, sseCResponseHeaders } from '../sse-c-headers.ts';
import { expirationHeader } from '../expiration-header.ts';
import { element, xmlDocument } from '../xml.ts';
import { customMetadataFrom, httpMetadataFrom, storageClassFrom, writeConditionFailure } from './object.ts';
import { StoreError } from '../../engine/errors.ts';
import type { ObjectMeta } from '../../engine/types.ts';

export interface CopySource {
  meta: ObjectMeta;
  body: AsyncIterable<Uint8Array>;
  length: number;
}

/** The bucket and key `x-amz-copy-source` names (a null version id at most). */
function copySourceOf(ctx: S3Context): { bucket: string; key: string } {
  const raw = String(ctx.req.headers['x-amz-copy-source'] ?? '');
  const [path, sourceQuery] = raw.split('?', 2) as [string, string | undefined];
  assertNullVersion(new URLSearchParams(sourceQuery ?? '').get('versionId'));
  let decoded: string;
  try {
    decoded = decodeURIComponent(path).replace(/^\//, '');
  } catch {
    throw S3_ERRORS.invalidArgument('x-amz-copy-source must be <bucket>/<key>, URL-encoded as UTF-8.');
  }
  const slash = decoded.indexOf('/');
  if (slash <= 0 || slash === decoded.length - 1) throw S3_ERRORS.invalidArgument(`x-amz-copy-source must be <bucket>/<key>, not ${JSON.stringify(raw)}.`);
  return { bucket: decoded.slice(0, slash), key: decoded.slice(slash + 1) };
}

export async function readCopySource(ctx: S3Context, allowRange: boolean): Promise<CopySource> {
  const { bucket, key } = copySourceOf(ctx);
  // The source is read with the key's rights too (the destination was checked before the operation ran).
  assertAllowed(ctx.grant, 'object-read', bucket);
  const rangeHeader = allowRange ? ctx.req.headers['x-amz-copy-source-range'] : undefined;
  let range: { offset: number; length: number } | undefined;
  if (typeof rangeHeader === 'string') {
    const m = /^bytes=(\d+)-(\d+)$/.exec(rangeHeader);
    if (!m || Number(m[2]) < Number(m[1]))
      throw S3_ERRORS.invalidArgument(`x-amz-copy-source-range must be bytes=first-last, first <= last, not ${JSON.stringify(rangeHeader)}.`);
    range = { offset: Number(m[1]), length: Number(m[2]) - Number(m[1]) + 1 };
  }
  // An SSE-C source is read with its key (x-amz-copy-source-server-side-encryption-customer-*).
  const sourceKey = sseCKeyOf(ctx.req.headers, COPY_SOURCE_SSE_C_PREFIX);
  const keyed = sourceKey !== undefined ? { ssecKey: sourceKey } : {};
  const result = await ctx.engine.get(bucket, key, range ? { range, ...keyed } : keyed).catch(async (error: unknown) => {
    if (!(error instanceof StoreError) || error.code !== 'STORE_INVALID_RANGE') throw error;
    const meta = await ctx.engine.head(bucket, key);
    throw meta ? rangeNotSatisfiable(rangeHeader as string, meta.size) : new StoreError('STORE_NO_SUCH_KEY');
  });
  if (!result?.body) throw new StoreError('STORE_NO_SUCH_KEY');
  // A range must lie within the source: S3 does not shorten one that reaches past the end.
  if (range && result.range.length !== range.length) {
    result.body.discard();
    throw rangeNotSatisfiable(rangeHeader as string, result.meta.size);
  }
  if (preconditionStatus(readPreconditions(ctx.req.headers, 'x-amz-copy-source-'), result.meta, false) !== 200) {
    result.body.discard();
    throw new S3Error('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold.');
  }
  return { meta: result.meta, body: result.body.stream(), length: result.range.length };
}

function rangeNotSatisfiable(header: string, size: number): S3Error {
  return new S3Error(
    'InvalidRange',
    416,
    `The requested range is not satisfiable: x-amz-copy-source-range ${header} must lie within the source object's ${size} bytes (the last byte is ${size - 1}).`,
  );
}

/** Headers that change what a copy onto its own key stores besides the metadata (S3 allows such a copy). */
const IN_PLACE_CHANGES = [
  'x-amz-storage-class',
  'x-amz-website-redirect-location',
  'x-amz-server-side-encryption',
  'x-amz-server-side-encryption-aws-kms-key-id',
  'x-amz-server-side-encryption-customer-algorithm',
  'x-amz-checksum-algorithm',
];

export async function copyObject(ctx: S3Context): Promise<void> {
  const directive = String(ctx.req.headers['x-amz-metadata-directive'] ?? 'COPY').toUpperCase();
  if (directive !== 'COPY' && directive !== 'REPLACE')
    throw S3_ERRORS.invalidArgument(`x-amz-metadata-directive must be COPY or REPLACE, not ${JSON.stringify(ctx.req.headers['x-amz-metadata-directive'])}.`);
  const { bucket, key } = copySourceOf(ctx);
  if (bucket === ctx.bucket && key === ctx.key && directive === 'COPY' && !IN_PLACE_CHANGES.some((name) => ctx.req.headers[name] !== undefined)) {
    throw S3_ERRORS.invalidRequest(
      "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, " +
        'storage class, website redirect location or encryption attributes.',
    );
  }
  const source = await readCopySource(ctx, false);
  const storageClass = storageClassFrom(ctx.req.headers);
  const options: PutOptions =
    directive === 'REPLACE'
      ? { httpMetadata: httpMetadataFrom(ctx.req.headers), customMetadata: customMetadataFrom(ctx.req.headers) }
      : { httpMetadata: source.meta.httpMetadata, customMetadata: source.meta.customMetadata };
  options.storageClass = storageClass ?? source.meta.storageClass;
  // The copy is stored with the request's own SSE-C key, if any (the source's does not carry over).
  const ssecKey = sseCKeyOf(ctx.req.headers);
  if (ssecKey !== undefined) options.ssecKey = ssecKey;
  // If-Match / If-None-Match guard the object the copy would replace, as on PutObject.
  const onlyIf = writeCondition(ctx.req.headers);
  if (onlyIf) options.onlyIf = onlyIf;
  const meta = await ctx.engine.put(requireBucket(ctx), requireKey(ctx), { stream: source.body, length: source.length }, options);
  if (!meta) throw await writeConditionFailure(ctx, onlyIf);
  setSseCHeaders(ctx.res, { ...sseCResponseHeaders(meta), ...(await expirationHeader(ctx, meta)) });
  sendXml(ctx, 200, xmlDocument('CopyObjectResult', element('LastModified', new Date(meta.uploaded).toISOString()) + element('ETag', `"${meta.etag}"`)));
}
