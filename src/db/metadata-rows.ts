/**
 * The object store's rows as both SQL stores keep them (the same columns in SQLite and
 * PostgreSQL; only the key's type differs: TEXT there, BYTEA here), and their mapping to the
 * records of metadata-store.ts. Callers pass the key already decoded.
 */
import type { BucketInfo, ObjectMeta, SseCInfo } from '../store/engine/types.ts';
import type { SecretBox } from '../core/crypto/secret-box.ts';
import type { AccessKeyPermission, AccessKeyRow, ListedAccessKeyRow, PartRow, StoredPart, UploadRow } from './metadata-store.ts';
import { accessKeyBinding } from './secrets/sealed-rows.ts';

export interface BucketRecord {
  name: string;
  created: number;
  storage_class: string;
}

export interface ObjectRecord<Key = string> {
  key: Key;
  version: string;
  size: number;
  etag: string;
  uploaded: number;
  http_metadata: string;
  custom_metadata: string;
  checksums: string;
  storage_class: string;
  has_inline: number;
  blob_id: string | null;
  part_count: number;
  /** JSON SseCInfo of an SSE-C object; NULL (or absent in list rows) otherwise. */
  ssec?: string | null;
}

export interface UploadRecord<Key = string> {
  upload_id: string;
  bucket: string;
  key: Key;
  created: number;
  http_metadata: string;
  custom_metadata: string;
  storage_class: string;
  state: string;
  checksum_algorithm: string | null;
  checksum_type?: string | null;
  finished?: number | string | null;
  completed_version?: string | null;
  completed_parts?: string | null;
  ssec?: string | null;
}

export interface PartRecord {
  part_number: number;
  etag: string;
  size: number;
  blob_id: string;
  uploaded: number;
  checksum: string | null;
}

export function parseJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

export function toBucket(row: BucketRecord): BucketInfo {
  return { name: row.name, created: row.created, storageClass: row.storage_class as BucketInfo['storageClass'] };
}

export function toMeta(row: ObjectRecord<unknown>, key: string): ObjectMeta {
  return {
    key,
    version: row.version,
    size: row.size,
    etag: row.etag,
    uploaded: row.uploaded,
    httpMetadata: parseJson(row.http_metadata),
    customMetadata: parseJson(row.custom_metadata),
    checksums: parseJson(row.checksums),
    storageClass: row.storage_class as ObjectMeta['storageClass'],
    ...(row.ssec ? { ssec: parseJson<SseCInfo>(row.ssec) } : {}),
  };
}

export function toUpload(row: UploadRecord<unknown>, key: string): UploadRow {
  return {
    uploadId: row.upload_id,
    bucket: row.bucket,
    key,
    created: row.created,
    httpMetadata: parseJson(row.http_metadata),
    customMetadata: parseJson(row.custom_metadata),
    storageClass: row.storage_class as UploadRow['storageClass'],
    state: row.state as UploadRow['state'],
    checksumAlgorithm: (row.checksum_algorithm ?? null) as UploadRow['checksumAlgorithm'],
    ...(row.checksum_type === 'FULL_OBJECT' ? { checksumType: 'FULL_OBJECT' as const } : {}),
    ...(row.ssec ? { ssec: parseJson<SseCInfo>(row.ssec) } : {}),
    ...(row.completed_version
      ? {
          completion: { version: row.completed_version, parts: parseJson<Array<[number, string]>>(row.completed_parts ?? '[]'), at: Number(row.finished ?? 0) },
        }
      : {}),
  };
}

/** A completion's parts as kept in `completed_parts`. */
export function completedPartsJson(parts: ReadonlyArray<{ partNumber: number; etag: string }>): string {
  return JSON.stringify(parts.map((part) => [part.partNumber, part.etag]));
}

export function toPart(row: PartRecord): PartRow {
  const part: PartRow = { partNumber: row.part_number, etag: row.etag, size: row.size, blobId: row.blob_id, uploaded: row.uploaded };
  if (row.checksum) part.checksum = row.checksum;
  return part;
}

/** A multipart object's part as stored (object_parts); no checksum key when it has none. */
export function storedPart(blobId: string, size: number | string, checksum: string | null | undefined): StoredPart {
  return checksum ? { blobId, size: Number(size), checksum } : { blobId, size: Number(size) };
}

/** An `s3_access_keys` row, as both databases return it. */
export interface AccessKeyRecord {
  access_key_id: string;
  secret: string;
  account_id: string | null;
  permission: string;
  buckets: string | null;
  created: number | string;
  revoked: number | string | null;
}

/** The key without its secret (listAccessKeys). */
export function toListedAccessKey(row: AccessKeyRecord): ListedAccessKeyRow {
  return {
    accessKeyId: row.access_key_id,
    accountId: row.account_id,
    permission: row.permission as AccessKeyPermission,
    buckets: row.buckets === null ? null : (JSON.parse(row.buckets) as string[]),
    created: Number(row.created),
    revoked: row.revoked === null ? null : Number(row.revoked),
  };
}

/** The key with its secret opened (accessKey). */
export function toAccessKey(row: AccessKeyRecord, secrets: SecretBox): AccessKeyRow {
  return { ...toListedAccessKey(row), secret: secrets.open(row.secret, accessKeyBinding(row.access_key_id)) };
}
