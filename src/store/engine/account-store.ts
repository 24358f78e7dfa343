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
import { StoreError } from './errors.ts';
import type { StoreEngine } from './store-engine.ts';
import type {
  BodyInput, BucketInfo, Conditional, GetOptions, GetResult, ListOptions, ListResult, MultipartOptions, ObjectMeta, PartInfo, PutOptions, StorageClass,
  UploadInfo, UploadPartOptions, UploadedPart,
} from './types.ts';
import { assertBucketName } from './validation.ts';

const ACCOUNT_ID = /^[0-9a-f]{32}$/;

/** The name under which the engine keeps an account's bucket (bare for buckets of no account). */
export function storedBucketName(accountId: string | null, name: string): string {
  return accountId === null ? name : `${accountId}/${name}`;
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
    return this.#own(await this.#engine.createBucket(this.#stored(name), options));
  }

  async ensureBucket(name: string, options?: { storageClass?: StorageClass }): Promise<BucketInfo> {
    assertBucketName(name);
    return this.#own(await this.#engine.ensureBucket(this.#stored(name), options));
  }

  async getBucket(name: string): Promise<BucketInfo | null> {
    if (name.includes('/')) return null;
    const bucket = await this.#engine.getBucket(this.#stored(name));
    return bucket && this.#own(bucket);
  }

  async listBuckets(): Promise<BucketInfo[]> {
    const all = await this.#engine.listBuckets(this.#account === null ? { unowned: true } : { account: this.#account });
    return all.map((bucket) => this.#own(bucket));
  }

  async deleteBucket(name: string): Promise<void> {
    return this.#engine.deleteBucket(this.#stored(name));
  }

  async head(bucket: string, key: string): Promise<ObjectMeta | null> {
    return this.#engine.head(this.#stored(bucket), key);
  }

  async get(bucket: string, key: string, options?: GetOptions): Promise<GetResult | null> {
    return this.#engine.get(this.#stored(bucket), key, options);
  }

  async put(bucket: string, key: string, body: BodyInput, options?: PutOptions): Promise<ObjectMeta | null> {
    return this.#engine.put(this.#stored(bucket), key, body, options);
  }

  async delete(bucket: string, keys: readonly string[]): Promise<void> {
    return this.#engine.delete(this.#stored(bucket), keys);
  }

  async list(bucket: string, options?: ListOptions): Promise<ListResult> {
    return this.#engine.list(this.#stored(bucket), options);
  }

  async createMultipartUpload(bucket: string, key: string, options?: MultipartOptions): Promise<string> {
    return this.#engine.createMultipartUpload(this.#stored(bucket), key, options);
  }

  async uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: BodyInput, options?: UploadPartOptions): Promise<UploadedPart> {
    return this.#engine.uploadPart(this.#stored(bucket), key, uploadId, partNumber, body, options);
  }

  async completeMultipartUpload(bucket: string, key: string, uploadId: string, parts: readonly UploadedPart[], options?: { onlyIf?: Conditional }): Promise<ObjectMeta> {
    return this.#engine.completeMultipartUpload(this.#stored(bucket), key, uploadId, parts, options);
  }

  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    return this.#engine.abortMultipartUpload(this.#stored(bucket), key, uploadId);
  }

  async getUpload(bucket: string, key: string, uploadId: string): Promise<(UploadInfo & MultipartOptions) | null> {
    return this.#engine.getUpload(this.#stored(bucket), key, uploadId);
  }

  async listParts(bucket: string, key: string, uploadId: string): Promise<PartInfo[]> {
    return this.#engine.listParts(this.#stored(bucket), key, uploadId);
  }

  async listUploads(bucket: string, options?: { prefix?: string }): Promise<UploadInfo[]> {
    return this.#engine.listUploads(this.#stored(bucket), options);
  }

  /** Maintenance is the server's, not an account's. */
  async expireUploads(): Promise<number> {
    return 0;
  }

  /** The view owns nothing: the engine is closed by whoever opened it. */
  async close(): Promise<void> {}

  /**
   * The stored name of one of the account's buckets. A name holding `/` is no bucket's name, and
   * must never reach the engine: under the view of no account it would name another account's bucket.
   * (Every method is async, so this refusal rejects the call's promise like any other store error.)
   */
  #stored(name: string): string {
    if (name.includes('/')) throw new StoreError('STORE_NO_SUCH_BUCKET');
    return storedBucketName(this.#account, name);
  }

  #own(bucket: BucketInfo): BucketInfo {
    return { ...bucket, name: bucket.name.slice(this.#prefixLength) };
  }
}
