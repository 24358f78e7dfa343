/**
 * One account's view of the store. Bucket names are unique per account (two accounts may each have
 * `photos`, as on the real service), so the engine stores an account's bucket under
 * `<account id>/<name>`; this view takes and answers the account's own names, and cannot name a
 * bucket of another account at all: another account's bucket answers exactly like one that does
 * not exist. Every face (S3 API, bindings, the management API's store routes, `store://` log
 * destinations) reaches the store only through such a view.
 *
 * Buckets stored under a bare name belong to no account yet: they were made before buckets had
 * owners, or by `edgeport dev` on a data dir with no account. The view for `null` (no account)
 * sees exactly those, and the first account adopts them at start (MetadataStore.adoptBuckets).
 */
import type { AccountUsage } from '../../db/account-usage.ts';
import type { BucketCors, CorsRule } from './cors.ts';
import type { LifecycleExpiry, LifecycleRule } from './lifecycle.ts';
import { StoreError } from './errors.ts';
import type { StoreEngine } from './store-engine.ts';
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
import { assertBucketName } from './validation.ts';

const ACCOUNT_ID = /^[0-9a-f]{32}$/;

/** The name under which the engine keeps an account's bucket (bare for buckets of no account). */
export function storedBucketName(accountId: string | null, name: string): string {
  return accountId === null ? name : `${accountId}/${name}`;
}

/** A stored bucket name without its account: the name the account knows the bucket by. */
export function ownBucketName(stored: string): string {
  return stored.slice(stored.indexOf('/') + 1);
}

/** The first name after every stored name of the account's buckets: `<id>/` ... `<id>0` is the account's range. */
export function accountBucketRange(accountId: string): { first: string; end: string } {
  return { first: `${accountId}/`, end: `${accountId}0` };
}

/** A StoreEngine on one account's buckets (`null`: the buckets no account owns yet). */
export function accountStore(engine: StoreEngine, accountId: string | null): StoreEngine {
  if (accountId !== null && !ACCOUNT_ID.test(accountId)) throw new Error(`Not an account id: ${JSON.stringify(accountId)}`);
  return new AccountStore(engine, accountId);
}

/** What every operation on a name that is no bucket's answers: a rejected promise, like any store error. */
function noSuchBucket(): Promise<never> {
  return Promise.reject(new StoreError('STORE_NO_SUCH_BUCKET'));
}

class AccountStore implements StoreEngine {
  readonly #engine: StoreEngine;
  readonly #account: string | null;
  readonly #prefixLength: number;

  constructor(engine: StoreEngine, accountId: string | null) {
    this.#engine = engine;
    this.#account = accountId;
    this.#prefixLength = accountId === null ? 0 : accountId.length + 1;
  }

  get blobDir(): string | undefined {
    return this.#engine.blobDir;
  }

  readBlob(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array> {
    return this.#engine.readBlob(blobId, offset, length);
  }

  async createBucket(name: string, options?: { storageClass?: StorageClass }): Promise<BucketInfo> {
    assertBucketName(name);
    return this.#own(await this.#engine.createBucket(storedBucketName(this.#account, name), options));
  }

  async ensureBucket(name: string, options?: { storageClass?: StorageClass }): Promise<BucketInfo> {
    assertBucketName(name);
    return this.#own(await this.#engine.ensureBucket(storedBucketName(this.#account, name), options));
  }

  async getBucket(name: string): Promise<BucketInfo | null> {
    const stored = this.#stored(name);
    const bucket = stored === null ? null : await this.#engine.getBucket(stored);
    return bucket && this.#own(bucket);
  }

  async listBuckets(): Promise<BucketInfo[]> {
    const all = await this.#engine.listBuckets(this.#account === null ? { unowned: true } : { account: this.#account });
    return all.map((bucket) => this.#own(bucket));
  }

  async setBucketStorageClass(name: string, storageClass: StorageClass): Promise<BucketInfo> {
    const stored = this.#stored(name);
    return stored === null ? noSuchBucket() : this.#own(await this.#engine.setBucketStorageClass(stored, storageClass));
  }

  bucketUsage(name: string, prefix?: string): Promise<BucketUsage> {
    const stored = this.#stored(name);
    return stored === null ? noSuchBucket() : this.#engine.bucketUsage(stored, prefix);
  }

  deleteBucket(name: string): Promise<void> {
    const stored = this.#stored(name);
    return stored === null ? noSuchBucket() : this.#engine.deleteBucket(stored);
  }

  getBucketCors(bucket: string): Promise<CorsRule[] | null> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.getBucketCors(stored);
  }

  putBucketCors(bucket: string, rules: CorsRule[] | null): Promise<void> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.putBucketCors(stored, rules);
  }

  getBucketLifecycle(bucket: string): Promise<LifecycleRule[] | null> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.getBucketLifecycle(stored);
  }

  putBucketLifecycle(bucket: string, rules: LifecycleRule[] | null): Promise<void> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.putBucketLifecycle(stored, rules);
  }

  expirationOf(bucket: string, key: string, uploaded: number): Promise<LifecycleExpiry | undefined> {
    const stored = this.#stored(bucket);
    return stored === null ? Promise.resolve(undefined) : this.#engine.expirationOf(stored, key, uploaded);
  }

  async corsOfBucketsNamed(name: string): Promise<BucketCors[]> {
    const stored = this.#stored(name);
    if (stored === null) return [];
    return (await this.#engine.corsOfBucketsNamed(name)).filter((entry) => entry.bucket === stored).map((entry) => ({ ...entry, bucket: name }));
  }

  head(bucket: string, key: string, options?: HeadOptions): Promise<ObjectMeta | null> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.head(stored, key, options);
  }

  get(bucket: string, key: string, options?: GetOptions): Promise<GetResult | null> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.get(stored, key, options);
  }

  put(bucket: string, key: string, body: BodyInput, options?: PutOptions): Promise<ObjectMeta | null> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.put(stored, key, body, options);
  }

  delete(bucket: string, keys: readonly string[]): Promise<void> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.delete(stored, keys);
  }

  deleteIf(bucket: string, key: string, onlyIf: Conditional): Promise<DeleteOutcome> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.deleteIf(stored, key, onlyIf);
  }

  list(bucket: string, options?: ListOptions): Promise<ListResult> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.list(stored, options);
  }

  createMultipartUpload(bucket: string, key: string, options?: MultipartOptions): Promise<string> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.createMultipartUpload(stored, key, options);
  }

  uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: BodyInput, options?: UploadPartOptions): Promise<UploadedPart> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.uploadPart(stored, key, uploadId, partNumber, body, options);
  }

  completeMultipartUpload(bucket: string, key: string, uploadId: string, parts: readonly UploadedPart[], options?: CompleteOptions): Promise<ObjectMeta> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.completeMultipartUpload(stored, key, uploadId, parts, options);
  }

  abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.abortMultipartUpload(stored, key, uploadId);
  }

  getUpload(bucket: string, key: string, uploadId: string): Promise<(UploadInfo & MultipartOptions) | null> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.getUpload(stored, key, uploadId);
  }

  listParts(bucket: string, key: string, uploadId: string): Promise<PartInfo[]> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.listParts(stored, key, uploadId);
  }

  listUploads(bucket: string, options?: { prefix?: string }): Promise<UploadInfo[]> {
    const stored = this.#stored(bucket);
    return stored === null ? noSuchBucket() : this.#engine.listUploads(stored, options);
  }

  accountUsage(accountId: string | null): Promise<AccountUsage> {
    if (accountId !== this.#account) return Promise.reject(new Error("An account's view of the store reads only its own account's usage."));
    return this.#engine.accountUsage(accountId);
  }

  /** Maintenance is the server's, not an account's. */
  async expireUploads(): Promise<number> {
    return 0;
  }

  /** The view owns nothing: the engine is closed by whoever opened it. */
  async close(): Promise<void> {}

  /**
   * The stored name of one of the account's buckets, or null: a name holding `/` is no bucket's
   * name, and must never reach the engine (under the view of no account it would name another
   * account's bucket).
   */
  #stored(name: string): string | null {
    return name.includes('/') ? null : storedBucketName(this.#account, name);
  }

  #own(bucket: BucketInfo): BucketInfo {
    return { ...bucket, name: bucket.name.slice(this.#prefixLength) };
  }
}
