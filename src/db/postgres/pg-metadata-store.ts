/**
 * MetadataStore on PostgreSQL, shared by every instance of a deployment: the same behaviour as the
 * SQLite store (src/db/sqlite/sqlite-metadata-store.ts), with transactions making its guarantees
 * hold across instances. All SQL lives in pg-metadata-statements.ts; every statement is prepared
 * once per connection. One query per read, one statement or one transaction per write.
 *
 * Concurrency (READ COMMITTED, row locks, no advisory locks):
 * - A write to a key locks its row with SELECT ... FOR UPDATE, runs the precondition on the row as
 *   committed, then writes in one statement. A key with no row yet is written with INSERT ... ON
 *   CONFLICT DO NOTHING: when a concurrent transaction inserted the same key first, the insert waits
 *   for it, writes nothing, and the transaction reads the key again (a fresh snapshot, now locking
 *   the row) and re-runs the precondition. So two conditional puts never both see "no object".
 * - A put and a new upload hold KEY SHARE on the bucket's row; deleting the bucket locks the row
 *   FOR UPDATE before checking it is empty, so a bucket is never deleted under a write into it.
 * - Part writes, completion and abort lock the upload row first and read its parts afterwards, in a
 *   later statement (a fresh snapshot), so a completion sees every part committed before it and
 *   completes an upload at most once.
 * - What an account stores (account_usage) changes in the transaction of the write that changes it,
 *   as its last statement: a charge that adds is a conditional UPDATE of the account's row, which
 *   waits for (and then sees) every other charge of that account, from any instance, so two writes
 *   never both pass a quota that only one fits under.
 * Single-statement writes are atomic by themselves; they and transactions retry on serialization
 * failures and deadlocks.
 */
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
import type { PgClient, PgDatabase } from './pg-database.ts';
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
import { PG_SQL as SQL, type PgListPage, type PgObjectRecord, type PgPartRecord, type PgStoredRecord, type PgUploadRecord } from './pg-metadata-statements.ts';

export interface PgMetadataStoreOptions {
  /** The instance's database; shared with other stores, so close() leaves it open. */
  database: PgDatabase;
  clock: Clock;
  /** How long a dereferenced blob is kept before deletion, so in-flight reads finish. */
  reclaimGraceMs: number;
  /** The server's quotas, for accounts with none of their own (default: `[quotas]`'s defaults). */
  quotas?: AccountQuotas;
  /** Seals and opens S3 secret keys (src/db/secrets); without it, they can be neither stored nor read. */
  secrets?: SecretBox;
}

/** SQLSTATEs after which a statement or transaction is simply run again: serialization_failure, deadlock_detected. */
/** Bounds the re-reads of a key that concurrent writers keep creating and deleting. */
const MAX_KEY_RACES = 100;
/** Never occurs in UTF-8, so `prefix || 0xFF` sorts after every key that starts with `prefix`. */
const AFTER_UTF8 = Buffer.from([0xff]);
/** Uploads (with their parts) a bucket deletion drops per transaction. */
const DROP_UPLOADS_BATCH = 500;

export class PgMetadataStore implements MetadataStore {
  readonly #db: PgDatabase;
  readonly #clock: Clock;
  readonly #graceMs: number;
  readonly #quotas: AccountQuotas;
  readonly #secrets: SecretBox;
  readonly #pending = new Set<Promise<unknown>>();
  #closed = false;

  constructor(options: PgMetadataStoreOptions) {
    this.#db = options.database;
    this.#clock = options.clock;
    this.#graceMs = options.reclaimGraceMs;
    this.#quotas = options.quotas ?? toAccountQuotas(undefined);
    this.#secrets = options.secrets ?? SecretBox.locked();
  }

  async insertBucket(bucket: BucketInfo): Promise<boolean> {
    const rows = await this.#write('insertBucket', [bucket.name, bucket.created, bucket.storageClass]);
    return rows.length === 1;
  }

  async getBucket(name: string): Promise<BucketInfo | null> {
    const [row] = await this.#read<BucketRecord>('getBucket', [name]);
    return row ? toBucket(row) : null;
  }

  async setBucketStorageClass(name: string, storageClass: StorageClass): Promise<BucketInfo | null> {
    const [row] = (await this.#write('setBucketStorageClass', [name, storageClass])) as BucketRecord[];
    return row ? toBucket(row) : null;
  }

  async bucketUsage(name: string, maxRows: number, prefix = ''): Promise<BucketUsage | null> {
    if (!(await this.getBucket(name))) return null;
    const lower = utf8(prefix);
    const [row] = await this.#read<{ objects: string; payload: string; metadata: string; uploads: string }>('bucketUsage', [
      name,
      maxRows,
      lower,
      Buffer.concat([lower, AFTER_UTF8]),
    ]);
    const [objects, payload, metadata, uploads] = [row!.objects, row!.payload, row!.metadata, row!.uploads].map(Number) as [number, number, number, number];
    return { objectCount: objects, payloadSize: payload, metadataSize: metadata, uploadCount: uploads, complete: objects < maxRows && uploads < maxRows };
  }

  async listBuckets(filter?: BucketFilter): Promise<BucketInfo[]> {
    if (filter === undefined) return (await this.#read<BucketRecord>('listBuckets')).map(toBucket);
    if ('unowned' in filter) return (await this.#read<BucketRecord>('listUnownedBuckets')).map(toBucket);
    const { first, end } = accountBucketRange(filter.account);
    return (await this.#read<BucketRecord>('listBucketRange', [first, end])).map(toBucket);
  }

  async adoptBuckets(accountId: string): Promise<{ adopted: string[]; conflicts: string[] }> {
    const adopted: string[] = [];
    const conflicts: string[] = [];
    for (const { name } of await this.#read<BucketRecord>('listUnownedBuckets')) {
      const target = storedBucketName(accountId, name);
      // The lock orders the move after every put into the bucket (they hold KEY SHARE) and before
      // any that starts now, which then finds no bucket of that name, as after a deletion.
      const moved = await this.#transaction(async (client) => {
        const [found] = await this.#run(client, 'lockBucket', [name]);
        if (!found) return true;
        if ((await this.#run(client, 'getBucket', [target])).length > 0) return false;
        // What the bucket holds moves from no account's usage to the adopter's (read once, here).
        const [held] = await this.#run<{ bytes: number; count: number; part_bytes: number }>(client, 'bucketContents', [name]);
        await this.#run(client, 'addUsage', ['', -(held!.bytes + held!.part_bytes), -held!.count]);
        await this.#run(client, 'addUsage', [accountId, held!.bytes + held!.part_bytes, held!.count]);
        await this.#run(client, 'moveObjects', [target, name]);
        await this.#run(client, 'moveUploads', [target, name]);
        await this.#run(client, 'moveBucketCors', [target, name]);
        await this.#run(client, 'moveBucketLifecycle', [target, name]);
        await this.#run(client, 'renameBucket', [target, name]);
        return true;
      });
      (moved ? adopted : conflicts).push(name);
    }
    return { adopted, conflicts };
  }

  async deleteBucket(name: string): Promise<'deleted' | 'not-empty' | 'missing'> {
    // Its uploads (open ones aborted) go a batch per transaction, so very many never hold one long.
    for (;;) {
      const outcome = await this.#transaction(async (client): Promise<'deleted' | 'not-empty' | 'missing' | 'more'> => {
        const [found] = await this.#run(client, 'lockBucket', [name]);
        if (!found) return 'missing';
        const [{ busy }] = (await this.#run<{ busy: boolean }>(client, 'bucketBusy', [name])) as [{ busy: boolean }];
        if (busy) return 'not-empty';
        const ids = (await this.#run<{ upload_id: string }>(client, 'lockBucketUploads', [name, DROP_UPLOADS_BATCH + 1])).map((row) => row.upload_id);
        if (ids.length > 0) await this.#run(client, 'dropUploads', [ids.slice(0, DROP_UPLOADS_BATCH), this.#reclaimAfter(), accountOfBucket(name)]);
        if (ids.length > DROP_UPLOADS_BATCH) return 'more';
        await this.#run(client, 'deleteBucketCors', [name]);
        await this.#run(client, 'deleteBucketLifecycle', [name]);
        await this.#run(client, 'deleteBucket', [name]);
        return 'deleted';
      });
      if (outcome !== 'more') return outcome;
    }
  }

  async getBucketCors(bucket: string): Promise<CorsRule[] | null> {
    const [row] = await this.#read<{ rules: string }>('getBucketCors', [bucket]);
    return row ? parseJson<CorsRule[]>(row.rules) : null;
  }

  async putBucketCors(bucket: string, rules: CorsRule[] | null): Promise<boolean> {
    return this.#transaction(async (client) => {
      const [found] = await this.#run(client, 'shareBucket', [bucket]);
      if (!found) return false;
      if (rules === null) await this.#run(client, 'deleteBucketCors', [bucket]);
      else await this.#run(client, 'putBucketCors', [bucket, ownBucketName(bucket), JSON.stringify(rules)]);
      return true;
    });
  }

  async corsByName(name: string): Promise<Array<{ bucket: string; rules: CorsRule[] }>> {
    return (await this.#read<{ bucket: string; rules: string }>('corsByName', [name])).map((row) => ({
      bucket: row.bucket,
      rules: parseJson<CorsRule[]>(row.rules),
    }));
  }

  async getBucketLifecycle(bucket: string): Promise<LifecycleRule[] | null> {
    const [row] = await this.#read<{ rules: string }>('getBucketLifecycle', [bucket]);
    return row ? parseJson<LifecycleRule[]>(row.rules) : null;
  }

  async putBucketLifecycle(bucket: string, rules: LifecycleRule[] | null): Promise<boolean> {
    return this.#transaction(async (client) => {
      const [found] = await this.#run(client, 'shareBucket', [bucket]);
      if (!found) return false;
      if (rules === null) await this.#run(client, 'deleteBucketLifecycle', [bucket]);
      else await this.#run(client, 'putBucketLifecycle', [bucket, JSON.stringify(rules)]);
      return true;
    });
  }

  async lifecycleBuckets(after: string, limit: number): Promise<Array<{ bucket: string; rules: LifecycleRule[] }>> {
    return (await this.#read<{ bucket: string; rules: string }>('lifecycleBuckets', [after, limit])).map((row) => ({
      bucket: row.bucket,
      rules: parseJson<LifecycleRule[]>(row.rules),
    }));
  }

  async setObjectStorageClass(bucket: string, key: string, version: string, storageClass: StorageClass): Promise<boolean> {
    return (await this.#write('setObjectStorageClass', [bucket, utf8(key), version, storageClass])).length === 1;
  }

  async takeLease(name: string, holder: string, now: number, until: number): Promise<string | null> {
    const [row] = await this.#write<{ state: string }>('takeLease', [name, holder, until, now]);
    return row ? row.state : null;
  }

  async keepLease(name: string, holder: string, until: number, state: string): Promise<boolean> {
    return (await this.#write('keepLease', [name, holder, until, state])).length === 1;
  }

  async headObject(bucket: string, key: string): Promise<ObjectMeta | null> {
    const [row] = await this.#read<PgObjectRecord>('headObject', [bucket, utf8(key)]);
    return row ? toMeta(row) : null;
  }

  async getObject(bucket: string, key: string): Promise<StoredObject | null> {
    const [row] = await this.#read<PgStoredRecord>('getObject', [bucket, utf8(key)]);
    if (!row) return null;
    return { meta: toMeta(row), data: dataOf(row) };
  }

  async putObject(bucket: string, meta: ObjectMeta, data: StoredData, options: PutObjectOptions = {}): Promise<PutOutcome> {
    return this.#transaction(async (client): Promise<PutOutcome> => {
      const [found] = await this.#run<{ storage_class: string }>(client, 'shareBucket', [bucket]);
      if (!found) return 'no-bucket';
      if (options.classOfBucket) meta.storageClass = found.storage_class as ObjectMeta['storageClass'];
      const written = await this.#writeObject(client, bucket, meta, data, options.precondition);
      if (!written) return 'precondition-failed';
      await this.#charge(client, accountOfBucket(bucket), meta.size - (written.replacedSize ?? 0), written.replacedSize === null ? 1 : 0);
      return 'written';
    });
  }

  async deleteObjects(bucket: string, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#write('deleteObjects', [bucket, keys.map(utf8), this.#reclaimAfter(), accountOfBucket(bucket)]);
  }

  async deleteObject(bucket: string, key: string, precondition: (current: ObjectMeta) => boolean): Promise<DeleteOutcome> {
    return this.#transaction(async (client): Promise<DeleteOutcome> => {
      // The row is locked before it is judged: a write racing the deletion waits, or is waited for.
      const [current] = await this.#run<PgObjectRecord>(client, 'lockObject', [bucket, utf8(key)]);
      if (!current) return 'missing';
      if (!precondition(toMeta(current))) return 'precondition-failed';
      await this.#run(client, 'deleteObjects', [bucket, [utf8(key)], this.#reclaimAfter(), accountOfBucket(bucket)]);
      return 'deleted';
    });
  }

  async listObjects(bucket: string, query: ListQuery): Promise<ListedRow[]> {
    const prefix = utf8(query.prefix ?? '');
    const after = query.after === undefined ? null : utf8(query.after);
    // Compared as bytes, the list order: `after` is the bound only when it is not below the prefix.
    const fromAfter = after !== null && Buffer.compare(after, prefix) >= 0;
    const upper = Buffer.concat([prefix, AFTER_UTF8]);
    const withMetadata = query.withHttpMetadata || query.withCustomMetadata;
    const statement: Statement = fromAfter ? (withMetadata ? 'listAfterWithMetadata' : 'listAfter') : withMetadata ? 'listFromWithMetadata' : 'listFrom';
    const [{ page }] = (await this.#read<PgListPage>(statement, [bucket, fromAfter ? after : prefix, upper, query.limit])) as [PgListPage];
    return page.map(([keyHex, version, size, etag, uploaded, checksums, storageClass, httpMetadata, customMetadata]) => ({
      key: Buffer.from(keyHex, 'hex').toString('utf8'),
      version,
      size,
      etag,
      uploaded,
      checksums,
      storageClass: storageClass as ObjectMeta['storageClass'],
      httpMetadata: query.withHttpMetadata ? (httpMetadata as ObjectMeta['httpMetadata']) : undefined,
      customMetadata: query.withCustomMetadata ? customMetadata : undefined,
    }));
  }

  async insertUpload(upload: UploadRow): Promise<boolean> {
    return this.#transaction(async (client) => {
      const [found] = await this.#run(client, 'shareBucket', [upload.bucket]);
      if (!found) return false;
      await this.#run(client, 'insertUpload', [
        upload.uploadId,
        upload.bucket,
        utf8(upload.key),
        upload.created,
        JSON.stringify(upload.httpMetadata),
        JSON.stringify(upload.customMetadata),
        upload.storageClass,
        upload.state,
        upload.checksumAlgorithm,
        upload.checksumType === 'FULL_OBJECT' ? 'FULL_OBJECT' : null,
        upload.ssec ? JSON.stringify(upload.ssec) : null,
      ]);
      return true;
    });
  }

  async getUpload(bucket: string, key: string, uploadId: string): Promise<UploadRow | null> {
    const [row] = await this.#read<PgUploadRecord>('getUpload', [uploadId]);
    return row ? matchingUpload(row, bucket, key) : null;
  }

  async putPart(uploadId: string, part: PartRow): Promise<boolean> {
    return this.#transaction(async (client) => {
      const [upload] = await this.#run<PgUploadRecord>(client, 'lockUpload', [uploadId]);
      if (!upload || upload.state !== 'active') return false;
      const [old] = await this.#run<{ size: number }>(client, 'partSize', [uploadId, part.partNumber]);
      await this.#run(client, 'putPart', [
        uploadId,
        part.partNumber,
        part.etag,
        part.size,
        part.blobId,
        part.uploaded,
        this.#reclaimAfter(),
        part.checksum ?? null,
      ]);
      // Parts count against the account's bytes as they arrive: open uploads cannot hold unbounded space.
      await this.#charge(client, accountOfBucket(upload.bucket), part.size - (old?.size ?? 0), 0);
      return true;
    });
  }

  async listParts(uploadId: string): Promise<PartRow[]> {
    return (await this.#read<PgPartRecord>('listParts', [uploadId])).map(toPart);
  }

  async listUploads(bucket: string, prefix: string): Promise<UploadRow[]> {
    const lower = utf8(prefix);
    const rows = await this.#read<PgUploadRecord>('listUploads', [bucket, lower, Buffer.concat([lower, AFTER_UTF8])]);
    return rows.map((row) => toUpload(row, row.key.toString('utf8')));
  }

  async completeUpload(
    bucket: string,
    key: string,
    uploadId: string,
    plan: (upload: UploadRow | null, parts: PartRow[]) => CompletionPlan,
    precondition?: Precondition,
  ): Promise<ObjectMeta | null> {
    return this.#transaction(async (client) => {
      const [record] = await this.#run<PgUploadRecord>(client, 'lockUpload', [uploadId]);
      const upload = record ? matchingUpload(record, bucket, key) : null;
      // Read after the lock is held: every part write committed before this completion is seen.
      const parts = upload ? (await this.#run<PgPartRecord>(client, 'listParts', [uploadId])).map(toPart) : [];
      const { meta, parts: used } = plan(upload, parts);
      // A failed precondition writes nothing and leaves the upload active.
      const written = await this.#writeObject(
        client,
        bucket,
        meta,
        { kind: 'parts', parts: used.map((p) => storedPart(p.blobId, p.size, p.checksum)) },
        precondition,
      );
      if (!written) return null;
      await this.#run(client, 'finishUploads', [
        [uploadId],
        used.map((p) => p.blobId),
        this.#reclaimAfter(),
        'completed',
        this.#clock.now(),
        meta.version,
        completedPartsJson(used),
      ]);
      // The parts used were counted as they arrived (finishUploads freed the others): the object adds one to the count and frees what it replaces.
      await this.#charge(client, accountOfBucket(bucket), -(written.replacedSize ?? 0), written.replacedSize === null ? 1 : 0);
      return meta;
    });
  }

  async abortUpload(bucket: string, key: string, uploadId: string): Promise<UploadRow['state'] | null> {
    return this.#transaction(async (client) => {
      const [record] = await this.#run<PgUploadRecord>(client, 'lockUpload', [uploadId]);
      if (!record || !matchingUpload(record, bucket, key)) return null;
      if (record.state === 'active') await this.#run(client, 'finishUploads', [[uploadId], [], this.#reclaimAfter(), 'aborted', this.#clock.now(), null, null]);
      return record.state as UploadRow['state'];
    });
  }

  async expireUploads(createdBefore: number): Promise<number> {
    return this.#transaction(async (client) => {
      const ids = (await this.#run<{ upload_id: string }>(client, 'lockExpiredUploads', [createdBefore])).map((row) => row.upload_id);
      if (ids.length > 0) await this.#run(client, 'finishUploads', [ids, [], this.#reclaimAfter(), 'aborted', this.#clock.now(), null, null]);
      return ids.length;
    });
  }

  async forgetFinishedUploads(finishedBefore: number, limit: number): Promise<number> {
    const [row] = await this.#write<{ n: number }>('forgetFinishedUploads', [finishedBefore, limit]);
    return row!.n;
  }

  async reclaimableBlobs(now: number, limit: number): Promise<string[]> {
    return (await this.#read<{ blob_id: string }>('reclaimable', [now, limit])).map((row) => row.blob_id);
  }

  async confirmReclaimed(blobIds: readonly string[]): Promise<void> {
    if (blobIds.length > 0) await this.#write('forgetReclaim', [blobIds]);
  }

  async queueReclaim(blobIds: readonly string[]): Promise<void> {
    if (blobIds.length > 0) await this.#write('queueReclaim', [blobIds, this.#reclaimAfter()]);
  }

  async referencedBlobIds(): Promise<Set<string>> {
    return new Set((await this.#read<{ blob_id: string }>('referencedBlobs')).map((row) => row.blob_id));
  }

  async clearReclaimQueue(): Promise<void> {
    await this.#write('clearReclaim');
  }

  async putAccessKey(key: AccessKeyRow): Promise<void> {
    await this.#write('putAccessKey', [
      key.accessKeyId,
      this.#secrets.seal(key.secret, accessKeyBinding(key.accessKeyId)),
      key.accountId,
      key.permission,
      key.buckets === null ? null : JSON.stringify(key.buckets),
      key.created,
      key.revoked,
    ]);
  }

  async accessKey(accessKeyId: string): Promise<AccessKeyRow | undefined> {
    const [row] = await this.#read<AccessKeyRecord>('accessKey', [accessKeyId]);
    return row && toAccessKey(row, this.#secrets);
  }

  async listAccessKeys(accountId?: string): Promise<ListedAccessKeyRow[]> {
    const rows =
      accountId === undefined ? await this.#read<AccessKeyRecord>('listAccessKeys') : await this.#read<AccessKeyRecord>('listAccountAccessKeys', [accountId]);
    return rows.map(toListedAccessKey);
  }

  async revokeAccessKey(accountId: string, accessKeyId: string, at: number): Promise<boolean> {
    const [row] = await this.#write<{ found: number }>('revokeAccessKey', [accountId, accessKeyId, at]);
    return row!.found > 0;
  }

  async adoptAccessKeys(accountId: string): Promise<number> {
    const [row] = await this.#write<{ n: number }>('adoptAccessKeys', [accountId]);
    return row!.n;
  }

  async accountUsage(accountId: string): Promise<AccountUsage> {
    const [row] = await this.#read<AccountUsageRecord>('accountUsage', [accountId]);
    return toAccountUsage(row, this.#quotas);
  }

  async setAccountQuotas(accountId: string, overrides: AccountQuotaOverrides): Promise<AccountUsage> {
    return this.#transaction(async (client) => {
      await this.#run(client, 'ensureUsage', [accountId]);
      const [row] = await this.#run<AccountUsageRecord>(client, 'lockAccountUsage', [accountId]);
      const { own, quotas } = toAccountUsage(row, this.#quotas);
      const value = (name: keyof AccountQuotaOverrides): number | null => (name in overrides ? (overrides[name] ?? null) : own[name] ? quotas[name] : null);
      await this.#run(client, 'setAccountQuotas', [accountId, value('maxObjectBytes'), value('maxObjects'), value('maxScriptBytes')]);
      const [updated] = await this.#run<AccountUsageRecord>(client, 'accountUsage', [accountId]);
      return toAccountUsage(updated, this.#quotas);
    });
  }

  async forgetAccountUsage(accountId: string): Promise<void> {
    await this.#write('forgetAccountUsage', [accountId]);
  }

  /** Waits for the operations in flight; the database stays open (its owner closes it). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#pending]);
  }

  /**
   * Writes `meta` over whatever the key holds unless `precondition` rejects the current object
   * (null). Runs inside a transaction; the current row stays locked until it ends. Answers the size
   * of the object it replaced (null: the key had none), which the caller charges to the account.
   */
  async #writeObject(
    client: PgClient,
    bucket: string,
    meta: ObjectMeta,
    data: StoredData,
    precondition?: Precondition,
  ): Promise<{ replacedSize: number | null } | null> {
    const key = utf8(meta.key);
    const values = [bucket, key, ...objectValues(meta, data)];
    for (let race = 0; race < MAX_KEY_RACES; race++) {
      const [current] = await this.#run<PgObjectRecord>(client, 'lockObject', [bucket, key]);
      if (precondition && !precondition(current ? toMeta(current) : null)) return null;
      if (current) {
        await this.#run(client, 'replaceObject', [...values, current.version, current.blob_id, this.#reclaimAfter()]);
        return { replacedSize: Number(current.size) };
      }
      const [inserted] = await this.#run<{ written: number }>(client, 'insertObject', values);
      if (inserted!.written === 1) return { replacedSize: null };
      // Another transaction created the key after our read and has committed: read it again.
    }
    throw new Error(`Key ${JSON.stringify(meta.key)} in bucket ${JSON.stringify(bucket)} kept changing under a write; try again.`);
  }

  /**
   * Inside a transaction, as its last write: adds `bytes` and `count` to what the account stores,
   * or throws a QuotaRefusal (the transaction rolls back: nothing of the write is kept) when that
   * would pass one of its quotas. Freeing space is never refused.
   */
  async #charge(client: PgClient, account: string, bytes: number, count: number): Promise<void> {
    if (bytes <= 0 && count <= 0) {
      if (bytes < 0 || count < 0) await this.#run(client, 'addUsage', [account, bytes, count]);
      return;
    }
    const values = [account, bytes, count, this.#quotas.maxObjectBytes, this.#quotas.maxObjects];
    if ((await this.#run(client, 'chargeObjects', values)).length === 1) return;
    // No row yet (the account's first write), or over a quota.
    await this.#run(client, 'ensureUsage', [account]);
    if ((await this.#run(client, 'chargeObjects', values)).length === 1) return;
    const [row] = await this.#run<AccountUsageRecord>(client, 'accountUsage', [account]);
    throw refusalFor(toAccountUsage(row, this.#quotas), bytes, count);
  }

  #reclaimAfter(): number {
    return this.#clock.now() + this.#graceMs;
  }

  #read<Row extends object>(statement: Statement, values: readonly unknown[] = []): Promise<Row[]> {
    return this.#track(this.#db.query<Row>(SQL[statement], values));
  }

  /** One statement, atomic by itself (retried by the database on a serialization failure or deadlock). */
  #write<Row extends object>(statement: Statement, values: readonly unknown[] = []): Promise<Row[]> {
    return this.#track(this.#db.write<Row>(SQL[statement], values));
  }

  /** One statement inside a transaction. */
  #run<Row extends object = Record<string, unknown>>(client: PgClient, statement: Statement, values: readonly unknown[]): Promise<Row[]> {
    return this.#db.run<Row>(client, SQL[statement], values);
  }

  #transaction<T>(work: (client: PgClient) => Promise<T>): Promise<T> {
    return this.#track(this.#db.transaction(work));
  }

  #track<T>(promise: Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('The metadata store is closed.'));
    this.#pending.add(promise);
    const settle = () => this.#pending.delete(promise);
    promise.then(settle, settle);
    return promise;
  }
}

type Statement = keyof typeof SQL;

function utf8(text: string): Buffer {
  return Buffer.from(text, 'utf8');
}

/** $3..$18 of the object writes (see pg-metadata-statements.ts). */
function objectValues(meta: ObjectMeta, data: StoredData): unknown[] {
  const parts = data.kind === 'parts' ? data.parts : [];
  return [
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
    data.kind === 'parts' ? Math.max(parts.length, 1) : 0,
    meta.ssec ? JSON.stringify(meta.ssec) : null,
    data.kind === 'inline' ? Buffer.from(data.bytes.buffer, data.bytes.byteOffset, data.bytes.byteLength) : null,
    parts.map((p) => p.blobId),
    parts.map((p) => p.size),
    parts.map((p) => p.checksum ?? null),
  ];
}

function dataOf(row: PgStoredRecord): StoredData {
  if (row.part_count > 0) return { kind: 'parts', parts: (row.parts ?? []).map(([blobId, size, checksum]) => storedPart(blobId, size, checksum)) };
  if (row.blob_id !== null) return { kind: 'blob', blobId: row.blob_id };
  return { kind: 'inline', bytes: row.inline_data ?? new Uint8Array(0) };
}

/** The upload, when it belongs to this bucket and key (compared as strings, as the SQLite store does). */
function matchingUpload(row: PgUploadRecord, bucket: string, key: string): UploadRow | null {
  const upload = toUpload(row, row.key.toString('utf8'));
  return upload.bucket === bucket && upload.key === key ? upload : null;
}

function toMeta(row: PgObjectRecord): ObjectMeta {
  return toMetaWithKey(row, row.key.toString('utf8'));
}
