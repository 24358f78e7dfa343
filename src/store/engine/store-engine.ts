/**
 * The store engine's contract: typed operations on buckets, objects and multipart uploads, with no
 * HTTP. The bucket binding (src/store/binding) and the S3 API (src/store/s3) are thin faces on it.
 * Every method throws only StoreError for user-facing failures.
 */
import type { AccountUsage } from '../../db/account-usage.ts';
import type { BucketCors, CorsRule } from './cors.ts';
import type { LifecycleExpiry, LifecycleRule } from './lifecycle.ts';
import type {
  BodyInput,
  BucketInfo,
  BucketUsage,
  CompleteOptions,
  Conditional,
  DeleteOutcome,
  GetOptions,
  GetResult,
  HeadOptions,
  ListOptions,
  ListResult,
  MultipartOptions,
  ObjectMeta,
  PartInfo,
  PutOptions,
  StorageClass,
  UploadInfo,
  UploadPartOptions,
  UploadedPart,
} from './types.ts';

/** Which buckets a listing covers (src/store/engine/account-store.ts names them). */
export type BucketFilter = { account: string } | { unowned: true };

export interface StoreEngine {
  /**
   * Where blob files live (`<dir>/<blobId>`) when they are on this machine: lets a server stream a
   * body straight from disk. Undefined for remote blob stores: use readBlob.
   */
  readonly blobDir: string | undefined;
  /** Streams `length` bytes of a blob from `offset` (a body segment's blob, wherever it lives). */
  readBlob(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array>;

  createBucket(name: string, options?: { storageClass?: StorageClass }): Promise<BucketInfo>;
  /** Creates the bucket if it does not exist (dev mode creates buckets on first use). */
  ensureBucket(name: string, options?: { storageClass?: StorageClass }): Promise<BucketInfo>;
  getBucket(name: string): Promise<BucketInfo | null>;
  /** Sets the bucket's default storage class of new objects (objects already stored keep theirs). */
  setBucketStorageClass(name: string, storageClass: StorageClass): Promise<BucketInfo>;
  /** The bucket's object count and sizes, or those of its keys starting with `prefix` (a folder) (bounded: BUCKET_USAGE_MAX_ROWS). */
  bucketUsage(name: string, prefix?: string): Promise<BucketUsage>;
  /** Every bucket, or only one account's (stored names `<account>/<name>`), or only those of no account (bare names). */
  listBuckets(filter?: BucketFilter): Promise<BucketInfo[]>;
  /** Refused with STORE_BUCKET_NOT_EMPTY while objects remain; open multipart uploads are aborted with it. */
  deleteBucket(name: string): Promise<void>;

  /** The bucket's CORS rules, or null when it has none. */
  getBucketCors(bucket: string): Promise<CorsRule[] | null>;
  /** Replaces the bucket's CORS rules (validated first: STORE_INVALID_CORS), or removes them with null. */
  putBucketCors(bucket: string, rules: CorsRule[] | null): Promise<void>;
  /** The bucket's lifecycle rules, or null when it has none. */
  getBucketLifecycle(bucket: string): Promise<LifecycleRule[] | null>;
  /** Replaces the bucket's lifecycle rules (validated first: STORE_INVALID_LIFECYCLE), or removes them with null. */
  putBucketLifecycle(bucket: string, rules: LifecycleRule[] | null): Promise<void>;
  /**
   * When the bucket's lifecycle rules expire an object of `key` uploaded at `uploaded`, and by which
   * rule (S3's `x-amz-expiration`), from a short-lived in-memory cache; undefined when no rule does.
   */
  expirationOf(bucket: string, key: string, uploaded: number): Promise<LifecycleExpiry | undefined>;
  /**
   * The CORS rules of the buckets called `name` this view can see (the whole engine: every
   * account's; an account's view: its own), from a short-lived in-memory cache.
   */
  corsOfBucketsNamed(name: string): Promise<BucketCors[]>;

  /** Metadata only; null when the key does not exist. With an SSE-C key, the key is checked against the object. */
  head(bucket: string, key: string, options?: HeadOptions): Promise<ObjectMeta | null>;
  /** null when the key does not exist; a result without body when `onlyIf` fails. */
  get(bucket: string, key: string, options?: GetOptions): Promise<GetResult | null>;
  /** Stores the body durably, then makes it visible; null (nothing stored) when `onlyIf` fails. */
  put(bucket: string, key: string, body: BodyInput, options?: PutOptions): Promise<ObjectMeta | null>;
  /** Missing keys are ignored. At most 1000 keys. */
  delete(bucket: string, keys: readonly string[]): Promise<void>;
  /**
   * Deletes the key only when its current object passes `onlyIf` (evaluated inside the deletion's
   * transaction): 'precondition-failed' deletes nothing; 'missing' when the key has no object
   * (whether that answers an error is the face's to decide: S3's If-Match on a missing key is NoSuchKey).
   */
  deleteIf(bucket: string, key: string, onlyIf: Conditional): Promise<DeleteOutcome>;
  list(bucket: string, options?: ListOptions): Promise<ListResult>;

  createMultipartUpload(bucket: string, key: string, options?: MultipartOptions): Promise<string>;
  uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: BodyInput, options?: UploadPartOptions): Promise<UploadedPart>;
  /**
   * With `onlyIf`, refused with STORE_PRECONDITION_FAILED (the upload stays active) when the key's
   * current object fails it. With `answerRepeat`, sent again after it succeeded with the same parts,
   * it answers the object it made while that is still the key's current object (for a day at most).
   */
  completeMultipartUpload(bucket: string, key: string, uploadId: string, parts: readonly UploadedPart[], options?: CompleteOptions): Promise<ObjectMeta>;
  abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void>;
  /** Metadata of an in-progress upload, or null. */
  getUpload(bucket: string, key: string, uploadId: string): Promise<(UploadInfo & MultipartOptions) | null>;
  listParts(bucket: string, key: string, uploadId: string): Promise<PartInfo[]>;
  listUploads(bucket: string, options?: { prefix?: string }): Promise<UploadInfo[]>;
  /** Aborts uploads older than 7 days (by the injected clock); returns how many. Forgets uploads finished over a day ago. */
  expireUploads(): Promise<number>;

  /**
   * What an account's buckets hold (null: those of no account) and the account's script bytes,
   * against its quotas: kept exact by every write, which is refused with STORE_QUOTA_EXCEEDED when
   * it would pass one. An account's view reads only its own account.
   */
  accountUsage(accountId: string | null): Promise<AccountUsage>;

  close(): Promise<void>;
}
