/**
 * Multipart completion rules (the real store's): parts sorted by number, no number twice, each named
 * part must exist with its current etag, every part but the last at least 5 MiB and all of one
 * size, the last no larger; the etag is the MD5 of the parts' binary MD5s followed by `-<count>`.
 */
import { createHash } from 'node:crypto';
import { createCrc32, createCrc32c } from '../../core/crypto/crc.ts';
import { combineCrcs } from '../../core/crypto/crc-combine.ts';
import type { CompletionPlan, PartRow, UploadRow } from '../../db/metadata-store.ts';
import { StoreError, STORE_LIMITS } from './errors.ts';
import type { Checksums, UploadChecksumAlgorithm, ObjectMeta, UploadedPart } from './types.ts';

/**
 * The opaque etag of one upload of a part (UploadPartOptions.opaqueEtag): derived from the upload,
 * the part number and the part's blob, which is new for every upload of the part, so a part
 * uploaded again gets another etag whatever its bytes.
 */
export function opaquePartEtag(uploadId: string, partNumber: number, blobId: string): string {
  return createHash('sha256').update(`${uploadId}\n${partNumber}\n${blobId}`).digest('base64url');
}

/** Whether `named` (as a completion lists it) names this part: its MD5 etag or its opaque one. */
function namesPart(part: PartRow, uploadId: string, named: string): boolean {
  const etag = normaliseEtag(named);
  return part.etag === etag || (etag.length === 43 && opaquePartEtag(uploadId, part.partNumber, part.blobId) === etag);
}

export function multipartEtag(partEtags: readonly string[]): string {
  const hash = createHash('md5');
  for (const etag of partEtags) hash.update(Buffer.from(etag, 'hex'));
  return `${hash.digest('hex')}-${partEtags.length}`;
}

export interface CompletionInput {
  requested: readonly UploadedPart[];
  version: string;
  now: number;
  /** Uploads created before this are expired. */
  expiredBefore: number;
  /** The whole object's checksum the client states, in the upload's algorithm: the COMPOSITE checksum must equal it. */
  expectedChecksum?: ExpectedCompletionChecksum;
}

/** A completion's stated checksum: lowercase hex and, when stated, the part count after its `-`. */
export interface ExpectedCompletionChecksum {
  algorithm: UploadChecksumAlgorithm;
  hex: string;
  parts?: number;
}

const CHECKSUM_NAMES: Record<UploadChecksumAlgorithm, string> = { crc32: 'CRC32', crc32c: 'CRC32C', crc64nvme: 'CRC64NVME', sha1: 'SHA1', sha256: 'SHA256' };

/** Throws STORE_BAD_DIGEST unless `actual` (`<hex>-<parts>`, or none) is the checksum the client stated. */
export function checkCompletionChecksum(expected: ExpectedCompletionChecksum | undefined, actual: string | undefined): void {
  if (!expected) return;
  const [hex, parts] = (actual ?? '').split('-');
  if (actual !== undefined && hex === expected.hex && (expected.parts === undefined || expected.parts === Number(parts))) return;
  const name = CHECKSUM_NAMES[expected.algorithm];
  const shown = (value: string, count: number | undefined) => `${Buffer.from(value, 'hex').toString('base64')}${count === undefined ? '' : `-${count}`}`;
  throw new StoreError('STORE_BAD_DIGEST', {
    message:
      actual === undefined
        ? `The ${name} checksum you specified cannot be checked: a part of this upload carries no ${name} checksum (copied parts have none), so nothing was completed.`
        : `The ${name} checksum you specified did not match what we received.\nYou provided a ${name} checksum with value: ${shown(expected.hex, expected.parts)}\n` +
          `Actual ${name} was: ${shown(hex!, parts === undefined ? undefined : Number(parts))} (${
            parts === undefined ? `the ${name} of the whole object, a FULL_OBJECT checksum` : `the ${name} of the parts' ${name} checksums, then -<parts>`
          }); nothing was completed.`,
    details: { algorithm: expected.algorithm, expected: expected.hex, actual: actual ?? null },
  });
}

export function planCompletion(upload: UploadRow | null, parts: PartRow[], input: CompletionInput): CompletionPlan {
  if (!upload || upload.state !== 'active' || upload.created < input.expiredBefore) throw new StoreError('STORE_NO_SUCH_UPLOAD');
  const requested = [...input.requested].sort((a, b) => a.partNumber - b.partNumber);
  const byNumber = new Map(parts.map((part) => [part.partNumber, part]));
  // Duplicates are found before any etag is checked: a list naming a part twice is refused as such
  // (10001, as the real store answers) even when one copy carries a stale etag.
  for (let i = 1; i < requested.length; i++) {
    if (requested[i - 1]!.partNumber === requested[i]!.partNumber) {
      throw new StoreError('STORE_INTERNAL', {
        message: `We encountered an internal error. Please try again.`,
        details: { duplicatePart: requested[i]!.partNumber },
      });
    }
  }
  const used: PartRow[] = [];
  for (const want of requested) {
    const part = byNumber.get(want.partNumber);
    if (!part || !namesPart(part, upload.uploadId, want.etag)) throw new StoreError('STORE_INVALID_PART');
    // A checksum named for a part must be the one it was uploaded with.
    const named = upload.checksumAlgorithm ? want.checksums?.[upload.checksumAlgorithm] : undefined;
    if (named !== undefined && part.checksum !== undefined && named !== part.checksum) throw new StoreError('STORE_INVALID_PART');
    used.push(part);
  }
  const first = used[0];
  for (let i = 0; i < used.length - 1; i++) {
    if (used[i]!.size < STORE_LIMITS.minPartBytes) throw new StoreError('STORE_ENTITY_TOO_SMALL');
    if (used[i]!.size !== first!.size) throw new StoreError('STORE_BAD_UPLOAD');
  }
  const last = used[used.length - 1];
  if (last && first && used.length > 1 && last.size > first.size) throw new StoreError('STORE_BAD_UPLOAD');

  const meta: ObjectMeta = {
    key: upload.key,
    version: input.version,
    size: used.reduce((sum, part) => sum + part.size, 0),
    etag: multipartEtag(used.map((part) => part.etag)),
    uploaded: input.now,
    httpMetadata: upload.httpMetadata,
    customMetadata: upload.customMetadata,
    checksums: upload.checksumType === 'FULL_OBJECT' ? fullObjectChecksum(upload.checksumAlgorithm, used) : compositeChecksum(upload.checksumAlgorithm, used),
    storageClass: upload.storageClass,
    // An SSE-C upload's object keeps its record: its parts are encrypted with that key.
    ...(upload.ssec ? { ssec: upload.ssec } : {}),
  };
  if (input.expectedChecksum) checkCompletionChecksum(input.expectedChecksum, meta.checksums[input.expectedChecksum.algorithm]);
  return { meta, parts: used };
}

/**
 * S3's COMPOSITE checksum: the algorithm over the parts' binary checksums, in order, then
 * `-<parts>`. Only when every part kept one; otherwise the object has none, as a binding upload.
 */
function compositeChecksum(algorithm: UploadChecksumAlgorithm | null, parts: readonly PartRow[]): Checksums {
  if (!algorithm || parts.length === 0 || parts.some((part) => part.checksum === undefined)) return {};
  const digest = algorithm === 'crc32' ? createCrc32() : algorithm === 'crc32c' ? createCrc32c() : createHash(algorithm);
  for (const part of parts) digest.update(Buffer.from(part.checksum!, 'hex'));
  return { [algorithm]: `${digest.digest().toString('hex')}-${parts.length}` };
}

/**
 * S3's FULL_OBJECT checksum: the CRC of the whole object, combined from the parts' CRCs and sizes
 * (crc-combine.ts), with no `-<parts>`. Only when every part kept one, as for COMPOSITE.
 */
function fullObjectChecksum(algorithm: UploadChecksumAlgorithm | null, parts: readonly PartRow[]): Checksums {
  if (algorithm !== 'crc32' && algorithm !== 'crc32c' && algorithm !== 'crc64nvme') return {};
  if (parts.some((part) => part.checksum === undefined)) return {};
  const crc = combineCrcs(
    algorithm,
    parts.map((part) => ({ crc: Buffer.from(part.checksum!, 'hex'), length: part.size })),
  );
  return { [algorithm]: crc.toString('hex') };
}

/** S3 clients send part etags quoted; the binding sends them bare. */
export function normaliseEtag(etag: string): string {
  return etag.length >= 2 && etag.startsWith('"') && etag.endsWith('"') ? etag.slice(1, -1) : etag;
}
