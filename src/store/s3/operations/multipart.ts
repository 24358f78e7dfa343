/**
 * Multipart operations: CreateMultipartUpload, UploadPart, UploadPartCopy, CompleteMultipartUpload,
 * AbortMultipartUpload, ListParts, ListMultipartUploads. Uploads are the engine's, so one created
 * by a script can take parts and be completed here, and the reverse.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { StoreError } from '../../engine/errors.ts';
import type { Checksums, ChecksumType, CompleteOptions, UploadChecksumAlgorithm, UploadedPart } from '../../engine/types.ts';
import { normaliseEtag } from '../../engine/multipart.ts';
import { readSmallBody, requireBucket, requireKey, sendEmpty, sendXml, TO_S3_CLASS, type S3Context } from '../context.ts';
import { CHECKSUM_BYTES, declaredLength, S3_CHECKSUM_ALGORITHMS, verifiedUpload } from '../payload.ts';
import { S3_ERRORS } from '../s3-error.ts';
import { element, OWNER_FIELDS, OWNER_XML, parseRequestXml, xmlDocument } from '../xml.ts';
import { readCopySource } from './copy.ts';
import { checksumElements, checksumHeaders, checksumType, customMetadataFrom, httpMetadataFrom, storageClassFrom, writeConditionFailure } from './object.ts';
import { assertEncodingType, encodeKey } from './list.ts';
import { writeCondition } from '../http-conditions.ts';
import { setSseCHeaders, sseCKeyHeaders, sseCKeyOf, sseCResponseHeaders } from '../sse-c-headers.ts';
import { expirationHeader } from '../expiration-header.ts';

function uploadId(ctx: S3Context): string {
  return ctx.query.get('uploadId') ?? '';
}

/** UploadPart's `partNumber`: digits only (`01` is 1; `1.0`, `0x1` or ` 1` are no part number), 1 to 10000. */
function partNumber(ctx: S3Context): number {
  const raw = ctx.query.get('partNumber') ?? '';
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 10_000) throw S3_ERRORS.invalidArgument('Part number must be an integer between 1 and 10000, inclusive.');
  return n;
}

const CHECKSUM_NAMES = '[CRC32, CRC32C, CRC64NVME, SHA1, SHA256]';

/**
 * The algorithm an upload keeps part checksums in and how the object's checksum is made of them:
 * `x-amz-checksum-algorithm` with `x-amz-checksum-type` COMPOSITE (the default but for CRC64NVME:
 * the algorithm over the parts' checksums, `-<parts>`) or FULL_OBJECT (CRCs only: the CRC of the
 * whole object, combined from the parts' CRCs at completion).
 */
function uploadChecksum(headers: IncomingHttpHeaders): { algorithm: UploadChecksumAlgorithm; type: ChecksumType } | undefined {
  const raw = headers['x-amz-checksum-algorithm'];
  if (typeof raw !== 'string') {
    if (headers['x-amz-checksum-type'] !== undefined)
      throw S3_ERRORS.invalidRequest('The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.');
    return undefined;
  }
  const algorithm = raw.toLowerCase();
  if (!(S3_CHECKSUM_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw S3_ERRORS.invalidRequest(`Checksum algorithm provided is unsupported. Please try again with any of the valid types: ${CHECKSUM_NAMES}`);
  }
  const rawType = headers['x-amz-checksum-type'];
  const type = typeof rawType === 'string' ? rawType.toUpperCase() : algorithm === 'crc64nvme' ? 'FULL_OBJECT' : 'COMPOSITE';
  if (type !== 'COMPOSITE' && type !== 'FULL_OBJECT') throw S3_ERRORS.invalidRequest('Value for x-amz-checksum-type header is invalid.');
  if (type === 'COMPOSITE' && algorithm === 'crc64nvme')
    throw S3_ERRORS.invalidRequest('The COMPOSITE checksum type cannot be used with the crc64nvme checksum algorithm.');
  if (type === 'FULL_OBJECT' && algorithm.startsWith('sha'))
    throw S3_ERRORS.invalidRequest(`The FULL_OBJECT checksum type cannot be used with the ${algorithm} checksum algorithm.`);
  return { algorithm: algorithm as UploadChecksumAlgorithm, type };
}

export async function createMultipartUpload(ctx: S3Context): Promise<void> {
  const headers = ctx.req.headers;
  const storageClass = storageClassFrom(headers);
  const checksum = uploadChecksum(headers);
  const ssecKey = sseCKeyOf(headers);
  const id = await ctx.engine.createMultipartUpload(requireBucket(ctx), requireKey(ctx), {
    httpMetadata: httpMetadataFrom(headers),
    customMetadata: customMetadataFrom(headers),
    ...(storageClass ? { storageClass } : {}),
    ...(checksum ? { checksumAlgorithm: checksum.algorithm, checksumType: checksum.type } : {}),
    ...(ssecKey !== undefined ? { ssecKey } : {}),
  });
  setSseCHeaders(ctx.res, sseCKeyHeaders(ssecKey));
  if (checksum) {
    ctx.res.setHeader('x-amz-checksum-algorithm', checksum.algorithm.toUpperCase());
    ctx.res.setHeader('x-amz-checksum-type', checksum.type);
  }
  sendXml(ctx, 200, xmlDocument('InitiateMultipartUploadResult', element('Bucket', ctx.bucket) + element('Key', ctx.key) + element('UploadId', id)));
}

export async function uploadPart(ctx: S3Context): Promise<void> {
  const n = partNumber(ctx);
  const length = declaredLength(ctx.req.headers);
  if (length === undefined) throw S3_ERRORS.missingContentLength();
  const ssecKey = sseCKeyOf(ctx.req.headers);
  const { body, checksums } = verifiedUpload(ctx.req, ctx.req.headers, ctx.signing);
  const part = await ctx.engine
    .uploadPart(
      requireBucket(ctx),
      requireKey(ctx),
      uploadId(ctx),
      n,
      { stream: body, length },
      { verifiedChecksums: checksums, ...(ssecKey !== undefined ? { ssecKey } : {}) },
    )
    .catch(partKeyRefusal);
  // The checksum is echoed when the upload keeps it, so a client names it back at completion.
  sendEmpty(ctx, 200, { etag: `"${part.etag}"`, ...checksumHeaders(part.checksums ?? {}), ...sseCKeyHeaders(ssecKey) });
}

export async function uploadPartCopy(ctx: S3Context): Promise<void> {
  const n = partNumber(ctx);
  const ssecKey = sseCKeyOf(ctx.req.headers);
  const source = await readCopySource(ctx, true);
  // The source's own key was checked as it was opened: what the engine refuses here is the upload's.
  const part = await ctx.engine
    .uploadPart(requireBucket(ctx), requireKey(ctx), uploadId(ctx), n, { stream: source.body, length: source.length }, ssecKey !== undefined ? { ssecKey } : {})
    .catch(partKeyRefusal);
  setSseCHeaders(ctx.res, sseCKeyHeaders(ssecKey));
  sendXml(ctx, 200, xmlDocument('CopyPartResult', element('ETag', `"${part.etag}"`) + element('LastModified', new Date(ctx.now).toISOString())));
}

/**
 * A part (UploadPart, UploadPartCopy) for an upload created with an SSE-C key, sent without that
 * key or with another one: S3 answers both 400 InvalidRequest, in its words for parts (a wrong key
 * is not AccessDenied there, as it is for reading an object; a completion given another key is
 * answered the same). The engine's own errors (and what the binding answers) stay as they are.
 */
function partKeyRefusal(error: unknown): never {
  if (error instanceof StoreError && error.code === 'STORE_SSEC_KEY_MISMATCH')
    throw S3_ERRORS.invalidRequest('The provided encryption parameters did not match the ones used originally.');
  if (error instanceof StoreError && error.code === 'STORE_SSEC_KEY_REQUIRED')
    throw S3_ERRORS.invalidRequest(
      'The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.',
    );
  throw error;
}

export async function completeMultipartUpload(ctx: S3Context): Promise<void> {
  const text = await readSmallBody(ctx);
  let parts: UploadedPart[];
  try {
    const doc = parseRequestXml(text) as { CompleteMultipartUpload?: { Part?: Array<Record<string, unknown>> } };
    if (!doc.CompleteMultipartUpload) throw new Error('no root');
    parts = (doc.CompleteMultipartUpload.Part ?? []).map((p) => ({
      partNumber: Number(p.PartNumber),
      etag: normaliseEtag(String(p.ETag ?? '').trim()),
      checksums: namedChecksums(p),
    }));
  } catch {
    throw S3_ERRORS.malformedXml();
  }
  if (parts.length === 0 || parts.some((p) => !Number.isInteger(p.partNumber))) throw S3_ERRORS.malformedXml();
  for (let i = 1; i < parts.length; i++) if (parts[i]!.partNumber <= parts[i - 1]!.partNumber) throw new StoreError('STORE_INVALID_PART_ORDER');
  // If-Match / If-None-Match guard the object the completion would replace (S3 conditional writes).
  const onlyIf = writeCondition(ctx.req.headers);
  const expectedChecksum = await completionChecksum(ctx);
  const ssecKey = sseCKeyOf(ctx.req.headers);
  // A client retrying after a lost answer gets the same success (S3), not NoSuchUpload. An SSE-C
  // upload with a checksum algorithm needs its key, as on S3; one without completes without it.
  const meta = await ctx.engine
    .completeMultipartUpload(requireBucket(ctx), requireKey(ctx), uploadId(ctx), parts, {
      answerRepeat: true,
      ssecKeyWithChecksums: true,
      ...(onlyIf ? { onlyIf } : {}),
      ...(expectedChecksum ? { expectedChecksum } : {}),
      ...(ssecKey !== undefined ? { ssecKey } : {}),
    })
    .catch(async (error: unknown) => {
      if (error instanceof StoreError && error.code === 'STORE_PRECONDITION_FAILED') throw await writeConditionFailure(ctx, onlyIf);
      // A key given for an SSE-C upload must be its own: another is refused as a part's would be.
      if (error instanceof StoreError && error.code === 'STORE_SSEC_KEY_MISMATCH') partKeyRefusal(error);
      if (error instanceof StoreError && error.code === 'STORE_SSEC_KEY_REQUIRED') {
        throw S3_ERRORS.invalidRequest(
          'The multipart upload initiate requested encryption and a checksum algorithm. The complete request must include the appropriate encryption parameters.',
        );
      }
      throw error;
    });
  const checksums = checksumElements(meta.checksums);
  setSseCHeaders(ctx.res, { ...sseCResponseHeaders(meta), ...(await expirationHeader(ctx, meta)) });
  sendXml(
    ctx,
    200,
    xmlDocument(
      'CompleteMultipartUploadResult',
      element('Location', `/${ctx.bucket}/${ctx.key}`) +
        element('Bucket', ctx.bucket) +
        element('Key', ctx.key) +
        element('ETag', `"${meta.etag}"`) +
        (checksums === '' ? '' : checksums + element('ChecksumType', checksumType(meta.checksums))),
    ),
  );
}

/**
 * The whole object's checksum a completion states (`x-amz-checksum-<algorithm>`, base64, `-<parts>`
 * optional), to be checked against the checksum the parts make: only an upload that keeps part
 * checksums can be checked, and only in its own algorithm (another is InvalidRequest, as in S3):
 * COMPOSITE against the checksum of the parts' checksums, FULL_OBJECT against the whole object's
 * CRC. An upload keeping none (created without an algorithm) is completed unchecked.
 */
async function completionChecksum(ctx: S3Context): Promise<CompleteOptions['expectedChecksum']> {
  const named = S3_CHECKSUM_ALGORITHMS.filter((algorithm) => ctx.req.headers[`x-amz-checksum-${algorithm}`] !== undefined);
  if (named.length === 0) return undefined;
  if (named.length > 1) throw S3_ERRORS.invalidRequest('Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.');
  const algorithm = named[0]!;
  const raw = String(ctx.req.headers[`x-amz-checksum-${algorithm}`]).trim();
  const match = /^([A-Za-z0-9+/]+={0,2})(?:-(\d+))?$/.exec(raw);
  const digest = match ? Buffer.from(match[1]!, 'base64') : undefined;
  if (!match || !digest || digest.toString('base64') !== match[1] || digest.length !== CHECKSUM_BYTES[algorithm]) {
    throw S3_ERRORS.invalidRequest(
      `Value for x-amz-checksum-${algorithm} header is invalid: it must be the base64 of a ${CHECKSUM_BYTES[algorithm]}-byte ${algorithm.toUpperCase()} digest, optionally followed by -<parts>.`,
    );
  }
  const upload = await ctx.engine.getUpload(requireBucket(ctx), requireKey(ctx), uploadId(ctx));
  // A finished or missing upload: the engine answers it (a repeated completion is checked against its object).
  const kept = upload ? upload.checksumAlgorithm : algorithm;
  if (!kept) return undefined;
  if (kept !== algorithm) {
    throw S3_ERRORS.invalidRequest(`Checksum Type mismatch occurred, expected checksum Type: ${kept}, actual checksum Type: ${algorithm}`);
  }
  return { algorithm: kept, hex: digest.toString('hex'), ...(match[2] !== undefined ? { parts: Number(match[2]) } : {}) };
}

/** A part's `<ChecksumCRC32>` etc. in a CompleteMultipartUpload document, as hex by algorithm. */
function namedChecksums(part: Record<string, unknown>): Checksums {
  const out: Checksums = {};
  for (const algorithm of S3_CHECKSUM_ALGORITHMS) {
    const value = part[`Checksum${algorithm.toUpperCase()}`];
    if (value !== undefined) out[algorithm] = Buffer.from(String(value).trim(), 'base64').toString('hex');
  }
  return out;
}

export async function abortMultipartUpload(ctx: S3Context): Promise<void> {
  await ctx.engine.abortMultipartUpload(requireBucket(ctx), requireKey(ctx), uploadId(ctx));
  sendEmpty(ctx, 204);
}

export async function listParts(ctx: S3Context): Promise<void> {
  const upload = await ctx.engine.getUpload(requireBucket(ctx), requireKey(ctx), uploadId(ctx));
  if (!upload) throw new StoreError('STORE_NO_SUCH_UPLOAD');
  const parts = await ctx.engine.listParts(requireBucket(ctx), requireKey(ctx), uploadId(ctx));
  const rawMarker = ctx.query.get('part-number-marker') ?? '0';
  if (!/^\d+$/.test(rawMarker)) throw S3_ERRORS.invalidArgument('part-number-marker must be a non-negative integer.');
  const marker = Number(rawMarker);
  const max = pageSize(ctx.query.get('max-parts'), 'max-parts');
  const after = parts.filter((p) => p.partNumber > marker);
  const page = after.slice(0, max);
  const truncated = after.length > page.length;
  const inner =
    element('Bucket', ctx.bucket) +
    element('Key', ctx.key) +
    element('UploadId', uploadId(ctx)) +
    element('StorageClass', TO_S3_CLASS[upload.storageClass]) +
    element('PartNumberMarker', marker) +
    element('MaxParts', max) +
    element('IsTruncated', truncated) +
    element('NextPartNumberMarker', truncated ? page.at(-1)!.partNumber : undefined) +
    (upload.checksumAlgorithm
      ? element('ChecksumAlgorithm', upload.checksumAlgorithm.toUpperCase()) + element('ChecksumType', upload.checksumType ?? 'COMPOSITE')
      : '') +
    page
      .map(
        (p) =>
          `<Part>${element('PartNumber', p.partNumber)}${element('LastModified', new Date(p.uploaded).toISOString())}${element('ETag', `"${p.etag}"`)}` +
          `${element('Size', p.size)}${upload.checksumAlgorithm && p.checksum ? checksumElements({ [upload.checksumAlgorithm]: p.checksum }) : ''}</Part>`,
      )
      .join('');
  sendXml(ctx, 200, xmlDocument('ListPartsResult', inner));
}

/**
 * ListMultipartUploads, paged like S3: uploads in key order, then by initiation; `key-marker` with
 * `upload-id-marker` resumes after that upload (without it, after that key); a delimiter rolls keys
 * up into CommonPrefixes, each counting as one entry against `max-uploads`.
 */
export async function listMultipartUploads(ctx: S3Context): Promise<void> {
  const prefix = ctx.query.get('prefix') ?? '';
  const delimiter = ctx.query.get('delimiter') || undefined;
  const keyMarker = ctx.query.get('key-marker') ?? '';
  const uploadIdMarker = keyMarker === '' ? '' : (ctx.query.get('upload-id-marker') ?? '');
  const max = pageSize(ctx.query.get('max-uploads'), 'max-uploads');
  const uploads = await ctx.engine.listUploads(requireBucket(ctx), { prefix });
  assertEncodingType(ctx.query);
  const encode = (key: string) => encodeKey(ctx, key);
  let start = 0;
  if (keyMarker !== '') {
    const markerIndex = uploadIdMarker === '' ? -1 : uploads.findIndex((u) => u.key === keyMarker && u.uploadId === uploadIdMarker);
    // A marker that is a common prefix resumes after that whole group.
    const group = delimiter !== undefined && keyMarker.endsWith(delimiter) ? keyMarker : undefined;
    start =
      markerIndex >= 0
        ? markerIndex + 1
        : uploads.findIndex((u) => Buffer.compare(Buffer.from(u.key), Buffer.from(keyMarker)) > 0 && (group === undefined || !u.key.startsWith(group)));
    if (start < 0) start = uploads.length;
  }
  const entries: string[] = [];
  let next: { key: string; uploadId?: string } | undefined;
  let truncated = false;
  for (let i = start; i < uploads.length; i++) {
    const upload = uploads[i]!;
    const cut = delimiter === undefined ? -1 : upload.key.indexOf(delimiter, prefix.length);
    if (entries.length === max) {
      truncated = max > 0;
      break;
    }
    if (cut >= 0) {
      const group = upload.key.slice(0, cut + delimiter!.length);
      entries.push(`<CommonPrefixes>${element('Prefix', encode(group))}</CommonPrefixes>`);
      next = { key: group };
      while (i + 1 < uploads.length && uploads[i + 1]!.key.startsWith(group)) i++;
      continue;
    }
    entries.push(
      `<Upload>${element('Key', encode(upload.key))}${element('UploadId', upload.uploadId)}<Initiator>${OWNER_FIELDS}</Initiator>` +
        `${OWNER_XML}${element('StorageClass', TO_S3_CLASS[upload.storageClass])}${element('Initiated', new Date(upload.initiated).toISOString())}</Upload>`,
    );
    next = { key: upload.key, uploadId: upload.uploadId };
  }
  const inner =
    element('Bucket', ctx.bucket) +
    element('KeyMarker', encode(keyMarker)) +
    element('UploadIdMarker', uploadIdMarker) +
    (truncated && next ? element('NextKeyMarker', encode(next.key)) + element('NextUploadIdMarker', next.uploadId ?? '') : '') +
    element('Delimiter', delimiter === undefined ? undefined : encode(delimiter)) +
    element('Prefix', encode(prefix)) +
    element('MaxUploads', max) +
    element('IsTruncated', truncated) +
    element('EncodingType', ctx.query.get('encoding-type') ?? undefined) +
    entries.join('');
  sendXml(ctx, 200, xmlDocument('ListMultipartUploadsResult', inner));
}

/** max-uploads / max-parts: a whole number, at most 1000 (larger asks get 1000, as in S3). */
function pageSize(raw: string | null, name: string): number {
  if (raw === null) return 1000;
  if (!/^\d+$/.test(raw)) throw S3_ERRORS.invalidArgument(`${name} must be a non-negative integer.`);
  return Math.min(Number(raw), 1000);
}
