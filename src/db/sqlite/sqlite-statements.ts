/** Every prepared statement of the SQLite metadata store, built once per connection. */
import type { Database, Statement } from 'better-sqlite3';
import type { ObjectRecord as SharedObjectRecord } from '../metadata-rows.ts';

/** getObject's row: the object's columns and, for an inline body, its bytes. */
export interface ObjectRecord extends SharedObjectRecord {
  /** The object_bodies row of its inline body (migration 20); null for a body in inline_bodies, found by version, or none. */
  body_id: number | null;
  inline_data?: Uint8Array | null;
}

/**
 * headObject and getObject rows come back raw (arrays in META_COLUMNS order, then the inline body):
 * better-sqlite3 builds a row object property by property, which costs more than the lookup itself.
 */
export type RawObjectRow = [
  key: string,
  version: string,
  size: number,
  etag: string,
  uploaded: number,
  httpMetadata: string,
  customMetadata: string,
  checksums: string,
  storageClass: string,
  hasInline: number,
  blobId: string | null,
  partCount: number,
  ssec: string | null,
  bodyId: number | null,
  inlineData?: Uint8Array | null,
];

export function objectRecord(row: RawObjectRow): ObjectRecord {
  return {
    key: row[0],
    version: row[1],
    size: row[2],
    etag: row[3],
    uploaded: row[4],
    http_metadata: row[5],
    custom_metadata: row[6],
    checksums: row[7],
    storage_class: row[8],
    has_inline: row[9],
    blob_id: row[10],
    part_count: row[11],
    ssec: row[12],
    body_id: row[13],
    inline_data: row[14],
  };
}

export type { PartRecord, UploadRecord } from '../metadata-rows.ts';

const META_COLUMNS =
  'key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums, storage_class, has_inline, blob_id, part_count, ssec, body_id';
/** META_COLUMNS of the objects table aliased `o`, for queries that join it. */
const OBJECT_COLUMNS = META_COLUMNS.split(', ')
  .map((c) => `o.${c}`)
  .join(', ');

/** Column order of a raw list row; http_metadata and custom_metadata follow when requested. */
const LIST_COLUMNS = 'key, version, size, etag, uploaded, checksums, storage_class';
export type ListRecord = [
  key: string,
  version: string,
  size: number,
  etag: string,
  uploaded: number,
  checksums: string,
  storageClass: string,
  httpMetadata?: string,
  customMetadata?: string,
];

export function prepareStatements(db: Database) {
  const s = (sql: string): Statement => db.prepare(sql);
  return {
    insertBucket: s('INSERT OR IGNORE INTO buckets (name, created, storage_class) VALUES (?, ?, ?)'),
    getBucket: s('SELECT name, created, storage_class FROM buckets WHERE name = ?'),
    setBucketStorageClass: s('UPDATE buckets SET storage_class = ? WHERE name = ?'),
    // A bucket's usage, a chunk of at most @max rows at a time (sqlite-metadata-store.ts's bucketUsage):
    // its objects in key order from @from (or after @after), its active uploads after (@key, @id).
    usageFrom: s(`SELECT count(*) AS objects, coalesce(sum(size), 0) AS payload, coalesce(sum(meta), 0) AS metadata, max(key) AS last
      FROM (SELECT key, size, length(CAST(http_metadata AS BLOB)) + length(CAST(custom_metadata AS BLOB)) AS meta FROM objects
        WHERE bucket = @bucket AND key >= @from AND key < @upper ORDER BY key LIMIT @max)`),
    usageAfter: s(`SELECT count(*) AS objects, coalesce(sum(size), 0) AS payload, coalesce(sum(meta), 0) AS metadata, max(key) AS last
      FROM (SELECT key, size, length(CAST(http_metadata AS BLOB)) + length(CAST(custom_metadata AS BLOB)) AS meta FROM objects
        WHERE bucket = @bucket AND key > @after AND key < @upper ORDER BY key LIMIT @max)`),
    usageUploads: s(`SELECT key, upload_id FROM uploads WHERE bucket = @bucket AND state = 'active' AND key >= @lower AND key < @upper
      AND (key, upload_id) > (@key, @id) ORDER BY key, upload_id LIMIT @max`).raw(),
    listBuckets: s('SELECT name, created, storage_class FROM buckets ORDER BY name'),
    listBucketRange: s('SELECT name, created, storage_class FROM buckets WHERE name >= ? AND name < ? ORDER BY name'),
    listUnownedBuckets: s("SELECT name, created, storage_class FROM buckets WHERE instr(name, '/') = 0 ORDER BY name"),
    renameBucket: s('UPDATE buckets SET name = ? WHERE name = ?'),
    moveObjects: s('UPDATE objects SET bucket = ? WHERE bucket = ?'),
    moveUploads: s('UPDATE uploads SET bucket = ? WHERE bucket = ?'),
    deleteBucket: s('DELETE FROM buckets WHERE name = ?'),
    getBucketCors: s('SELECT rules FROM bucket_cors WHERE bucket = ?').pluck(),
    putBucketCors: s('INSERT OR REPLACE INTO bucket_cors (bucket, name, rules) VALUES (?, ?, ?)'),
    deleteBucketCors: s('DELETE FROM bucket_cors WHERE bucket = ?'),
    moveBucketCors: s('UPDATE bucket_cors SET bucket = ? WHERE bucket = ?'),
    corsByName: s('SELECT bucket, rules FROM bucket_cors WHERE name = ? ORDER BY bucket'),
    getBucketLifecycle: s('SELECT rules FROM bucket_lifecycle WHERE bucket = ?').pluck(),
    putBucketLifecycle: s('INSERT OR REPLACE INTO bucket_lifecycle (bucket, rules) VALUES (?, ?)'),
    deleteBucketLifecycle: s('DELETE FROM bucket_lifecycle WHERE bucket = ?'),
    moveBucketLifecycle: s('UPDATE bucket_lifecycle SET bucket = ? WHERE bucket = ?'),
    lifecycleBuckets: s('SELECT bucket, rules FROM bucket_lifecycle WHERE bucket > ? ORDER BY bucket LIMIT ?'),
    setObjectStorageClass: s('UPDATE objects SET storage_class = ? WHERE bucket = ? AND key = ? AND version = ?'),
    // A lease on a background job (migration 18): granted to its holder, or to anyone once it ran out.
    ensureLease: s("INSERT OR IGNORE INTO maintenance_leases (name, holder, until) VALUES (?, '', 0)"),
    takeLease: s('UPDATE maintenance_leases SET holder = ?, until = ? WHERE name = ? AND (holder = ? OR until <= ?)'),
    leaseState: s('SELECT state FROM maintenance_leases WHERE name = ?').pluck(),
    keepLease: s('UPDATE maintenance_leases SET until = ?, state = ? WHERE name = ? AND holder = ?'),
    anyObject: s('SELECT 1 FROM objects WHERE bucket = ? LIMIT 1'),
    bucketUploads: s('SELECT upload_id FROM uploads WHERE bucket = ? LIMIT ?'),
    deleteUpload: s('DELETE FROM uploads WHERE upload_id = ?'),

    headObject: s(`SELECT ${META_COLUMNS} FROM objects WHERE bucket = ? AND key = ?`).raw(),
    // A put's bucket and the object it replaces in one lookup: [storage_class, ...headObject's columns
    // (NULL when the key has none)], or no row when the bucket does not exist. Key first, then bucket.
    bucketAndObject: s(
      `SELECT b.storage_class, ${OBJECT_COLUMNS} FROM buckets b LEFT JOIN objects o ON o.bucket = b.name AND o.key = ? WHERE b.name = ?`,
    ).raw(),
    getObject: s(`SELECT ${OBJECT_COLUMNS}, coalesce(n.bytes, b.bytes) AS inline_data
      FROM objects o LEFT JOIN object_bodies n ON n.id = o.body_id
        LEFT JOIN inline_bodies b ON o.body_id IS NULL AND o.has_inline = 1 AND b.version = o.version
      WHERE o.bucket = ? AND o.key = ?`).raw(),
    upsertObject: s(`INSERT OR REPLACE INTO objects (bucket, key, version, size, etag, uploaded, http_metadata,
      custom_metadata, checksums, storage_class, has_inline, blob_id, part_count, ssec, body_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // Inline bodies by row id (migration 20); those stored before are in inline_bodies, by version.
    insertBody: s('INSERT INTO object_bodies (bytes) VALUES (?)'),
    deleteBody: s('DELETE FROM object_bodies WHERE id = ?'),
    deleteInlineBody: s('DELETE FROM inline_bodies WHERE version = ?'),
    deleteObject: s('DELETE FROM objects WHERE bucket = ? AND key = ?'),
    // Listing returns arrays (raw mode) of LIST_COLUMNS, plus the two metadata columns when asked:
    // building fewer JS values per row is most of a list's cost.
    listFrom: s(`SELECT ${LIST_COLUMNS} FROM objects WHERE bucket = ? AND key >= ? AND key < ? ORDER BY key LIMIT ?`).raw(),
    listAfter: s(`SELECT ${LIST_COLUMNS} FROM objects WHERE bucket = ? AND key > ? AND key < ? ORDER BY key LIMIT ?`).raw(),
    listFromWithMetadata: s(`SELECT ${LIST_COLUMNS}, http_metadata, custom_metadata FROM objects
      WHERE bucket = ? AND key >= ? AND key < ? ORDER BY key LIMIT ?`).raw(),
    listAfterWithMetadata: s(`SELECT ${LIST_COLUMNS}, http_metadata, custom_metadata FROM objects
      WHERE bucket = ? AND key > ? AND key < ? ORDER BY key LIMIT ?`).raw(),
    objectParts: s('SELECT blob_id, size, checksum FROM object_parts WHERE version = ? ORDER BY idx'),
    insertObjectPart: s('INSERT INTO object_parts (version, idx, blob_id, size, checksum) VALUES (?, ?, ?, ?, ?)'),
    deleteObjectParts: s('DELETE FROM object_parts WHERE version = ?'),

    insertUpload: s(`INSERT INTO uploads (upload_id, bucket, key, created, http_metadata, custom_metadata, storage_class, state, checksum_algorithm,
      checksum_type, ssec) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    getUpload: s('SELECT * FROM uploads WHERE upload_id = ?'),
    setUploadState: s('UPDATE uploads SET state = ?, finished = ? WHERE upload_id = ?'),
    setUploadCompleted: s(`UPDATE uploads SET state = 'completed', finished = ?, completed_version = ?, completed_parts = ? WHERE upload_id = ?`),
    finishedUploads: s("SELECT upload_id FROM uploads WHERE state <> 'active' AND (finished IS NULL OR finished < ?) LIMIT ?"),
    listUploads: s(`SELECT * FROM uploads WHERE bucket = ? AND state = 'active' AND key >= ? AND key < ? ORDER BY key, created, upload_id`),
    expiredUploads: s("SELECT upload_id, bucket FROM uploads WHERE state = 'active' AND created < ?"),
    getPart: s('SELECT * FROM upload_parts WHERE upload_id = ? AND part_number = ?'),
    upsertPart: s(`INSERT OR REPLACE INTO upload_parts (upload_id, part_number, etag, size, blob_id, uploaded, checksum) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    listParts: s('SELECT * FROM upload_parts WHERE upload_id = ? ORDER BY part_number'),
    deleteParts: s('DELETE FROM upload_parts WHERE upload_id = ?'),

    // What each account stores (migration 16). A charge that adds is conditional: it changes
    // nothing (0 rows) when the account's row is missing or the result would pass a quota, whose
    // value is the row's own or, when NULL, the server's (0 for either: no limit). Positional, each
    // value once (binding by name costs more on this hot path): bytes, count, account, then per
    // quota 1 to skip its check (what does not grow), the amount again and the server's quota.
    chargeObjects: s(`UPDATE account_usage SET object_bytes = object_bytes + ?, object_count = object_count + ?
      WHERE account_id = ?
        AND (? OR object_bytes + ? <= coalesce(nullif(coalesce(max_object_bytes, ?), 0), 9223372036854775807))
        AND (? OR object_count + ? <= coalesce(nullif(coalesce(max_objects, ?), 0), 9223372036854775807))`),
    ensureUsage: s('INSERT OR IGNORE INTO account_usage (account_id) VALUES (?)'),
    /** What frees space (or moves it, adopting a bucket) is never refused. */
    addUsage: s(`INSERT INTO account_usage (account_id, object_bytes, object_count) VALUES (?, ?, ?)
      ON CONFLICT (account_id) DO UPDATE SET object_bytes = object_bytes + excluded.object_bytes, object_count = object_count + excluded.object_count`),
    accountUsage: s('SELECT object_bytes, object_count, script_bytes, max_object_bytes, max_objects, max_script_bytes FROM account_usage WHERE account_id = ?'),
    setAccountQuotas: s(`INSERT INTO account_usage (account_id, max_object_bytes, max_objects, max_script_bytes) VALUES (?, ?, ?, ?)
      ON CONFLICT (account_id) DO UPDATE SET max_object_bytes = excluded.max_object_bytes, max_objects = excluded.max_objects, max_script_bytes = excluded.max_script_bytes`),
    forgetAccountUsage: s('DELETE FROM account_usage WHERE account_id = ? AND object_bytes = 0 AND object_count = 0 AND script_bytes = 0'),
    bucketContents: s('SELECT coalesce(sum(size), 0) AS bytes, count(*) AS count FROM objects WHERE bucket = ?'),
    bucketPartBytes: s(`SELECT coalesce(sum(p.size), 0) FROM upload_parts p JOIN uploads u ON u.upload_id = p.upload_id
      WHERE u.bucket = ? AND u.state = 'active'`).pluck(),

    queueReclaim: s('INSERT OR REPLACE INTO blob_reclaim (blob_id, after) VALUES (?, ?)'),
    reclaimable: s('SELECT blob_id FROM blob_reclaim WHERE after <= ? LIMIT ?'),
    forgetReclaim: s('DELETE FROM blob_reclaim WHERE blob_id = ?'),
    clearReclaim: s('DELETE FROM blob_reclaim'),
    putAccessKey: s(`INSERT OR REPLACE INTO s3_access_keys (access_key_id, secret, account_id, permission, buckets, created, revoked)
      VALUES (?, ?, ?, ?, ?, ?, ?)`),
    accessKey: s('SELECT * FROM s3_access_keys WHERE access_key_id = ? AND revoked IS NULL'),
    listAccessKeys: s('SELECT * FROM s3_access_keys ORDER BY created, access_key_id'),
    listAccountAccessKeys: s('SELECT * FROM s3_access_keys WHERE account_id = ? ORDER BY created, access_key_id'),
    revokeAccessKey: s('UPDATE s3_access_keys SET revoked = ? WHERE access_key_id = ? AND revoked IS NULL'),
    accountAccessKeyExists: s('SELECT 1 FROM s3_access_keys WHERE access_key_id = ? AND account_id = ?'),
    adoptAccessKeys: s('UPDATE s3_access_keys SET account_id = ? WHERE account_id IS NULL'),
    referencedBlobs: s(`SELECT blob_id FROM objects WHERE blob_id IS NOT NULL
      UNION ALL SELECT blob_id FROM object_parts UNION ALL SELECT blob_id FROM upload_parts`),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
