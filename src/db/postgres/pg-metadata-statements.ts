/**
 * Every SQL statement of the PostgreSQL metadata store (pg-metadata-store.ts), with the shape of the
 * rows they return. Object and upload keys are BYTEA (their UTF-8 bytes): compared bytewise, which is
 * the store's list order, and able to hold U+0000.
 */
import type { ObjectRecord, UploadRecord } from '../metadata-rows.ts';

export type PgObjectRecord = ObjectRecord<Buffer>;

/** getObject's row: the inline body and, for a multipart object, its parts as `[blobId, size, checksum]`. */
export interface PgStoredRecord extends PgObjectRecord {
  inline_data: Buffer | null;
  parts: Array<[string, number, string | null]> | null;
}

/**
 * A list page: one row holding a JSON array (parsed by pg in one JSON.parse, far cheaper than a row
 * per object) of [key as hex, version, size, etag, uploaded, checksums, storage class, and, when
 * asked, http and custom metadata].
 */
export interface PgListPage {
  page: Array<
    [
      keyHex: string,
      version: string,
      size: number,
      etag: string,
      uploaded: number,
      checksums: Record<string, string>,
      storageClass: string,
      httpMetadata?: Record<string, unknown>,
      customMetadata?: Record<string, string>,
    ]
  >;
}

export type PgUploadRecord = UploadRecord<Buffer>;
export type { PartRecord as PgPartRecord } from '../metadata-rows.ts';

const META_COLUMNS = 'key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums, storage_class, has_inline, blob_id, part_count, ssec';

/** Listing: $2 the lower bound (inclusive or exclusive), $3 the exclusive upper one, $4 the limit. */
const listPage = (lower: '>=' | '>', withMetadata: boolean) => `SELECT coalesce(json_agg(json_build_array(encode(key, 'hex'), version, size,
    etag, uploaded, checksums::json, storage_class${withMetadata ? ', http_metadata::json, custom_metadata::json' : ''}) ORDER BY key), '[]') AS page
  FROM (SELECT key, version, size, etag, uploaded, checksums, storage_class${withMetadata ? ', http_metadata, custom_metadata' : ''}
    FROM objects WHERE bucket = $1 AND key ${lower} $2 AND key < $3 ORDER BY key LIMIT $4) AS listed`;

/** The account of a stored bucket name (`<account>/<name>`; '' for a bucket of no account), as account-usage.ts's accountOfBucket. */
const accountOf = (column: string) => `CASE WHEN strpos(${column}, '/') > 0 THEN split_part(${column}, '/', 1) ELSE '' END`;

/** Queues blob ids for reclamation; a blob queued twice keeps the later time. `$after` is a parameter. */
const reclaim = (source: string, after: string) => `INSERT INTO blob_reclaim (blob_id, after)
  SELECT DISTINCT blob_id, ${after}::bigint FROM (${source}) AS r (blob_id)
  ON CONFLICT (blob_id) DO UPDATE SET after = EXCLUDED.after`;

/**
 * Parameters of the object writes: $1 bucket, $2 key, $3..$14 the objects row (ssec last), $15
 * inline bytes (or NULL), $16/$17/$18 the part blob ids, sizes and checksums (empty unless
 * multipart). The body and part rows are written only when the object row was (`o` is empty after
 * an insert that met a conflict).
 */
const OBJECT_VALUES = '$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14';
const OBJECT_DATA = `
  body AS (INSERT INTO inline_bodies (version, bytes) SELECT version, $15::bytea FROM o WHERE $15::bytea IS NOT NULL),
  parts AS (INSERT INTO object_parts (version, idx, blob_id, size, checksum)
    SELECT o.version, p.ord - 1, p.blob_id, p.size, p.checksum FROM o,
      unnest($16::text[], $17::bigint[], $18::text[]) WITH ORDINALITY AS p (blob_id, size, checksum, ord))
  SELECT count(*)::int AS written FROM o`;

export const PG_SQL = {
  insertBucket: 'INSERT INTO buckets (name, created, storage_class) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING 1 AS inserted',
  getBucket: 'SELECT name, created, storage_class FROM buckets WHERE name = $1',
  setBucketStorageClass: 'UPDATE buckets SET storage_class = $2 WHERE name = $1 RETURNING name, created, storage_class',
  // Bounded: at most $2 rows of the bucket's objects (its primary-key range, keys from $3 below $4) and of its uploads.
  bucketUsage: `SELECT count(*)::bigint AS objects, coalesce(sum(size), 0)::bigint AS payload, coalesce(sum(meta), 0)::bigint AS metadata,
    (SELECT count(*) FROM (SELECT 1 FROM uploads WHERE bucket = $1 AND state = 'active' AND key >= $3 AND key < $4 LIMIT $2) u)::bigint AS uploads
    FROM (SELECT size, octet_length(http_metadata) + octet_length(custom_metadata) AS meta FROM objects WHERE bucket = $1 AND key >= $3 AND key < $4 LIMIT $2) o`,
  listBuckets: 'SELECT name, created, storage_class FROM buckets ORDER BY name',
  listBucketRange: 'SELECT name, created, storage_class FROM buckets WHERE name >= $1 AND name < $2 ORDER BY name',
  listUnownedBuckets: `SELECT name, created, storage_class FROM buckets WHERE strpos(name, '/') = 0 ORDER BY name`,
  /** Adopting a bucket of no account: the bucket row locked, its objects and uploads moved under the new name, then the row. */
  moveObjects: 'UPDATE objects SET bucket = $1 WHERE bucket = $2',
  moveUploads: 'UPDATE uploads SET bucket = $1 WHERE bucket = $2',
  renameBucket: 'UPDATE buckets SET name = $1 WHERE name = $2',
  /**
   * Bucket row locks order a bucket's deletion against the writes that put something in it: a put
   * or a new upload holds KEY SHARE on the row until it commits, a deletion takes it FOR UPDATE and
   * only then (a later statement, a fresh snapshot) checks that the bucket is empty.
   */
  shareBucket: 'SELECT storage_class FROM buckets WHERE name = $1 FOR KEY SHARE',
  lockBucket: 'SELECT 1 AS found FROM buckets WHERE name = $1 FOR UPDATE',
  bucketBusy: 'SELECT EXISTS (SELECT 1 FROM objects WHERE bucket = $1) AS busy',
  /** A batch ($2) of the bucket's uploads, any state, locked (a part write to one is waited for). */
  lockBucketUploads: 'SELECT upload_id FROM uploads WHERE bucket = $1 ORDER BY upload_id LIMIT $2 FOR UPDATE',
  /** Drops uploads ($1: ids, locked) with their part rows; the parts' blobs are queued ($2: when) and their bytes freed from account $3. */
  dropUploads: `WITH gone AS (DELETE FROM upload_parts WHERE upload_id = ANY ($1::text[]) RETURNING blob_id, size),
    reclaimed AS (${reclaim('SELECT blob_id FROM gone', '$2')}),
    freed AS (UPDATE account_usage SET object_bytes = object_bytes - (SELECT coalesce(sum(size), 0) FROM gone) WHERE account_id = $3 AND EXISTS (SELECT 1 FROM gone)),
    dropped AS (DELETE FROM uploads WHERE upload_id = ANY ($1::text[]))
    SELECT 1`,
  deleteBucket: 'DELETE FROM buckets WHERE name = $1',
  /** CORS rules: written under the bucket row's KEY SHARE lock (shareBucket), so never for a bucket being deleted. */
  getBucketCors: 'SELECT rules FROM bucket_cors WHERE bucket = $1',
  putBucketCors: `INSERT INTO bucket_cors (bucket, name, rules) VALUES ($1, $2, $3)
    ON CONFLICT (bucket) DO UPDATE SET name = EXCLUDED.name, rules = EXCLUDED.rules`,
  deleteBucketCors: 'DELETE FROM bucket_cors WHERE bucket = $1',
  moveBucketCors: 'UPDATE bucket_cors SET bucket = $1 WHERE bucket = $2',
  corsByName: 'SELECT bucket, rules FROM bucket_cors WHERE name = $1 ORDER BY bucket',
  /** Lifecycle rules (migration 18): written under the bucket row's KEY SHARE lock, as CORS rules. */
  getBucketLifecycle: 'SELECT rules FROM bucket_lifecycle WHERE bucket = $1',
  putBucketLifecycle: `INSERT INTO bucket_lifecycle (bucket, rules) VALUES ($1, $2) ON CONFLICT (bucket) DO UPDATE SET rules = EXCLUDED.rules`,
  deleteBucketLifecycle: 'DELETE FROM bucket_lifecycle WHERE bucket = $1',
  moveBucketLifecycle: 'UPDATE bucket_lifecycle SET bucket = $1 WHERE bucket = $2',
  lifecycleBuckets: 'SELECT bucket, rules FROM bucket_lifecycle WHERE bucket > $1 ORDER BY bucket LIMIT $2',
  setObjectStorageClass: 'UPDATE objects SET storage_class = $4 WHERE bucket = $1 AND key = $2 AND version = $3 RETURNING 1 AS updated',
  /**
   * A lease on a background job shared by the instances: one statement takes it (a missing row is
   * made), granted to its holder ($2) or, once it ran out ($4: now), to anyone; answers its state.
   */
  takeLease: `INSERT INTO maintenance_leases AS l (name, holder, until) VALUES ($1, $2, $3)
    ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until WHERE l.holder = $2 OR l.until <= $4
    RETURNING state`,
  keepLease: 'UPDATE maintenance_leases SET until = $3, state = $4 WHERE name = $1 AND holder = $2 RETURNING 1 AS kept',

  headObject: `SELECT ${META_COLUMNS} FROM objects WHERE bucket = $1 AND key = $2`,
  /** The row, its inline body and its parts, from one snapshot. */
  getObject: `SELECT ${META_COLUMNS.split(', ')
    .map((c) => `o.${c}`)
    .join(', ')}, b.bytes AS inline_data,
      CASE WHEN o.part_count > 0 THEN (SELECT json_agg(json_build_array(p.blob_id, p.size, p.checksum) ORDER BY p.idx)
        FROM object_parts p WHERE p.version = o.version) END AS parts
    FROM objects o LEFT JOIN inline_bodies b ON o.has_inline = 1 AND b.version = o.version
    WHERE o.bucket = $1 AND o.key = $2`,
  /** Locks the current row (if any) for a conditional write; a waiter reads the row as committed. */
  lockObject: `SELECT ${META_COLUMNS} FROM objects WHERE bucket = $1 AND key = $2 FOR UPDATE`,
  /** Writes a key that had no row; writes nothing (written = 0) if a concurrent write created it since. */
  insertObject: `WITH o AS (
      INSERT INTO objects (bucket, key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums,
        storage_class, has_inline, blob_id, part_count, ssec) VALUES (${OBJECT_VALUES})
      ON CONFLICT (bucket, key) DO NOTHING RETURNING version
    ),${OBJECT_DATA}`,
  /**
   * Replaces the locked row: $19 is the old version, $20 its blob id (or NULL), $21 when its blobs
   * may be deleted. The old inline body and part rows go; its blobs are queued for reclamation.
   */
  replaceObject: `WITH old_body AS (DELETE FROM inline_bodies WHERE version = $19::text),
    old_parts AS (DELETE FROM object_parts WHERE version = $19::text RETURNING blob_id),
    reclaimed AS (${reclaim('SELECT blob_id FROM old_parts UNION ALL SELECT $20::text WHERE $20::text IS NOT NULL', '$21')}),
    o AS (
      UPDATE objects SET version = $3, size = $4, etag = $5, uploaded = $6, http_metadata = $7, custom_metadata = $8,
        checksums = $9, storage_class = $10, has_inline = $11, blob_id = $12, part_count = $13, ssec = $14
      WHERE bucket = $1 AND key = $2 RETURNING version
    ),${OBJECT_DATA}`,
  /** $2: the keys (bytea[]); $3: when their blobs may be deleted; $4: the bucket's account, whose usage shrinks. */
  deleteObjects: `WITH gone AS (
      DELETE FROM objects WHERE bucket = $1 AND key = ANY ($2::bytea[]) RETURNING version, has_inline, blob_id, part_count, size
    ), freed AS (UPDATE account_usage SET object_bytes = object_bytes - (SELECT coalesce(sum(size), 0) FROM gone),
      object_count = object_count - (SELECT count(*) FROM gone) WHERE account_id = $4 AND EXISTS (SELECT 1 FROM gone)),
    gone_body AS (DELETE FROM inline_bodies WHERE version IN (SELECT version FROM gone WHERE has_inline = 1)),
    gone_parts AS (DELETE FROM object_parts WHERE version IN (SELECT version FROM gone WHERE part_count > 0) RETURNING blob_id),
    reclaimed AS (${reclaim('SELECT blob_id FROM gone WHERE blob_id IS NOT NULL UNION ALL SELECT blob_id FROM gone_parts', '$3')})
    SELECT count(*)::int AS deleted FROM gone`,
  // Both bounds are on the primary key (bucket, key), so the scan reads only the page.
  listFrom: listPage('>=', false),
  listAfter: listPage('>', false),
  listFromWithMetadata: listPage('>=', true),
  listAfterWithMetadata: listPage('>', true),

  insertUpload: `INSERT INTO uploads (upload_id, bucket, key, created, http_metadata, custom_metadata, storage_class, state, checksum_algorithm,
    checksum_type, ssec) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
  getUpload: 'SELECT * FROM uploads WHERE upload_id = $1',
  /** Taken by every write to an upload or its parts: part writes, completion and abort are serialized per upload. */
  lockUpload: 'SELECT * FROM uploads WHERE upload_id = $1 FOR UPDATE',
  listUploads: `SELECT * FROM uploads WHERE bucket = $1 AND state = 'active' AND key >= $2 AND key < $3
    ORDER BY key, created, upload_id`,
  /** Active uploads created before $1, locked; one completed meanwhile is skipped. */
  lockExpiredUploads: "SELECT upload_id FROM uploads WHERE state = 'active' AND created < $1 ORDER BY upload_id FOR UPDATE",
  listParts: 'SELECT part_number, etag, size, blob_id, uploaded, checksum FROM upload_parts WHERE upload_id = $1 ORDER BY part_number',
  /** The size of the upload's part of that number, if it has one (read under the upload's lock). */
  partSize: 'SELECT size FROM upload_parts WHERE upload_id = $1 AND part_number = $2',
  /** Records a part under the upload's lock; the blob of the part it replaces is queued ($7: when; $8: checksum). */
  putPart: `WITH old AS (SELECT blob_id FROM upload_parts WHERE upload_id = $1 AND part_number = $2),
    reclaimed AS (${reclaim('SELECT blob_id FROM old', '$7')}),
    written AS (INSERT INTO upload_parts (upload_id, part_number, etag, size, blob_id, uploaded, checksum) VALUES ($1, $2, $3, $4, $5, $6, $8)
      ON CONFLICT (upload_id, part_number) DO UPDATE
      SET etag = EXCLUDED.etag, size = EXCLUDED.size, blob_id = EXCLUDED.blob_id, uploaded = EXCLUDED.uploaded, checksum = EXCLUDED.checksum)
    SELECT 1`,
  /**
   * Ends uploads ($1: ids, locked) in state $4 at $5: their part rows go, and every part blob not in
   * $2 (the parts a completed object now uses) is queued for reclamation ($3: when), its bytes freed
   * from its account's usage. A completion keeps what it made: $6 the object version, $7 the parts
   * (JSON); NULL for aborts.
   */
  finishUploads: `WITH gone AS (DELETE FROM upload_parts WHERE upload_id = ANY ($1::text[]) RETURNING upload_id, blob_id, size),
    reclaimed AS (${reclaim('SELECT blob_id FROM gone WHERE blob_id <> ALL ($2::text[])', '$3')}),
    freed AS (UPDATE account_usage a SET object_bytes = a.object_bytes - f.bytes
      FROM (SELECT ${accountOf('u.bucket')} AS account_id, sum(g.size) AS bytes FROM gone g JOIN uploads u ON u.upload_id = g.upload_id
        WHERE g.blob_id <> ALL ($2::text[]) GROUP BY 1) f
      WHERE a.account_id = f.account_id),
    ended AS (UPDATE uploads SET state = $4, finished = $5, completed_version = $6::text, completed_parts = $7::text WHERE upload_id = ANY ($1::text[]))
    SELECT 1`,
  /** Up to $2 uploads that finished before $1 (or before finish times were kept), deleted. */
  forgetFinishedUploads: `WITH gone AS (DELETE FROM uploads WHERE upload_id IN (
      SELECT upload_id FROM uploads WHERE state <> 'active' AND (finished IS NULL OR finished < $1) LIMIT $2) RETURNING 1)
    SELECT count(*)::int AS n FROM gone`,

  /**
   * What each account stores (migration 16). A charge that adds is conditional: it returns no row
   * when the account ($1) has no row yet or when adding $2 bytes and $3 objects would pass a quota,
   * the row's own or, when NULL, $4 / $5 (0 for either: no limit). The row stays locked until the
   * transaction ends, so instances sharing the database charge one after another.
   */
  chargeObjects: `UPDATE account_usage SET object_bytes = object_bytes + $2::bigint, object_count = object_count + $3::bigint
    WHERE account_id = $1
      AND ($2::bigint <= 0 OR object_bytes + $2::bigint <= coalesce(nullif(coalesce(max_object_bytes, $4::bigint), 0), 9223372036854775807))
      AND ($3::bigint <= 0 OR object_count + $3::bigint <= coalesce(nullif(coalesce(max_objects, $5::bigint), 0), 9223372036854775807))
    RETURNING 1 AS charged`,
  ensureUsage: 'INSERT INTO account_usage (account_id) VALUES ($1) ON CONFLICT (account_id) DO NOTHING',
  /** What frees space (or moves it, adopting a bucket) is never refused. */
  addUsage: `INSERT INTO account_usage (account_id, object_bytes, object_count) VALUES ($1, $2, $3)
    ON CONFLICT (account_id) DO UPDATE SET object_bytes = account_usage.object_bytes + excluded.object_bytes,
      object_count = account_usage.object_count + excluded.object_count`,
  accountUsage: 'SELECT object_bytes, object_count, script_bytes, max_object_bytes, max_objects, max_script_bytes FROM account_usage WHERE account_id = $1',
  /** Read and written under the row's lock, so two operators' changes never lose one another. */
  lockAccountUsage:
    'SELECT object_bytes, object_count, script_bytes, max_object_bytes, max_objects, max_script_bytes FROM account_usage WHERE account_id = $1 FOR UPDATE',
  setAccountQuotas: `INSERT INTO account_usage (account_id, max_object_bytes, max_objects, max_script_bytes) VALUES ($1, $2, $3, $4)
    ON CONFLICT (account_id) DO UPDATE SET max_object_bytes = excluded.max_object_bytes, max_objects = excluded.max_objects,
      max_script_bytes = excluded.max_script_bytes`,
  forgetAccountUsage: 'DELETE FROM account_usage WHERE account_id = $1 AND object_bytes = 0 AND object_count = 0 AND script_bytes = 0',
  bucketContents: `SELECT coalesce(sum(size), 0)::bigint AS bytes, count(*)::bigint AS count,
    (SELECT coalesce(sum(p.size), 0) FROM upload_parts p JOIN uploads u ON u.upload_id = p.upload_id WHERE u.bucket = $1 AND u.state = 'active')::bigint AS part_bytes
    FROM objects WHERE bucket = $1`,

  queueReclaim: reclaim('SELECT unnest($1::text[])', '$2'),
  reclaimable: 'SELECT blob_id FROM blob_reclaim WHERE after <= $1 LIMIT $2',
  forgetReclaim: 'DELETE FROM blob_reclaim WHERE blob_id = ANY ($1::text[])',
  clearReclaim: 'DELETE FROM blob_reclaim',
  referencedBlobs: `SELECT blob_id FROM objects WHERE blob_id IS NOT NULL
    UNION ALL SELECT blob_id FROM object_parts UNION ALL SELECT blob_id FROM upload_parts`,

  putAccessKey: `INSERT INTO s3_access_keys (access_key_id, secret, account_id, permission, buckets, created, revoked) VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (access_key_id) DO UPDATE SET secret = EXCLUDED.secret, account_id = EXCLUDED.account_id, permission = EXCLUDED.permission,
      buckets = EXCLUDED.buckets, created = EXCLUDED.created, revoked = EXCLUDED.revoked`,
  accessKey: 'SELECT * FROM s3_access_keys WHERE access_key_id = $1 AND revoked IS NULL',
  listAccessKeys: 'SELECT * FROM s3_access_keys ORDER BY created, access_key_id',
  listAccountAccessKeys: 'SELECT * FROM s3_access_keys WHERE account_id = $1 ORDER BY created, access_key_id',
  /** found = 0 when the account has no such key; a revoked key keeps its first revocation time. */
  revokeAccessKey: `WITH revoked AS (UPDATE s3_access_keys SET revoked = $3 WHERE access_key_id = $2 AND account_id = $1 AND revoked IS NULL)
    SELECT count(*)::int AS found FROM s3_access_keys WHERE access_key_id = $2 AND account_id = $1`,
  adoptAccessKeys: 'WITH adopted AS (UPDATE s3_access_keys SET account_id = $1 WHERE account_id IS NULL RETURNING 1) SELECT count(*)::int AS n FROM adopted',
} as const;
