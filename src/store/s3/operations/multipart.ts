/**
 * Multipart operations: CreateMultipartUpload, UploadPart, UploadPartCopy, CompleteMultipartUpload,
 * AbortMultipartUpload, ListParts, ListMultipartUploads. Uploads are the engine's, so one created
 * by a script can take parts and be completed here, and the reverse.
 */
import { StoreError } from '../../engine/errors.ts';
import { normaliseEtag } from '../../engine/multipart.ts';
import { readSmallBody, requireBucket, requireKey, sendEmpty, sendXml, TO_S3_CLASS, type S3Context } from '../context.ts';
import { declaredLength, verifiedBody } from '../payload.ts';
import { S3_ERRORS } from '../s3-error.ts';
import { element, requestXml, xmlDocument } from '../xml.ts';
import { readCopySource } from './copy.ts';
import { customMetadataFrom, httpMetadataFrom, storageClassFrom } from './object.ts';

function uploadId(ctx: S3Context): string {
  return ctx.query.get('uploadId') ?? '';
}

function partNumber(ctx: S3Context): number {
  const n = Number(ctx.query.get('partNumber'));
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw S3_ERRORS.invalidArgument('Part number must be an integer between 1 and 10000, inclusive.');
  return n;
}

export async function createMultipartUpload(ctx: S3Context): Promise<void> {
  const headers = ctx.req.headers;
  const storageClass = storageClassFrom(headers);
  const id = await ctx.engine.createMultipartUpload(requireBucket(ctx), requireKey(ctx), {
    httpMetadata: httpMetadataFrom(headers), customMetadata: customMetadataFrom(headers), ...(storageClass ? { storageClass } : {}),
  });
  sendXml(ctx, 200, xmlDocument('InitiateMultipartUploadResult', element('Bucket', ctx.bucket) + element('Key', ctx.key) + element('UploadId', id)));
}

export async function uploadPart(ctx: S3Context): Promise<void> {
  const n = partNumber(ctx);
  const length = declaredLength(ctx.req.headers);
  if (length === undefined) throw S3_ERRORS.missingContentLength();
  const body = verifiedBody(ctx.req, { headers: ctx.req.headers, signing: ctx.signing });
  const part = await ctx.engine.uploadPart(requireBucket(ctx), requireKey(ctx), uploadId(ctx), n, { stream: body, length });
  sendEmpty(ctx, 200, { etag: `"${part.etag}"` });
}

export async function uploadPartCopy(ctx: S3Context): Promise<void> {
  const n = partNumber(ctx);
  const source = await readCopySource(ctx, true);
  const part = await ctx.engine.uploadPart(requireBucket(ctx), requireKey(ctx), uploadId(ctx), n, { stream: source.body, length: source.length });
  sendXml(ctx, 200, xmlDocument('CopyPartResult', element('ETag', `"${part.etag}"`) + element('LastModified', new Date(ctx.now).toISOString())));
}

export async function completeMultipartUpload(ctx: S3Context): Promise<void> {
  const text = await readSmallBody(ctx);
  let parts: Array<{ partNumber: number; etag: string }>;
  try {
    const doc = requestXml.parse(text) as { CompleteMultipartUpload?: { Part?: Array<{ PartNumber?: unknown; ETag?: unknown }> } };
    if (!doc.CompleteMultipartUpload) throw new Error('no root');
    parts = (doc.CompleteMultipartUpload.Part ?? []).map((p) => ({ partNumber: Number(p.PartNumber), etag: normaliseEtag(String(p.ETag ?? '').trim()) }));
  } catch {
    throw S3_ERRORS.malformedXml();
  }
  if (parts.length === 0 || parts.some((p) => !Number.isInteger(p.partNumber))) throw S3_ERRORS.malformedXml();
  for (let i = 1; i < parts.length; i++) if (parts[i]!.partNumber <= parts[i - 1]!.partNumber) throw new StoreError('STORE_INVALID_PART_ORDER');
  const meta = await ctx.engine.completeMultipartUpload(requireBucket(ctx), requireKey(ctx), uploadId(ctx), parts);
  sendXml(ctx, 200, xmlDocument('CompleteMultipartUploadResult',
    element('Location', `/${ctx.bucket}/${ctx.key}`) + element('Bucket', ctx.bucket) + element('Key', ctx.key) + element('ETag', `"${meta.etag}"`)));
}

export async function abortMultipartUpload(ctx: S3Context): Promise<void> {
  await ctx.engine.abortMultipartUpload(requireBucket(ctx), requireKey(ctx), uploadId(ctx));
  sendEmpty(ctx, 204);
}

export async function listParts(ctx: S3Context): Promise<void> {
  const upload = await ctx.engine.getUpload(requireBucket(ctx), requireKey(ctx), uploadId(ctx));
  if (!upload) throw new StoreError('STORE_NO_SUCH_UPLOAD');
  const parts = await ctx.engine.listParts(requireBucket(ctx), requireKey(ctx), uploadId(ctx));
  const marker = Number(ctx.query.get('part-number-marker') ?? 0);
  const max = Math.min(Number(ctx.query.get('max-parts') ?? 1000), 1000);
  const after = parts.filter((p) => p.partNumber > marker);
  const page = after.slice(0, max);
  const truncated = after.length > page.length;
  const inner = element('Bucket', ctx.bucket) + element('Key', ctx.key) + element('UploadId', uploadId(ctx))
    + element('StorageClass', TO_S3_CLASS[upload.storageClass]) + element('PartNumberMarker', marker) + element('MaxParts', max)
    + element('IsTruncated', truncated) + element('NextPartNumberMarker', truncated ? page.at(-1)!.partNumber : undefined)
    + page.map((p) => `<Part>${element('PartNumber', p.partNumber)}${element('LastModified', new Date(p.uploaded).toISOString())}${element('ETag', `"${p.etag}"`)}${element('Size', p.size)}</Part>`).join('');
  sendXml(ctx, 200, xmlDocument('ListPartsResult', inner));
}

export async function listMultipartUploads(ctx: S3Context): Promise<void> {
  const prefix = ctx.query.get('prefix') ?? '';
  const uploads = await ctx.engine.listUploads(requireBucket(ctx), { prefix });
  const inner = element('Bucket', ctx.bucket) + element('Prefix', prefix) + element('MaxUploads', 1000) + element('IsTruncated', false)
    + uploads.map((u) => `<Upload>${element('Key', u.key)}${element('UploadId', u.uploadId)}${element('StorageClass', TO_S3_CLASS[u.storageClass])}${element('Initiated', new Date(u.initiated).toISOString())}</Upload>`).join('');
  sendXml(ctx, 200, xmlDocument('ListMultipartUploadsResult', inner));
}

