/**
 * ObjectEngine: the store engine on a MetadataStore and a BlobStore. A write makes its bytes
 * durable first (inline in the metadata row, or a fsynced blob file), then commits the metadata row
 * that makes it visible; a conditional write re-checks its condition inside that commit, so of two
 * racing writes with the same condition exactly one wins.
 */
import type { Clock } from '../../core/clock.ts';
import { randomBase64UrlId, randomHexId } from '../../core/ids.ts';
import type { Logger } from '../../core/log.ts';
import { accountOfBucket, type AccountUsage } from '../../db/account-usage.ts';
import type { MetadataStore, PartRow, PutOutcome, StoredData } from '../../db/metadata-store.ts';
import { probeBlobStore } from '../blobs/blob-probe.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { ownBucketName } from './account-store.ts';
import { evaluateConditional } from './conditions.ts';
import { assertCorsRules, CorsCache, type BucketCors, type CorsRule } from './cors.ts';
import { StoreError, STORE_LIMITS } from './errors.ts';
import { assertLifecycleRules, expiryOf, type LifecycleExpiry, type LifecycleRule } from './lifecycle.ts';
import { ReadThroughCache } from './read-through-cache.ts';
import { ingestBody, type Ingested } from './ingest.ts';
import { listObjects } from './list.ts';
import { checkCompletionChecksum, normaliseEtag, opaquePartEtag, planCompletion } from './multipart.ts';
import { createObjectBody, partRange, segmentsFor } from './object-body.ts';
import { earlyRefusal, EARLY_QUOTA_CHECK_BYTES, quotaError } from './quota.ts';
import { resolveRange } from './ranges.ts';
import { newSseC, openSseC, publicSseC, sealBody, sealedEtag, sealedLength, sealedSegments, type SealedDigests } from './sse-c.ts';
import type { BucketFilter, StoreEngine } from './store-engine.ts';
import type {
  BodyInput,
  BucketInfo,
  BucketUsage,
  Checksums,
  CompleteOptions,
  Conditional,
  DeleteOutcome,
  GetOptions,
  GetResult,
  HeadOptions,
  SseCInfo,
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
import { BUCKET_USAGE_MAX_ROWS } from './types.ts';
import { assertStoredBucketName, assertCustomMetadata, assertKey, checkStorageClass } from './validation.ts';

export interface ObjectEngineOptions {
  meta: MetadataStore;
  blobs: BlobStore;
  clock: Clock;
  logger: Logger;
  /** Bodies up to this many bytes are stored inside the metadata row. */
  inlineMaxBytes?: number;
}

/** How long a put trusts a bucket an earlier put found (#writeBuckets), and how many it remembers. */
const WRITE_BUCKET_MEMORY_MS = 1000;
const WRITE_BUCKET_MEMORY_SIZE = 1000;

const ALGORITHM_NAMES = { md5: 'MD5', sha1: 'SHA-1', sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' } as const;
/** node:crypto's names of the binding's checksum algorithms. */
const NODE_HASH_NAMES = { md5: 'md5', sha1: 'sha1', sha256: 'sha256', sha384: 'sha384', sha512: 'sha512' } as const;

/** What an SSE-C put hashes of its plaintext: MD5 (for its etag) and the algorithm of the checksum the caller states. */
function sealedAlgorithms(expected: PutOptions['expectedChecksum']): string[] {
  return expected && expected.algorithm !== 'md5' ? ['md5', NODE_HASH_NAMES[expected.algorithm]] : ['md5'];
}

/**
 * The data key for reading or writing something stored with `record` (an object's or an upload's
 * SSE-C record) given `key`: undefined when neither is there; STORE_SSEC_KEY_REQUIRED without the
 * key, STORE_SSEC_KEY_MISMATCH with the wrong one, STORE_SSEC_NOT_ENCRYPTED with a key for
 * something stored without one.
 */
function sseCDataKey(record: SseCInfo | undefined, key: string | undefined, what: 'object' | 'upload' = 'object'): Buffer | undefined {
  if (record === undefined) {
    if (key === undefined) return undefined;
    throw new StoreError(
      'STORE_SSEC_NOT_ENCRYPTED',
      what === 'upload'
        ? { message: 'The encryption parameters are not applicable to this upload: it was not created with a customer-provided key (SSE-C).' }
        : undefined,
    );
  }
  if (key === undefined) {
    throw new StoreError(
      'STORE_SSEC_KEY_REQUIRED',
      what === 'upload'
        ? {
            message: 'The multipart upload was created using a form of Server Side Encryption (SSE-C). The correct parameters must be provided with each part.',
          }
        : undefined,
    );
  }
  return openSseC(record, key, what);
}

/** An object's metadata as the faces get it: of an SSE-C record, only the key's MD5. */
function publicMeta(meta: ObjectMeta): ObjectMeta {
  return meta.ssec ? { ...meta, ssec: publicSseC(meta.ssec) } : meta;
}

export class ObjectEngine implements StoreEngine {
  readonly #meta: MetadataStore;
  readonly #blobs: BlobStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #inlineMax: number;
  readonly #cors: CorsCache;
  /** Lifecycle rules by stored bucket name, for the expiry an object's answers carry. */
  readonly #lifecycle: ReadThroughCache<LifecycleRule[] | null>;
  /**
   * Buckets found during this turn of the event loop, forgotten at its end (and at once when this
   * engine deletes one; a missing bucket is never remembered). Requests that arrive together (one
   * socket read each) share one lookup: each lookup outside a transaction is a SQLite read
   * transaction of its own, whose locks cost more than the query (a PUT's largest single cost).
   * Every write still checks its bucket again inside its own transaction.
   */
  readonly #turnBuckets = new Map<string, BucketInfo>();
  #forgetScheduled = false;
  /**
   * Buckets a put found, trusted by later puts for WRITE_BUCKET_MEMORY_MS (forgotten at once when
   * this engine deletes one). Safe for writes only: a put checks its bucket again inside its
   * commit, so a bucket deleted meanwhile (by another instance) still refuses the write with
   * NoSuchBucket, after its body was read. Reads answer from the database or this turn's lookups.
   */
  readonly #writeBuckets = new Map<string, { info: BucketInfo; until: number }>();

  constructor(options: ObjectEngineOptions) {
    this.#meta = options.meta;
    this.#blobs = options.blobs;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#inlineMax = options.inlineMaxBytes ?? 64 * 1024;
    this.#cors = new CorsCache({ load: (name) => this.#meta.corsByName(name), now: () => this.#clock.now() });
    this.#lifecycle = new ReadThroughCache({ load: (bucket) => this.#meta.getBucketLifecycle(bucket), now: () => this.#clock.now() });
  }

  /** The metadata store, for services that keep their own rows beside the store's (S3 access keys). */
  get metadata(): MetadataStore {
    return this.#meta;
  }

  /** Resolves when the blob store takes a small write and its delete, else throws saying why (the API's /readyz). */
  async checkBlobStore(): Promise<void> {
    await probeBlobStore(this.#blobs);
  }

  get blobDir(): string | undefined {
    return this.#blobs.dir;
  }

  readBlob(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array> {
    return this.#blobs.read(blobId, offset, length);
  }

  async createBucket(name: string, options: { storageClass?: StorageClass } = {}): Promise<BucketInfo> {
    assertStoredBucketName(name);
    const bucket: BucketInfo = { name, created: this.#clock.now(), storageClass: checkStorageClass(options.storageClass, 'Standard') };
    if (!(await this.#meta.insertBucket(bucket))) throw new StoreError('STORE_BUCKET_ALREADY_EXISTS');
    return bucket;
  }

  async ensureBucket(name: string, options: { storageClass?: StorageClass } = {}): Promise<BucketInfo> {
    const existing = await this.#meta.getBucket(name);
    if (existing) return existing;
    assertStoredBucketName(name);
    const bucket: BucketInfo = { name, created: this.#clock.now(), storageClass: checkStorageClass(options.storageClass, 'Standard') };
    await this.#meta.insertBucket(bucket);
    return (await this.#meta.getBucket(name)) ?? bucket;
  }

  getBucket(name: string): Promise<BucketInfo | null> {
    return this.#meta.getBucket(name);
  }

  async setBucketStorageClass(name: string, storageClass: StorageClass): Promise<BucketInfo> {
    const bucket = await this.#meta.setBucketStorageClass(name, checkStorageClass(storageClass, 'Standard'));
    if (!bucket) throw new StoreError('STORE_NO_SUCH_BUCKET');
    return bucket;
  }

  async bucketUsage(name: string, prefix = ''): Promise<BucketUsage> {
    const usage = await this.#meta.bucketUsage(name, BUCKET_USAGE_MAX_ROWS, prefix);
    if (!usage) throw new StoreError('STORE_NO_SUCH_BUCKET');
    return usage;
  }

  listBuckets(filter?: BucketFilter): Promise<BucketInfo[]> {
    return this.#meta.listBuckets(filter);
  }

  async deleteBucket(name: string): Promise<void> {
    this.#forgetBucket(name);
    const outcome = await this.#meta.deleteBucket(name).finally(() => this.#forgetBucket(name));
    if (outcome === 'missing') throw new StoreError('STORE_NO_SUCH_BUCKET');
    if (outcome === 'not-empty') throw new StoreError('STORE_BUCKET_NOT_EMPTY');
    this.#cors.invalidate(ownBucketName(name));
    this.#lifecycle.invalidate(name);
  }

  async getBucketCors(bucket: string): Promise<CorsRule[] | null> {
    const rules = await this.#meta.getBucketCors(bucket);
    if (rules === null) await this.#bucket(bucket);
    return rules;
  }

  async putBucketCors(bucket: string, rules: CorsRule[] | null): Promise<void> {
    if (rules !== null) assertCorsRules(rules);
    const written = await this.#meta.putBucketCors(bucket, rules);
    this.#cors.invalidate(ownBucketName(bucket));
    if (!written) throw new StoreError('STORE_NO_SUCH_BUCKET');
  }

  async getBucketLifecycle(bucket: string): Promise<LifecycleRule[] | null> {
    const rules = await this.#meta.getBucketLifecycle(bucket);
    if (rules === null) await this.#bucket(bucket);
    return rules;
  }

  async putBucketLifecycle(bucket: string, rules: LifecycleRule[] | null): Promise<void> {
    if (rules !== null) assertLifecycleRules(rules);
    const written = await this.#meta.putBucketLifecycle(bucket, rules && rules.length > 0 ? rules : null);
    this.#lifecycle.invalidate(bucket);
    if (!written) throw new StoreError('STORE_NO_SUCH_BUCKET');
  }

  async expirationOf(bucket: string, key: string, uploaded: number): Promise<LifecycleExpiry | undefined> {
    const rules = await this.#lifecycle.get(bucket);
    return rules === null ? undefined : expiryOf(rules, key, uploaded);
  }

  corsOfBucketsNamed(name: string): Promise<BucketCors[]> {
    return this.#cors.get(name);
  }

  async head(bucket: string, key: string, options: HeadOptions = {}): Promise<ObjectMeta | null> {
    assertKey(key);
    const meta = await this.#meta.headObject(bucket, key);
    if (!meta) {
      await this.#bucket(bucket);
      return null;
    }
    if (options.ssecKey !== undefined) sseCDataKey(meta.ssec, options.ssecKey);
    return publicMeta(meta);
  }

  async get(bucket: string, key: string, options: GetOptions = {}): Promise<GetResult | null> {
    assertKey(key);
    const stored = await this.#meta.getObject(bucket, key);
    if (!stored) {
      await this.#bucket(bucket);
      return null;
    }
    const { data } = stored;
    // An SSE-C object answers nothing, not even a failed condition, without its key.
    const dataKey = sseCDataKey(stored.meta.ssec, options.ssecKey);
    const meta = publicMeta(stored.meta);
    if (!evaluateConditional(options.onlyIf, meta)) return { meta, range: { offset: 0, length: meta.size } };
    const range = options.part !== undefined ? partRange(data, options.part, meta.size) : resolveRange(options.range, meta.size);
    const segments = dataKey ? sealedSegments(this.#blobs, data, range, meta.size, dataKey) : segmentsFor(data, range);
    const body = createObjectBody(this.#blobs, segments, range.length);
    if (data.kind !== 'parts') return { meta, range, body };
    const parts = data.parts.map((p) => (p.checksum ? { size: p.size, checksum: p.checksum } : { size: p.size }));
    return { meta, range, body, partsCount: data.parts.length, parts };
  }

  async put(bucket: string, key: string, body: BodyInput, options: PutOptions = {}): Promise<ObjectMeta | null> {
    assertKey(key);
    assertCustomMetadata(options.customMetadata);
    const info = await this.#writeBucket(bucket);
    const storageClass = checkStorageClass(options.storageClass, info.storageClass);
    const condition = options.onlyIf;
    // Checked before the body is read, so a failing condition costs no upload; checked again at commit.
    if (condition && !evaluateConditional(condition, await this.#meta.headObject(bucket, key))) return null;
    await this.#checkRoom(bucket, body, key);

    // SSE-C: the body is encrypted as it streams in; its plaintext is hashed on the way, for the
    // checksum the caller states and the etag (sse-c.ts's sealedEtag: nothing of the content shows).
    const sseC = options.ssecKey === undefined ? undefined : newSseC(options.ssecKey);
    const sealed = sseC ? sealBody(body, sseC.dataKey, sealedAlgorithms(options.expectedChecksum)) : undefined;
    const ingested = await ingestBody(sealed ? sealed.body : body, {
      blobs: this.#blobs,
      inlineMax: this.#inlineMax,
      maxSize: sealed ? sealedLength(STORE_LIMITS.maxPutBytes) : STORE_LIMITS.maxPutBytes,
      ...(options.expectedChecksum && !sealed ? { extraAlgorithm: options.expectedChecksum.algorithm } : {}),
    });
    let meta: ObjectMeta;
    let outcome: PutOutcome;
    try {
      const plain = sealed?.digests();
      const checksums = plain
        ? { ...options.verifiedChecksums?.(), ...this.#verifyPlainChecksum(plain, options.expectedChecksum) }
        : { ...options.verifiedChecksums?.(), ...this.#verifyChecksum(ingested, options.expectedChecksum) };
      meta = {
        key,
        version: randomHexId(),
        size: plain ? plain.size : ingested.size,
        etag: plain && sseC ? sealedEtag(sseC.dataKey, plain.hex.md5!) : ingested.md5,
        uploaded: this.#clock.now(),
        httpMetadata: options.httpMetadata ?? {},
        customMetadata: options.customMetadata ?? {},
        checksums,
        storageClass,
        ...(sseC ? { ssec: sseC.record } : {}),
      };
      const data: StoredData =
        ingested.blobId !== undefined ? { kind: 'blob', blobId: ingested.blobId } : { kind: 'inline', bytes: ingested.inline ?? new Uint8Array(0) };
      outcome = await this.#meta.putObject(bucket, meta, data, {
        ...(condition ? { precondition: (current: ObjectMeta | null) => evaluateConditional(condition, current) } : {}),
        classOfBucket: options.storageClass === undefined,
      });
    } catch (error) {
      await this.#discard(ingested);
      throw quotaError(error);
    }
    if (outcome === 'written') return publicMeta(meta);
    await this.#discard(ingested);
    // The bucket was deleted while the body streamed in: the write is refused, not silently lost.
    if (outcome === 'no-bucket') {
      this.#forgetBucket(bucket);
      throw new StoreError('STORE_NO_SUCH_BUCKET');
    }
    return null;
  }

  async delete(bucket: string, keys: readonly string[]): Promise<void> {
    if (keys.length > STORE_LIMITS.maxDeleteKeys) throw new StoreError('STORE_TOO_MANY_KEYS');
    for (const key of keys) assertKey(key);
    await this.#bucket(bucket);
    await this.#meta.deleteObjects(bucket, keys);
  }

  async deleteIf(bucket: string, key: string, onlyIf: Conditional): Promise<DeleteOutcome> {
    assertKey(key);
    await this.#bucket(bucket);
    return this.#meta.deleteObject(bucket, key, (current) => evaluateConditional(onlyIf, current));
  }

  async list(bucket: string, options: ListOptions = {}): Promise<ListResult> {
    await this.#bucket(bucket);
    return listObjects(this.#meta, bucket, options);
  }

  async createMultipartUpload(bucket: string, key: string, options: MultipartOptions = {}): Promise<string> {
    assertKey(key);
    assertCustomMetadata(options.customMetadata);
    const info = await this.#bucket(bucket);
    const uploadId = randomBase64UrlId(96);
    const inserted = await this.#meta.insertUpload({
      uploadId,
      bucket,
      key,
      created: this.#clock.now(),
      httpMetadata: options.httpMetadata ?? {},
      customMetadata: options.customMetadata ?? {},
      storageClass: checkStorageClass(options.storageClass, info.storageClass),
      state: 'active',
      checksumAlgorithm: options.checksumAlgorithm ?? null,
      checksumType: options.checksumType ?? 'COMPOSITE',
      ...(options.ssecKey !== undefined ? { ssec: newSseC(options.ssecKey).record } : {}),
    });
    if (!inserted) throw new StoreError('STORE_NO_SUCH_BUCKET');
    return uploadId;
  }

  async uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: BodyInput, options: UploadPartOptions = {}): Promise<UploadedPart> {
    assertKey(key);
    const upload = await this.#activeUpload(bucket, key, uploadId);
    if (!upload) throw new StoreError('STORE_NO_SUCH_UPLOAD');
    // An SSE-C upload's parts are encrypted with its key, which every part must give.
    const dataKey = sseCDataKey(upload.ssec, options.ssecKey, 'upload');
    await this.#checkRoom(bucket, body);
    const sealed = dataKey ? sealBody(body, dataKey, ['md5']) : undefined;
    const ingested = await ingestBody(sealed ? sealed.body : body, {
      blobs: this.#blobs,
      inlineMax: 0,
      maxSize: sealed ? sealedLength(STORE_LIMITS.maxPartBytes) : STORE_LIMITS.maxPartBytes,
      alwaysBlob: true,
    });
    // Kept only in the upload's own algorithm: those are what completion combines.
    const algorithm = upload.checksumAlgorithm;
    const checksum = algorithm ? options.verifiedChecksums?.()[algorithm] : undefined;
    const plain = sealed?.digests();
    const size = plain ? plain.size : ingested.size;
    const md5 = plain && dataKey ? sealedEtag(dataKey, plain.hex.md5!) : ingested.md5;
    const part: PartRow = { partNumber, etag: md5, size, blobId: ingested.blobId!, uploaded: this.#clock.now() };
    if (checksum !== undefined) part.checksum = checksum;
    const recorded = await this.#meta.putPart(uploadId, part).catch(async (error: unknown) => {
      await this.#discard(ingested);
      throw quotaError(error);
    });
    if (!recorded) {
      await this.#discard(ingested);
      throw new StoreError('STORE_NO_SUCH_UPLOAD');
    }
    const etag = options.opaqueEtag ? opaquePartEtag(uploadId, partNumber, part.blobId) : md5;
    return algorithm && checksum !== undefined ? { partNumber, etag, checksums: { [algorithm]: checksum } } : { partNumber, etag };
  }

  async completeMultipartUpload(
    bucket: string,
    key: string,
    uploadId: string,
    parts: readonly UploadedPart[],
    options: CompleteOptions = {},
  ): Promise<ObjectMeta> {
    assertKey(key);
    const now = this.#clock.now();
    const condition = options.onlyIf;
    if (options.ssecKey !== undefined || options.ssecKeyWithChecksums) {
      const upload = await this.#activeUpload(bucket, key, uploadId);
      const keyNeeded = options.ssecKeyWithChecksums === true && upload?.ssec !== undefined && upload.checksumAlgorithm !== null;
      if (upload && (options.ssecKey !== undefined || keyNeeded)) sseCDataKey(upload.ssec, options.ssecKey, 'upload');
    }
    let meta: ObjectMeta | null;
    try {
      meta = await this.#meta.completeUpload(
        bucket,
        key,
        uploadId,
        (upload, stored) =>
          planCompletion(upload, stored, {
            requested: parts,
            version: randomHexId(),
            now,
            expiredBefore: now - STORE_LIMITS.multipartLifetimeMs,
            ...(options.expectedChecksum ? { expectedChecksum: options.expectedChecksum } : {}),
          }),
        condition ? (current) => evaluateConditional(condition, current) : undefined,
      );
    } catch (thrown) {
      const error = quotaError(thrown);
      const repeated =
        options.answerRepeat && error instanceof StoreError && error.code === 'STORE_NO_SUCH_UPLOAD'
          ? await this.#repeatedCompletion(bucket, key, uploadId, parts)
          : null;
      if (!repeated) throw error;
      // Checked against the object it made, when that has a checksum in the algorithm (else the first completion was not checked either).
      const made = options.expectedChecksum && repeated.checksums[options.expectedChecksum.algorithm];
      if (made !== undefined) checkCompletionChecksum(options.expectedChecksum, made);
      return publicMeta(repeated);
    }
    if (!meta) throw new StoreError('STORE_PRECONDITION_FAILED');
    return publicMeta(meta);
  }

  /**
   * The same completion sent again (a client retrying after a lost answer): the object it made, if
   * the upload was completed with exactly these parts, not too long ago, and that object is still
   * the key's current one. Otherwise null (the upload is gone: NoSuchUpload).
   */
  async #repeatedCompletion(bucket: string, key: string, uploadId: string, parts: readonly UploadedPart[]): Promise<ObjectMeta | null> {
    const upload = await this.#meta.getUpload(bucket, key, uploadId);
    const completion = upload?.state === 'completed' ? upload.completion : undefined;
    if (!completion || completion.at < this.#clock.now() - STORE_LIMITS.completedUploadMemoryMs) return null;
    const requested = [...parts].sort((a, b) => a.partNumber - b.partNumber).map((part) => [part.partNumber, normaliseEtag(part.etag)]);
    if (JSON.stringify(requested) !== JSON.stringify(completion.parts)) return null;
    const current = await this.#meta.headObject(bucket, key);
    return current?.version === completion.version ? current : null;
  }

  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    assertKey(key);
    const previous = await this.#meta.abortUpload(bucket, key, uploadId);
    if (previous === null) throw new StoreError('STORE_NO_SUCH_UPLOAD');
  }

  async getUpload(bucket: string, key: string, uploadId: string): Promise<(UploadInfo & MultipartOptions) | null> {
    const upload = await this.#activeUpload(bucket, key, uploadId);
    if (!upload) return null;
    return {
      uploadId,
      key,
      initiated: upload.created,
      storageClass: upload.storageClass,
      httpMetadata: upload.httpMetadata,
      customMetadata: upload.customMetadata,
      ...(upload.checksumAlgorithm ? { checksumAlgorithm: upload.checksumAlgorithm, checksumType: upload.checksumType ?? 'COMPOSITE' } : {}),
    };
  }

  async listParts(bucket: string, key: string, uploadId: string): Promise<PartInfo[]> {
    if (!(await this.#activeUpload(bucket, key, uploadId))) throw new StoreError('STORE_NO_SUCH_UPLOAD');
    return (await this.#meta.listParts(uploadId)).map(({ partNumber, etag, size, uploaded, checksum }) =>
      checksum === undefined ? { partNumber, etag, size, uploaded } : { partNumber, etag, size, uploaded, checksum },
    );
  }

  async listUploads(bucket: string, options: { prefix?: string } = {}): Promise<UploadInfo[]> {
    await this.#bucket(bucket);
    const expiredBefore = this.#clock.now() - STORE_LIMITS.multipartLifetimeMs;
    return (await this.#meta.listUploads(bucket, options.prefix ?? ''))
      .filter((upload) => upload.created >= expiredBefore)
      .map((upload) => ({ uploadId: upload.uploadId, key: upload.key, initiated: upload.created, storageClass: upload.storageClass }));
  }

  async expireUploads(): Promise<number> {
    const now = this.#clock.now();
    const expired = await this.#meta.expireUploads(now - STORE_LIMITS.multipartLifetimeMs);
    // Finished uploads are remembered for a day (a repeated completion), then forgotten, a batch at a time.
    while ((await this.#meta.forgetFinishedUploads(now - STORE_LIMITS.completedUploadMemoryMs, 1000)) === 1000);
    return expired;
  }

  accountUsage(accountId: string | null): Promise<AccountUsage> {
    return this.#meta.accountUsage(accountId ?? '');
  }

  /** Deletes the files of blobs no row references any more, once their grace period has passed. */
  async reclaimBlobs(): Promise<number> {
    let total = 0;
    for (;;) {
      const ids = await this.#meta.reclaimableBlobs(this.#clock.now(), 500);
      if (ids.length === 0) return total;
      await this.#blobs.delete(ids);
      await this.#meta.confirmReclaimed(ids);
      total += ids.length;
    }
  }

  async close(): Promise<void> {
    await this.#meta.close();
    await this.#blobs.close();
  }

  async #bucket(name: string): Promise<BucketInfo> {
    const known = this.#turnBuckets.get(name);
    if (known) return known;
    const bucket = await this.#meta.getBucket(name);
    if (!bucket) throw new StoreError('STORE_NO_SUCH_BUCKET');
    this.#turnBuckets.set(name, bucket);
    if (!this.#forgetScheduled) {
      this.#forgetScheduled = true;
      setImmediate(() => {
        this.#forgetScheduled = false;
        this.#turnBuckets.clear();
      });
    }
    return bucket;
  }

  /** #bucket for a put: remembered a while longer (#writeBuckets), since the commit checks it again. */
  async #writeBucket(name: string): Promise<BucketInfo> {
    const now = this.#clock.now();
    const known = this.#writeBuckets.get(name);
    if (known && known.until > now) return known.info;
    const info = await this.#bucket(name);
    // Bounded: past the limit, the memory starts again (a lookup each is the cost of a miss).
    if (this.#writeBuckets.size >= WRITE_BUCKET_MEMORY_SIZE) this.#writeBuckets.clear();
    this.#writeBuckets.set(name, { info, until: now + WRITE_BUCKET_MEMORY_MS });
    return info;
  }

  #forgetBucket(name: string): void {
    this.#turnBuckets.delete(name);
    this.#writeBuckets.delete(name);
  }

  /**
   * Before a body declared at EARLY_QUOTA_CHECK_BYTES or more is read: refuses it when it cannot fit
   * the account's quota (a put's `key` may replace an object, whose size it frees), so a client is
   * not made to send gigabytes to be refused. Smaller bodies are checked only at commit, which
   * checks every write exactly; this costs large ones one read.
   */
  async #checkRoom(bucket: string, body: BodyInput, key?: string): Promise<void> {
    const length = body instanceof Uint8Array ? undefined : body.length;
    if (length === undefined || length < EARLY_QUOTA_CHECK_BYTES) return;
    const usage = await this.#meta.accountUsage(accountOfBucket(bucket));
    let refusal = earlyRefusal(usage, length, key === undefined ? 0 : 1);
    if (refusal && key !== undefined) {
      const current = await this.#meta.headObject(bucket, key);
      if (current) refusal = earlyRefusal(usage, length - current.size, 0);
    }
    if (refusal) throw quotaError(refusal);
  }

  async #activeUpload(bucket: string, key: string, uploadId: string) {
    const upload = await this.#meta.getUpload(bucket, key, uploadId);
    if (!upload || upload.state !== 'active') return null;
    if (upload.created < this.#clock.now() - STORE_LIMITS.multipartLifetimeMs) return null;
    return upload;
  }

  /**
   * An SSE-C put's checksums: the one the caller stated, checked against the plaintext the
   * sealing stream hashed. No MD5 by default: it would tell anyone who can list what the content is.
   */
  #verifyPlainChecksum(plain: SealedDigests, expected: PutOptions['expectedChecksum']): Checksums {
    if (!expected) return {};
    const actual = plain.hex[NODE_HASH_NAMES[expected.algorithm]]!;
    if (actual !== expected.hex.toLowerCase()) {
      const name = ALGORITHM_NAMES[expected.algorithm];
      throw new StoreError('STORE_BAD_DIGEST', {
        message: `The ${name} checksum you specified did not match what we received.\nYou provided a ${name} checksum with value: ${expected.hex.toLowerCase()}\nActual ${name} was: ${actual}`,
        details: { algorithm: expected.algorithm, expected: expected.hex.toLowerCase(), actual },
      });
    }
    return { [expected.algorithm]: actual };
  }

  #verifyChecksum(ingested: Ingested, expected: PutOptions['expectedChecksum']): Checksums {
    const checksums: Checksums = { md5: ingested.md5 };
    if (!expected || !ingested.extra) return checksums;
    const actual = ingested.extra.hex;
    if (actual !== expected.hex.toLowerCase()) {
      const name = ALGORITHM_NAMES[expected.algorithm];
      throw new StoreError('STORE_BAD_DIGEST', {
        message: `The ${name} checksum you specified did not match what we received.\nYou provided a ${name} checksum with value: ${expected.hex.toLowerCase()}\nActual ${name} was: ${actual}`,
        details: { algorithm: expected.algorithm, expected: expected.hex.toLowerCase(), actual },
      });
    }
    checksums[expected.algorithm] = actual;
    return checksums;
  }

  async #discard(ingested: Ingested): Promise<void> {
    if (ingested.blobId === undefined) return;
    await this.#blobs.delete([ingested.blobId]).catch((error: unknown) => {
      this.#logger.warn({ err: error, blobId: ingested.blobId }, 'Unreferenced blob could not be deleted; it is swept at the next start.');
    });
  }
}
