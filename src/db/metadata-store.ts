/**
 * MetadataStore: the one asynchronous interface to the relational metadata of the object store.
 * SQLite implements it now (src/db/sqlite); PostgreSQL implements the same methods later, so
 * callers never see SQL. Every write method is atomic; preconditions run inside the transaction.
 */
import type { BucketFilter } from '../store/engine/store-engine.ts';
import type { CorsRule } from '../store/engine/cors.ts';
import type { LifecycleRule } from '../store/engine/lifecycle.ts';
import type { AccountQuotaOverrides, AccountUsage } from './account-usage.ts';
import type {
  BucketUsage,
  DeleteOutcome,
  BucketInfo,
  Checksums,
  ChecksumType,
  SseCInfo,
  UploadChecksumAlgorithm,
  HttpMetadata,
  ObjectMeta,
  StorageClass,
} from '../store/engine/types.ts';

/** Where the bytes of a stored object live. */
export type StoredData = { kind: 'inline'; bytes: Uint8Array } | { kind: 'blob'; blobId: string } | { kind: 'parts'; parts: StoredPart[] };

/** One part of a multipart object: its blob, size and, when its upload kept them, its checksum (lowercase hex). */
export interface StoredPart {
  blobId: string;
  size: number;
  checksum?: string;
}

export interface StoredObject {
  meta: ObjectMeta;
  data: StoredData;
}

export interface UploadRow {
  uploadId: string;
  bucket: string;
  key: string;
  created: number;
  httpMetadata: HttpMetadata;
  customMetadata: Record<string, string>;
  storageClass: StorageClass;
  state: 'active' | 'completed' | 'aborted';
  /** The checksum algorithm every part is kept with, or null. */
  checksumAlgorithm: UploadChecksumAlgorithm | null;
  /** How the object's checksum is made of the parts' (absent: COMPOSITE). */
  checksumType?: ChecksumType;
  /** What the completion made, on a completed upload (until finished uploads are forgotten). */
  completion?: UploadCompletion;
  /** Present when the upload (its parts, then its object) is encrypted with a customer's key (SSE-C). */
  ssec?: SseCInfo;
}

/** A completed upload's record, so the same completion sent again can be answered the same. */
export interface UploadCompletion {
  /** The version of the object it made. */
  version: string;
  /** The parts it named, in order: [part number, etag]. */
  parts: Array<[number, string]>;
  /** Epoch ms. */
  at: number;
}

export interface PartRow {
  partNumber: number;
  etag: string;
  size: number;
  blobId: string;
  uploaded: number;
  /** The part's checksum in its upload's algorithm (lowercase hex), when the upload has one. */
  checksum?: string;
}

/** What a completion writes, decided by the caller from the upload's current parts. */
export interface CompletionPlan {
  meta: ObjectMeta;
  /** The parts that make up the object, in order. */
  parts: PartRow[];
}

export interface ListQuery {
  /** Only keys strictly greater than this. */
  after?: string;
  prefix?: string;
  limit: number;
  withHttpMetadata: boolean;
  withCustomMetadata: boolean;
}

/** A listed row: metadata kinds not asked for are undefined. */
export type ListedRow = Omit<ObjectMeta, 'httpMetadata' | 'customMetadata'> & {
  httpMetadata: HttpMetadata | undefined;
  customMetadata: Record<string, string> | undefined;
};

export type Precondition = (current: ObjectMeta | null) => boolean;

/** What putObject did: `no-bucket` when the bucket was deleted while the body was being taken in. */
export type PutOutcome = 'written' | 'precondition-failed' | 'no-bucket';

export interface PutObjectOptions {
  /** Checked against the current object inside the write; false writes nothing ('precondition-failed'). */
  precondition?: Precondition;
  /**
   * The put named no storage class: the object takes its bucket's, as the bucket is at the commit
   * (written into `meta.storageClass`), not as an earlier lookup saw it.
   */
  classOfBucket?: boolean;
}

/**
 * What an S3 access key may do, as the real store's token permissions: `admin_*` reach every
 * bucket of the account and may create and delete buckets; `object_*` reach objects only, in every
 * bucket of the account or in those the key lists.
 */
export const ACCESS_KEY_PERMISSIONS = ['admin_read_write', 'admin_read_only', 'object_read_write', 'object_read_only'] as const;
export type AccessKeyPermission = (typeof ACCESS_KEY_PERMISSIONS)[number];

export interface AccessKeyRow {
  accessKeyId: string;
  /** The secret access key (sealed in the database: src/db/secrets). */
  secret: string;
  /** The account whose buckets the key reaches; null for a key made before keys had owners (the first account adopts it at start). */
  accountId: string | null;
  permission: AccessKeyPermission;
  /** The account's buckets the key is limited to (object permissions only), or null for all of them. */
  buckets: string[] | null;
  created: number;
  revoked: number | null;
}

/** A key as listed: everything but its secret, which only accessKey() opens. */
export type ListedAccessKeyRow = Omit<AccessKeyRow, 'secret'>;

export interface MetadataStore {
  insertBucket(bucket: BucketInfo): Promise<boolean>;
  getBucket(name: string): Promise<BucketInfo | null>;
  /** Sets the bucket's default storage class of new objects; null when there is no such bucket. */
  setBucketStorageClass(name: string, storageClass: StorageClass): Promise<BucketInfo | null>;
  /** The bucket's object count and sizes (of keys starting with `prefix`, when given), reading at most `maxRows` object rows and as many upload rows (null: no such bucket). */
  bucketUsage(name: string, maxRows: number, prefix?: string): Promise<BucketUsage | null>;
  /** In name order: every bucket, one account's (stored as `<account>/<name>`), or those of no account (bare names). */
  listBuckets(filter?: BucketFilter): Promise<BucketInfo[]>;
  /**
   * Deletes the bucket unless it holds objects ('not-empty'). Its uploads go with it: open ones are
   * aborted (their parts' blobs queued for reclamation) and every upload row of the bucket is removed.
   */
  deleteBucket(name: string): Promise<'deleted' | 'not-empty' | 'missing'>;
  /**
   * Gives the account every bucket of no account (stored under a bare name), with its objects and
   * uploads, unless the account already has a bucket of that name (that one is left as it was and
   * reported). Each bucket moves in one transaction. Returns the names moved and those left.
   */
  adoptBuckets(accountId: string): Promise<{ adopted: string[]; conflicts: string[] }>;

  /** The bucket's CORS rules, or null when it has none (or does not exist). */
  getBucketCors(bucket: string): Promise<CorsRule[] | null>;
  /** Sets (or, with null, removes) the bucket's CORS rules; false (nothing written) when the bucket does not exist. */
  putBucketCors(bucket: string, rules: CorsRule[] | null): Promise<boolean>;
  /** The CORS rules of every bucket called `name` in any account (stored names `<account>/<name>`, or the bare name), by stored name. */
  corsByName(name: string): Promise<Array<{ bucket: string; rules: CorsRule[] }>>;

  /** The bucket's lifecycle rules, or null when it has none (or does not exist). */
  getBucketLifecycle(bucket: string): Promise<LifecycleRule[] | null>;
  /** Sets (or, with null, removes) the bucket's lifecycle rules; false (nothing written) when the bucket does not exist. */
  putBucketLifecycle(bucket: string, rules: LifecycleRule[] | null): Promise<boolean>;
  /** Up to `limit` buckets that have lifecycle rules, in name order after `after`, with their rules. */
  lifecycleBuckets(after: string, limit: number): Promise<Array<{ bucket: string; rules: LifecycleRule[] }>>;
  /** Sets the storage class of the key's object while it is still `version` (a lifecycle transition); false when it is not. */
  setObjectStorageClass(bucket: string, key: string, version: string, storageClass: StorageClass): Promise<boolean>;
  /**
   * Takes (or keeps) the lease on a background job shared by every instance, until `until` (epoch
   * ms): granted when nobody holds it, its holder's lease ran out by `now`, or `holder` holds it.
   * Answers the job's saved progress, or null when another instance holds it.
   */
  takeLease(name: string, holder: string, now: number, until: number): Promise<string | null>;
  /** Saves the job's progress and extends the lease, if `holder` still holds it; false when it was lost. */
  keepLease(name: string, holder: string, until: number, state: string): Promise<boolean>;

  headObject(bucket: string, key: string): Promise<ObjectMeta | null>;
  getObject(bucket: string, key: string): Promise<StoredObject | null>;
  /**
   * Writes the object unless the bucket no longer exists or `precondition` rejects the current one
   * (then writes nothing). The bucket's existence is checked in the same transaction as the write,
   * and a concurrent deleteBucket is serialized against it: either the delete sees the object (not
   * empty) or the put sees no bucket. The replaced object's blobs are queued for reclamation.
   */
  putObject(bucket: string, meta: ObjectMeta, data: StoredData, options?: PutObjectOptions): Promise<PutOutcome>;
  deleteObjects(bucket: string, keys: readonly string[]): Promise<void>;
  /**
   * Deletes one key if `precondition` accepts its current object, checked inside the deletion's
   * transaction (so a write racing it either comes first and is judged, or comes after). The
   * object's space is given back to its account in the same transaction. 'missing': the key has
   * no object (the precondition is not asked).
   */
  deleteObject(bucket: string, key: string, precondition: (current: ObjectMeta) => boolean): Promise<DeleteOutcome>;
  listObjects(bucket: string, query: ListQuery): Promise<ListedRow[]>;

  /** Records a new upload; false (nothing written) when its bucket no longer exists, as for putObject. */
  insertUpload(upload: UploadRow): Promise<boolean>;
  getUpload(bucket: string, key: string, uploadId: string): Promise<UploadRow | null>;
  /** Records a part (replacing one with the same number); false when the upload is not active. */
  putPart(uploadId: string, part: PartRow): Promise<boolean>;
  listParts(uploadId: string): Promise<PartRow[]>;
  listUploads(bucket: string, prefix: string): Promise<UploadRow[]>;
  /**
   * Completes an active upload atomically: `plan` sees the upload and its parts and returns the
   * object to write (or throws to refuse). Unused parts and any replaced object are reclaimed; the
   * upload keeps the version written and the parts used (UploadRow.completion).
   * When `precondition` rejects the key's current object, nothing changes (the upload stays
   * active) and the result is null.
   */
  completeUpload(
    bucket: string,
    key: string,
    uploadId: string,
    plan: (upload: UploadRow | null, parts: PartRow[]) => CompletionPlan,
    precondition?: Precondition,
  ): Promise<ObjectMeta | null>;
  /** Aborts the upload; returns its previous state, or null when it never existed. */
  abortUpload(bucket: string, key: string, uploadId: string): Promise<UploadRow['state'] | null>;
  /** Aborts every active upload created before `createdBefore`; returns how many. */
  expireUploads(createdBefore: number): Promise<number>;
  /**
   * Forgets up to `limit` finished uploads (completed or aborted) that finished before
   * `finishedBefore`, or before finish times were kept; returns how many.
   */
  forgetFinishedUploads(finishedBefore: number, limit: number): Promise<number>;

  /** Blob ids whose grace period has ended; call confirmReclaimed once their files are gone. */
  reclaimableBlobs(now: number, limit: number): Promise<string[]>;
  confirmReclaimed(blobIds: readonly string[]): Promise<void>;
  /** Queues blobs for reclamation (e.g. a blob written for a put whose precondition then failed). */
  queueReclaim(blobIds: readonly string[]): Promise<void>;
  /** Every blob id some row still references (for the startup sweep of orphaned files). */
  referencedBlobIds(): Promise<Set<string>>;
  /** Forgets every pending reclamation (the startup sweep deletes those files itself). */
  clearReclaimQueue(): Promise<void>;

  /** Creates or, for an existing id, replaces (and un-revokes) an S3 access key; its secret is stored sealed. */
  putAccessKey(key: AccessKeyRow): Promise<void>;
  /** A usable (not revoked) key with its secret opened, or undefined. */
  accessKey(accessKeyId: string): Promise<AccessKeyRow | undefined>;
  /** One account's keys, revoked ones included, oldest first; without an account, every key. */
  listAccessKeys(accountId?: string): Promise<ListedAccessKeyRow[]>;
  /** false when the account has no such key. */
  revokeAccessKey(accountId: string, accessKeyId: string, at: number): Promise<boolean>;
  /** Gives the account every key of no account; returns how many. */
  adoptAccessKeys(accountId: string): Promise<number>;

  /**
   * What the account (`''`: the buckets of no account) stores now and the quotas that apply. Every
   * write above keeps it exact in its own transaction: putObject, putPart and completeUpload throw a
   * QuotaRefusal (src/db/account-usage.ts), writing nothing, when they would take the account past
   * its object bytes or count (open uploads' parts count as bytes).
   */
  accountUsage(accountId: string): Promise<AccountUsage>;
  /** Sets (a number; 0: no limit) or clears (null: the server's again) the account's own quotas; answers the result. */
  setAccountQuotas(accountId: string, overrides: AccountQuotaOverrides): Promise<AccountUsage>;
  /** Forgets the account's usage row (its own quotas with it) once it stores nothing: for a deleted account. */
  forgetAccountUsage(accountId: string): Promise<void>;

  close(): Promise<void>;
}

export type { Checksums };
