/**
 * MetadataStore on SQLite (better-sqlite3) in WAL mode: a write resolves only once the WAL holding
 * it is fsynced (see write-queue.ts). Reads run directly; writes go through the group-commit WriteQueue. All SQL of
 * the store lives in this file and in sqlite-statements.ts.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { openSqliteConnection } from './open-sqlite.ts';
import type { Clock } from '../../core/clock.ts';
import { SecretBox } from '../../core/crypto/secret-box.ts';
import { accessKeyBinding } from '../secrets/sealed-rows.ts';
import type { BucketInfo, BucketUsage, DeleteOutcome, ObjectMeta, StorageClass } from '../../store/engine/types.ts';
import type {
  AccessKeyRow,
  CompletionPlan,
  ListedAccessKeyRow,
  ListQuery,
  ListedRow,
  MetadataStore,
  PartRow,
  Precondition,
  PutObjectOptions,
  PutOutcome,
  StoredData,
  StoredObject,
  UploadRow,
} from '../metadata-store.ts';
import {
  completedPartsJson,
  parseJson,
  storedPart,
  toAccessKey,
  toBucket,
  toListedAccessKey,
  toPart,
  toUpload,
  toMeta as toMetaWithKey,
  type AccessKeyRecord,
  type BucketRecord,
} from '../metadata-rows.ts';
import { accountBucketRange, ownBucketName, storedBucketName } from '../../store/engine/account-store.ts';
import type { CorsRule } from '../../store/engine/cors.ts';
import type { LifecycleRule } from '../../store/engine/lifecycle.ts';
import type { BucketFilter } from '../../store/engine/store-engine.ts';
import {
  objectRecord,
  prepareStatements,
  type ListRecord,
  type ObjectRecord,
  type RawObjectRow,
  type Statements,
  type UploadRecord,
  type PartRecord,
} from './sqlite-statements.ts';
import type { WriteQueue } from './write-queue.ts';
import { AFTER_ALL_KEYS as AFTER_ALL } from '../../store/engine/key-order.ts';
import { toAccountQuotas } from '../../config/quotas.ts';
import {
  accountOfBucket,
  refusalFor,
  toAccountUsage,
  type AccountQuotaOverrides,
  type AccountQuotas,
  type AccountUsage,
  type AccountUsageRecord,
} from '../account-usage.ts';

/** Rows a usage count reads before it lets the event loop run (a few milliseconds of SQLite's time). */
const USAGE_CHUNK_ROWS = 10_000;

export interface SqliteMetadataStoreOptions {
  /** Database file path. */
  file: string;
  clock: Clock;
  /** How long a dereferenced blob file is kept before deletion, so in-flight reads finish. */
  reclaimGraceMs: number;
  /**
   * false when a WalCheckpointer thread checkpoints this database: commits then never stall on a
   * checkpoint. Default true (SQLite checkpoints during commits once the WAL passes 1000 pages).
   */
  autoCheckpoint?: boolean;
  /** The server's quotas, for accounts with none of their own (default: `[quotas]`'s defaults). */
  quotas?: AccountQuotas;
  /** Seals and opens S3 secret keys (src/db/secrets); without it, they can be neither stored nor read. */
  secrets?: SecretBox;
}

/** Uploads (with their parts) a bucket deletion drops per write transaction. */
const DROP_UPLOADS_BATCH = 500;

export class SqliteMetadataStore implements MetadataStore {
  readonly #db: Database;
  readonly #sql: Statements;
  readonly #writes: WriteQueue;
  readonly #clock: Clock;
  readonly #graceMs: number;
  readonly #quotas: AccountQuotas;
  readonly #secrets: SecretBox;

  constructor(options: SqliteMetadataStoreOptions) {
    const { db, writes } = openSqliteConnection(options.file, { autoCheckpoint: options.autoCheckpoint !== false, now: options.clock.now() });
    this.#db = db;
    this.#sql = prepareStatements(db);
    this.#writes = writes;
    this.#clock = options.clock;
    this.#graceMs = options.reclaimGraceMs;
    this.#quotas = options.quotas ?? toAccountQuotas(undefined);
    this.#secrets = options.secrets ?? SecretBox.locked();
  }

  async insertBucket(bucket: BucketInfo): Promise<boolean> {
    return this.#writes.run(() => this.#sql.insertBucket.run(bucket.name, bucket.created, bucket.storageClass).changes === 1);
  }

  async getBucket(name: string): Promise<BucketInfo | null> {
    const row = this.#bucketRow(name);
    return row ? toBucket(row) : null;
  }

  async setBucketStorageClass(name: string, storageClass: StorageClass): Promise<BucketInfo | null> {
    return this.#writes.run(() => {
      if (this.#sql.setBucketStorageClass.run(storageClass, name).changes === 0) return null;
      const row = this.#bucketRow(name);
      return row ? toBucket(row) : null;
    });
  }

  /**
   * Read USAGE_CHUNK_ROWS rows at a time, letting the event loop run between chunks: better-sqlite3
   * reads synchronously, and a bucket's million rows read at once held every other request (the
   * edge's included) for the whole read. Chunks are not one snapshot: objects written meanwhile may
   * be counted or not, as by a count taken a moment earlier or later.
   */
  async bucketUsage(name: string, maxRows: number, prefix = ''): Promise<BucketUsage | null> {
    if (!this.#bucketRow(name)) return null;
    const upper = prefix + AFTER_ALL;
    const usage: BucketUsage = { objectCount: 0, payloadSize: 0, metadataSize: 0, uploadCount: 0, complete: true };
    let last: string | null = null;
    while (usage.objectCount < maxRows) {
      const max = Math.min(USAGE_CHUNK_ROWS, maxRows - usage.objectCount);
      const chunk = (
        last === null
          ? this.#sql.usageFrom.get({ bucket: name, from: prefix, upper, max })
          : this.#sql.usageAfter.get({ bucket: name, after: last, upper, max })
      ) as { objects: number; payload: number; metadata: number; last: string | null };
      usage.objectCount += chunk.objects;
      usage.payloadSize += chunk.payload;
      usage.metadataSize += chunk.metadata;
      if (chunk.objects < max || chunk.last === null) break;
      last = chunk.last;
      await nextTurn();
    }
    let after: [string, string] = ['', ''];
    while (usage.uploadCount < maxRows) {
      const max = Math.min(USAGE_CHUNK_ROWS, maxRows - usage.uploadCount);
      const rows = this.#sql.usageUploads.all({ bucket: name, lower: prefix, upper, key: after[0], id: after[1], max }) as Array<[string, string]>;
      usage.uploadCount += rows.length;
      if (rows.length < max) break;
      after = rows[rows.length - 1]!;
      await nextTurn();
    }
    usage.complete = usage.objectCount < maxRows && usage.uploadCount < maxRows;
    return usage;
  }

  async listBuckets(filter?: BucketFilter): Promise<BucketInfo[]> {
    let rows: unknown[];
    if (filter === undefined) rows = this.#sql.listBuckets.all();
    else if ('unowned' in filter) rows = this.#sql.listUnownedBuckets.all();
    else {
      const { first, end } = accountBucketRange(filter.account);
      rows = this.#sql.listBucketRange.all(first, end);
    }
    return (rows as BucketRecord[]).map(toBucket);
  }

  async adoptBuckets(accountId: string): Promise<{ adopted: string[]; conflicts: string[] }> {
    const adopted: string[] = [];
    const conflicts: string[] = [];
    for (const { name } of this.#sql.listUnownedBuckets.all() as BucketRecord[]) {
      const target = storedBucketName(accountId, name);
      const moved = await this.#writes.run(() => {
        if (!this.#bucketExists(name)) return true;
        if (this.#bucketExists(target)) return false;
        // What the bucket holds moves from no account's usage to the adopter's (read once, here).
        const { bytes, count } = this.#sql.bucketContents.get(name) as { bytes: number; count: number };
        const partBytes = this.#sql.bucketPartBytes.get(name) as number;
        this.#sql.addUsage.run('', -(bytes + partBytes), -count);
        this.#sql.addUsage.run(accountId, bytes + partBytes, count);
        this.#sql.moveObjects.run(target, name);
        this.#sql.moveUploads.run(target, name);
        this.#sql.moveBucketCors.run(target, name);
        this.#sql.moveBucketLifecycle.run(target, name);
        this.#sql.renameBucket.run(target, name);
        return true;
      });
      (moved ? adopted : conflicts).push(name);
    }
    return { adopted, conflicts };
  }

  async deleteBucket(name: string): Promise<'deleted' | 'not-empty' | 'missing'> {
    // Uploads go a batch per write, so a bucket with very many never holds the write queue long.
    for (;;) {
      const outcome = await this.#writes.run((): 'deleted' | 'not-empty' | 'missing' | 'more' => {
        if (!this.#bucketExists(name)) return 'missing';
        if (this.#sql.anyObject.get(name)) return 'not-empty';
        const ids = this.#sql.bucketUploads.pluck().all(name, DROP_UPLOADS_BATCH + 1) as string[];
        let partBytes = 0;
        for (const id of ids.slice(0, DROP_UPLOADS_BATCH)) {
          for (const part of this.#sql.listParts.all(id) as PartRecord[]) {
            this.#reclaim(part.blob_id);
            partBytes += part.size;
          }
          this.#sql.deleteParts.run(id);
          this.#sql.deleteUpload.run(id);
        }
        this.#free(accountOfBucket(name), partBytes, 0);
        if (ids.length > DROP_UPLOADS_BATCH) return 'more';
        this.#sql.deleteBucketCors.run(name);
        this.#sql.deleteBucketLifecycle.run(name);
        this.#sql.deleteBucket.run(name);
        return 'deleted';
      });
      if (outcome !== 'more') return outcome;
    }
  }

  async getBucketCors(bucket: string): Promise<CorsRule[] | null> {
    const rules = this.#sql.getBucketCors.get(bucket) as string | undefined;
    return rules === undefined ? null : parseJson<CorsRule[]>(rules);
  }

  async putBucketCors(bucket: string, rules: CorsRule[] | null): Promise<boolean> {
    return this.#writes.run(() => {
      if (!this.#bucketExists(bucket)) return false;
      if (rules === null) this.#sql.deleteBucketCors.run(bucket);
      else this.#sql.putBucketCors.run(bucket, ownBucketName(bucket), JSON.stringify(rules));
      return true;
    });
  }

  async corsByName(name: string): Promise<Array<{ bucket: string; rules: CorsRule[] }>> {
    return (this.#sql.corsByName.all(name) as Array<{ bucket: string; rules: string }>).map((row) => ({
      bucket: row.bucket,
      rules: parseJson<CorsRule[]>(row.rules),
    }));
  }

  async getBucketLifecycle(bucket: string): Promise<LifecycleRule[] | null> {
    const rules = this.#sql.getBucketLifecycle.get(bucket) as string | undefined;
    return rules === undefined ? null : parseJson<LifecycleRule[]>(rules);
  }

  async putBucketLifecycle(bucket: string, rules: LifecycleRule[] | null): Promise<boolean> {
    return this.#writes.run(() => {
      if (!this.#bucketExists(bucket)) return false;
      if (rules === null) this.#sql.deleteBucketLifecycle.run(bucket);
      else this.#sql.putBucketLifecycle.run(bucket, JSON.stringify(rules));
      return true;
    });
  }

  async lifecycleBuckets(after: string, limit: number): Promise<Array<{ bucket: string; rules: LifecycleRule[] }>> {
    return (this.#sql.lifecycleBuckets.all(after, limit) as Array<{ bucket: string; rules: string }>).map((row) => ({
      bucket: row.bucket,
      rules: parseJson<LifecycleRule[]>(row.rules),
    }));
  }

  async setObjectStorageClass(bucket: string, key: string, version: string, storageClass: StorageClass): Promise<boolean> {
    return this.#writes.run(() => this.#sql.setObjectStorageClass.run(storageClass, bucket, key, version).changes === 1);
  }

  async takeLease(name: string, holder: string, now: number, until: number): Promise<string | null> {
    return this.#writes.run(() => {
      this.#sql.ensureLease.run(name);
      if (this.#sql.takeLease.run(holder, until, name, holder, now).changes === 0) return null;
      return this.#sql.leaseState.get(name) as string;
    });
  }

  async keepLease(name: string, holder: string, until: number, state: string): Promise<boolean> {
    return this.#writes.run(() => this.#sql.keepLease.run(until, state, name, holder).changes === 1);
  }

  /**
   * Inside a write: does the bucket still exist? Every write of this store runs in the write queue
   * (one transaction at a time, across connections too), so a deletion is ordered before or after it.
   */
  #bucketExists(name: string): boolean {
    return this.#bucketRow(name) !== undefined;
  }

  #bucketRow(name: string): BucketRecord | undefined {
    return this.#sql.getBucket.get(name) as BucketRecord | undefined;
  }

  async headObject(bucket: string, key: string): Promise<ObjectMeta | null> {
    const row = this.#sql.headObject.get(bucket, key) as RawObjectRow | undefined;
    return row ? toMeta(objectRecord(row)) : null;
  }

  async getObject(bucket: string, key: string): Promise<StoredObject | null> {
    const row = this.#currentObject(bucket, key);
    if (!row) return null;
    return { meta: toMeta(row), data: this.#dataOf(row) };
  }

  async putObject(bucket: string, meta: ObjectMeta, data: StoredData, options: PutObjectOptions = {}): Promise<PutOutcome> {
    return this.#writes.run((): PutOutcome => {
      const found = this.#sql.bucketAndObject.get(meta.key, bucket) as [string, ...RawObjectRow] | [string, null] | undefined;
      if (!found) return 'no-bucket';
      const current = found[1] === null ? undefined : objectRecord(found.slice(1) as RawObjectRow);
      if (options.precondition && !options.precondition(current ? toMeta(current) : null)) return 'precondition-failed';
      if (options.classOfBucket) meta.storageClass = found[0] as ObjectMeta['storageClass'];
      this.#charge(accountOfBucket(bucket), meta.size - (current?.size ?? 0), current ? 0 : 1);
      if (current) this.#dropObjectData(current);
      this.#insertObject(bucket, meta, data);
      return 'written';
    });
  }

  async deleteObjects(bucket: string, keys: readonly string[]): Promise<void> {
    await this.#writes.run(() => {
      let bytes = 0;
      let count = 0;
      for (const key of keys) {
        const current = this.#currentRow(bucket, key);
        if (!current) continue;
        this.#dropObjectData(current);
        this.#sql.deleteObject.run(bucket, key);
        bytes += current.size;
        count += 1;
      }
      this.#free(accountOfBucket(bucket), bytes, count);
    });
  }

  async deleteObject(bucket: string, key: string, precondition: (current: ObjectMeta) => boolean): Promise<DeleteOutcome> {
    return this.#writes.run((): DeleteOutcome => {
      const current = this.#currentRow(bucket, key);
      if (!current) return 'missing';
      if (!precondition(toMeta(current))) return 'precondition-failed';
      this.#dropObjectData(current);
      this.#sql.deleteObject.run(bucket, key);
      this.#free(accountOfBucket(bucket), current.size, 1);
      return 'deleted';
    });
  }

  async listObjects(bucket: string, query: ListQuery): Promise<ListedRow[]> {
    const prefix = query.prefix ?? '';
    // Compared as UTF-8 bytes, the list order (JS `>=` compares UTF-16 units, which disagree past U+FFFF).
    const after = query.after !== undefined && Buffer.compare(Buffer.from(query.after), Buffer.from(prefix)) >= 0 ? query.after : null;
    const upper = prefix === '' ? AFTER_ALL : prefix + AFTER_ALL;
    const withMetadata = query.withHttpMetadata || query.withCustomMetadata;
    const statement =
      after === null
        ? withMetadata
          ? this.#sql.listFromWithMetadata
          : this.#sql.listFrom
        : withMetadata
          ? this.#sql.listAfterWithMetadata
          : this.#sql.listAfter;
    const rows = statement.all(bucket, after ?? prefix, upper, query.limit) as ListRecord[];
    return rows.map((row) => ({
      key: row[0],
      version: row[1],
      size: row[2],
      etag: row[3],
      uploaded: row[4],
      checksums: parseJson(row[5]),
      storageClass: row[6] as ObjectMeta['storageClass'],
      httpMetadata: query.withHttpMetadata ? parseJson(row[7]!) : undefined,
      customMetadata: query.withCustomMetadata ? parseJson(row[8]!) : undefined,
    }));
  }

  async insertUpload(upload: UploadRow): Promise<boolean> {
    return this.#writes.run(() => {
      if (!this.#bucketExists(upload.bucket)) return false;
      this.#sql.insertUpload.run(
        upload.uploadId,
        upload.bucket,
        upload.key,
        upload.created,
        JSON.stringify(upload.httpMetadata),
        JSON.stringify(upload.customMetadata),
        upload.storageClass,
        upload.state,
        upload.checksumAlgorithm,
        upload.checksumType === 'FULL_OBJECT' ? 'FULL_OBJECT' : null,
        upload.ssec ? JSON.stringify(upload.ssec) : null,
      );
      return true;
    });
  }

  async getUpload(bucket: string, key: string, uploadId: string): Promise<UploadRow | null> {
    const row = this.#sql.getUpload.get(uploadId) as UploadRecord | undefined;
    return row && row.bucket === bucket && row.key === key ? toUpload(row, row.key) : null;
  }

  async putPart(uploadId: string, part: PartRow): Promise<boolean> {
    return this.#writes.run(() => {
      const upload = this.#sql.getUpload.get(uploadId) as UploadRecord | undefined;
      if (!upload || upload.state !== 'active') return false;
      const old = this.#sql.getPart.get(uploadId, part.partNumber) as PartRecord | undefined;
      // Parts count against the account's bytes as they arrive: open uploads cannot hold unbounded space.
      this.#charge(accountOfBucket(upload.bucket), part.size - (old?.size ?? 0), 0);
      if (old) this.#reclaim(old.blob_id);
      this.#sql.upsertPart.run(uploadId, part.partNumber, part.etag, part.size, part.blobId, part.uploaded, part.checksum ?? null);
      return true;
    });
  }

  async listParts(uploadId: string): Promise<PartRow[]> {
    return (this.#sql.listParts.all(uploadId) as PartRecord[]).map(toPart);
  }

  async listUploads(bucket: string, prefix: string): Promise<UploadRow[]> {
    const upper = prefix === '' ? AFTER_ALL : prefix + AFTER_ALL;
    return (this.#sql.listUploads.all(bucket, prefix, upper) as UploadRecord[]).map((row) => toUpload(row, row.key));
  }

  async completeUpload(
    bucket: string,
    key: string,
    uploadId: string,
    plan: (upload: UploadRow | null, parts: PartRow[]) => CompletionPlan,
    precondition?: Precondition,
  ): Promise<ObjectMeta | null> {
    return this.#writes.run(() => {
      const record = this.#sql.getUpload.get(uploadId) as UploadRecord | undefined;
      const upload = record && record.bucket === bucket && record.key === key ? toUpload(record, record.key) : null;
      const parts = upload ? (this.#sql.listParts.all(uploadId) as PartRecord[]).map(toPart) : [];
      const { meta, parts: used } = plan(upload, parts);
      const current = this.#currentObject(bucket, key);
      if (precondition && !precondition(current ? toMeta(current) : null)) return null;
      const usedIds = new Set(used.map((p) => p.blobId));
      const unused = parts.filter((part) => !usedIds.has(part.blobId));
      // The parts used were counted as they arrived: the object adds one to the count, and frees the unused parts and what it replaces.
      this.#charge(accountOfBucket(bucket), -(unused.reduce((sum, part) => sum + part.size, 0) + (current?.size ?? 0)), current ? 0 : 1);
      for (const part of unused) this.#reclaim(part.blobId);
      if (current) this.#dropObjectData(current);
      this.#insertObject(bucket, meta, { kind: 'parts', parts: used.map((p) => storedPart(p.blobId, p.size, p.checksum)) });
      this.#sql.deleteParts.run(uploadId);
      this.#sql.setUploadCompleted.run(this.#clock.now(), meta.version, completedPartsJson(used), uploadId);
      return meta;
    });
  }

  async abortUpload(bucket: string, key: string, uploadId: string): Promise<UploadRow['state'] | null> {
    return this.#writes.run(() => {
      const record = this.#sql.getUpload.get(uploadId) as UploadRecord | undefined;
      if (!record || record.bucket !== bucket || record.key !== key) return null;
      if (record.state === 'active') this.#abort(uploadId, record.bucket);
      return record.state as UploadRow['state'];
    });
  }

  async expireUploads(createdBefore: number): Promise<number> {
    return this.#writes.run(() => {
      const expired = this.#sql.expiredUploads.all(createdBefore) as Array<{ upload_id: string; bucket: string }>;
      for (const upload of expired) this.#abort(upload.upload_id, upload.bucket);
      return expired.length;
    });
  }

  async forgetFinishedUploads(finishedBefore: number, limit: number): Promise<number> {
    return this.#writes.run(() => {
      const ids = this.#sql.finishedUploads.pluck().all(finishedBefore, limit) as string[];
      for (const id of ids) this.#sql.deleteUpload.run(id);
      return ids.length;
    });
  }

  async reclaimableBlobs(now: number, limit: number): Promise<string[]> {
    return this.#sql.reclaimable.pluck().all(now, limit) as string[];
  }

  async confirmReclaimed(blobIds: readonly string[]): Promise<void> {
    await this.#writes.run(() => {
      for (const id of blobIds) this.#sql.forgetReclaim.run(id);
    });
  }

  async queueReclaim(blobIds: readonly string[]): Promise<void> {
    await this.#writes.run(() => {
      for (const id of blobIds) this.#reclaim(id);
    });
  }

  async referencedBlobIds(): Promise<Set<string>> {
    return new Set(this.#sql.referencedBlobs.pluck().all() as string[]);
  }

  async clearReclaimQueue(): Promise<void> {
    await this.#writes.run(() => this.#sql.clearReclaim.run());
  }

  async putAccessKey(key: AccessKeyRow): Promise<void> {
    const sealed = this.#secrets.seal(key.secret, accessKeyBinding(key.accessKeyId));
    await this.#writes.run(() =>
      this.#sql.putAccessKey.run(
        key.accessKeyId,
        sealed,
        key.accountId,
        key.permission,
        key.buckets === null ? null : JSON.stringify(key.buckets),
        key.created,
        key.revoked,
      ),
    );
  }

  async accessKey(accessKeyId: string): Promise<AccessKeyRow | undefined> {
    const row = this.#sql.accessKey.get(accessKeyId) as AccessKeyRecord | undefined;
    return row && toAccessKey(row, this.#secrets);
  }

  async listAccessKeys(accountId?: string): Promise<ListedAccessKeyRow[]> {
    const rows = accountId === undefined ? this.#sql.listAccessKeys.all() : this.#sql.listAccountAccessKeys.all(accountId);
    return (rows as AccessKeyRecord[]).map(toListedAccessKey);
  }

  async revokeAccessKey(accountId: string, accessKeyId: string, at: number): Promise<boolean> {
    return this.#writes.run(() => {
      if (!this.#sql.accountAccessKeyExists.get(accessKeyId, accountId)) return false;
      this.#sql.revokeAccessKey.run(at, accessKeyId);
      return true;
    });
  }

  async adoptAccessKeys(accountId: string): Promise<number> {
    return this.#writes.run(() => this.#sql.adoptAccessKeys.run(accountId).changes);
  }

  async accountUsage(accountId: string): Promise<AccountUsage> {
    return this.#usage(accountId);
  }

  async setAccountQuotas(accountId: string, overrides: AccountQuotaOverrides): Promise<AccountUsage> {
    return this.#writes.run(() => {
      const { own, quotas } = this.#usage(accountId);
      const value = (name: keyof AccountQuotaOverrides): number | null => (name in overrides ? (overrides[name] ?? null) : own[name] ? quotas[name] : null);
      this.#sql.setAccountQuotas.run(accountId, value('maxObjectBytes'), value('maxObjects'), value('maxScriptBytes'));
      return this.#usage(accountId);
    });
  }

  async forgetAccountUsage(accountId: string): Promise<void> {
    await this.#writes.run(() => this.#sql.forgetAccountUsage.run(accountId));
  }

  async close(): Promise<void> {
    // Let queued writes finish first: a write queued after this point would fail.
    await this.#writes.run(() => undefined);
    this.#db.close();
    await this.#writes.close();
  }

  #abort(uploadId: string, bucket: string): void {
    let bytes = 0;
    for (const part of this.#sql.listParts.all(uploadId) as PartRecord[]) {
      this.#reclaim(part.blob_id);
      bytes += part.size;
    }
    this.#free(accountOfBucket(bucket), bytes, 0);
    this.#sql.deleteParts.run(uploadId);
    this.#sql.setUploadState.run('aborted', this.#clock.now(), uploadId);
  }

  /** The current object's row without its inline body (what replacing or deleting it needs). */
  #currentRow(bucket: string, key: string): ObjectRecord | undefined {
    const row = this.#sql.headObject.get(bucket, key) as RawObjectRow | undefined;
    return row ? objectRecord(row) : undefined;
  }

  #currentObject(bucket: string, key: string): ObjectRecord | undefined {
    const row = this.#sql.getObject.get(bucket, key) as RawObjectRow | undefined;
    return row ? objectRecord(row) : undefined;
  }

  #dataOf(row: ObjectRecord): StoredData {
    if (row.part_count > 0) {
      const parts = this.#sql.objectParts.all(row.version) as Array<{ blob_id: string; size: number; checksum: string | null }>;
      return { kind: 'parts', parts: parts.map((p) => storedPart(p.blob_id, p.size, p.checksum)) };
    }
    if (row.blob_id !== null) return { kind: 'blob', blobId: row.blob_id };
    return { kind: 'inline', bytes: row.inline_data ?? new Uint8Array(0) };
  }

  #insertObject(bucket: string, meta: ObjectMeta, data: StoredData): void {
    const partCount = data.kind === 'parts' ? data.parts.length : 0;
    const bodyId = data.kind === 'inline' ? Number(this.#sql.insertBody.run(data.bytes).lastInsertRowid) : null;
    this.#sql.upsertObject.run(
      bucket,
      meta.key,
      meta.version,
      meta.size,
      meta.etag,
      meta.uploaded,
      JSON.stringify(meta.httpMetadata),
      JSON.stringify(meta.customMetadata),
      JSON.stringify(meta.checksums),
      meta.storageClass,
      data.kind === 'inline' ? 1 : 0,
      data.kind === 'blob' ? data.blobId : null,
      // A multipart object of zero parts still needs part_count > 0 to be read as one; its body is empty.
      data.kind === 'parts' ? Math.max(partCount, 1) : 0,
      meta.ssec ? JSON.stringify(meta.ssec) : null,
      bodyId,
    );
    if (data.kind === 'parts') {
      data.parts.forEach((part, idx) => this.#sql.insertObjectPart.run(meta.version, idx, part.blobId, part.size, part.checksum ?? null));
    }
  }

  /** Queues the blobs of an object being replaced or deleted, and forgets its part rows. */
  #dropObjectData(row: ObjectRecord): void {
    if (row.body_id !== null) this.#sql.deleteBody.run(row.body_id);
    else if (row.has_inline) this.#sql.deleteInlineBody.run(row.version);
    if (row.blob_id !== null) this.#reclaim(row.blob_id);
    if (row.part_count > 0) {
      for (const id of this.#sql.objectParts.all(row.version).map((p) => (p as { blob_id: string }).blob_id)) this.#reclaim(id);
      this.#sql.deleteObjectParts.run(row.version);
    }
  }

  #usage(accountId: string): AccountUsage {
    return toAccountUsage(this.#sql.accountUsage.get(accountId) as AccountUsageRecord | undefined, this.#quotas);
  }

  /**
   * Inside a write: adds `bytes` and `count` to what the account stores, or throws a QuotaRefusal
   * (the write's savepoint rolls back: nothing of it is kept) when that would pass one of its quotas.
   */
  #charge(account: string, bytes: number, count: number): void {
    if (bytes <= 0 && count <= 0) {
      if (bytes < 0 || count < 0) this.#sql.addUsage.run(account, bytes, count);
      return;
    }
    const { maxObjectBytes, maxObjects } = this.#quotas;
    const charge = () =>
      this.#sql.chargeObjects.run(bytes, count, account, bytes <= 0 ? 1 : 0, bytes, maxObjectBytes, count <= 0 ? 1 : 0, count, maxObjects).changes === 1;
    if (charge()) return;
    // No row yet (the account's first write), or over a quota.
    if (this.#sql.ensureUsage.run(account).changes === 1 && charge()) return;
    throw refusalFor(this.#usage(account), bytes, count);
  }

  /** Inside a write: what the account stores shrinks by `bytes` and `count` (never refused). */
  #free(account: string, bytes: number, count: number): void {
    if (bytes !== 0 || count !== 0) this.#sql.addUsage.run(account, -bytes, -count);
  }

  #reclaim(blobId: string): void {
    this.#sql.queueReclaim.run(blobId, this.#clock.now() + this.#graceMs);
  }
}

function toMeta(row: ObjectRecord): ObjectMeta {
  return toMetaWithKey(row, row.key);
}
