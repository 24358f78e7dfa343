/**
 * S3-compatible BlobStore (@aws-sdk/client-s3): blobs are the objects `<prefix>/<blobId>` of one
 * bucket on AWS S3, R2, MinIO, edgeport's own S3 API, or any other S3-compatible store. A writer
 * holds up to one part; a body that fits is one PutObject at commit, a larger one becomes a
 * multipart upload whose parts go out while the next one fills (at most two parts in memory). An
 * object appears only when PutObject or CompleteMultipartUpload succeeds, and S3 acknowledges only
 * durable writes, so a committed blob is durable before its metadata row commits, as on disk.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectsCommand,
  GetObjectCommand, HeadBucketCommand, ListMultipartUploadsCommand, ListObjectsV2Command, ListPartsCommand,
  PutObjectCommand, S3Client, UploadPartCommand, type CompletedPart, type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { randomHexId } from '../../core/ids.ts';
import { StoreError } from '../engine/errors.ts';
import type { BlobStore, BlobWriter, SweepOptions } from './blob-store.ts';
import { WriteBehind } from './write-behind.ts';

const BLOB_ID = /^[0-9a-f]{32}$/;
/** S3's limit per DeleteObjects request. */
const DELETE_BATCH = 1000;
/** 8 MiB: above S3's 5 MiB minimum part, and what the AWS CLI uses. */
const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
const MIN_PART_BYTES = 5 * 1024 * 1024;
/** The first part's buffer starts this small and doubles, so small bodies don't reserve a whole part. */
const INITIAL_BUFFER_BYTES = 256 * 1024;

export interface S3BlobStoreOptions {
  bucket: string;
  /** Key prefix without leading or trailing slash; '' puts blobs at the bucket's root. */
  prefix: string;
  /** Client settings: endpoint, region, credentials, forcePathStyle. */
  client: S3ClientConfig;
  /** Part size of multipart uploads (default 8 MiB, at least 5 MiB). */
  partBytes?: number;
}

export class S3BlobStore implements BlobStore {
  readonly dir = undefined;
  readonly bucket: string;
  readonly prefix: string;
  readonly #client: S3Client;
  readonly #partBytes: number;

  private constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix;
    this.#partBytes = options.partBytes ?? DEFAULT_PART_BYTES;
    if (!(this.#partBytes >= MIN_PART_BYTES)) throw new RangeError(`partBytes must be at least ${MIN_PART_BYTES}`);
    this.#client = new S3Client({
      // Many S3-compatible stores reject the SDK's newer default checksum headers; integrity on the
      // wire already comes from SigV4's payload hash (and TLS), and the engine keeps its own MD5.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A read holds its connection while the caller consumes the body (a slow client can take a
      // while), so allow far more sockets than the SDK's default 50.
      requestHandler: {
        httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 512 }),
        httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 512 }),
      },
      ...options.client,
    });
  }

  /** Opens the store and checks that the bucket is reachable with these credentials. */
  static async open(options: S3BlobStoreOptions): Promise<S3BlobStore> {
    const store = new S3BlobStore(options);
    try {
      await store.#client.send(new HeadBucketCommand({ Bucket: store.bucket }));
    } catch (error) {
      store.#client.destroy();
      throw failure('HeadBucket', store.bucket, '', error,
        `Could not reach the blob bucket "${store.bucket}": ${describe(error)}. Check the endpoint, region, credentials and that the bucket exists.`);
    }
    return store;
  }

  /** The object key of a blob. */
  keyOf(blobId: string): string {
    return this.prefix === '' ? blobId : `${this.prefix}/${blobId}`;
  }

  async createWriter(): Promise<BlobWriter> {
    const blobId = randomHexId();
    return new S3BlobWriter(this.#client, this.bucket, this.keyOf(blobId), blobId, this.#partBytes);
  }

  async *read(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array> {
    if (length <= 0) return;
    assertBlobId(blobId);
    const key = this.keyOf(blobId);
    let body: AsyncIterable<Uint8Array>;
    try {
      const out = await this.#client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${offset}-${offset + length - 1}` }));
      body = out.Body as unknown as AsyncIterable<Uint8Array>;
    } catch (error) {
      throw failure('GetObject', this.bucket, key, error);
    }
    // Streamed as it arrives; leaving the loop early destroys the response (and frees its socket).
    let received = 0;
    try {
      for await (const chunk of body) {
        received += chunk.byteLength;
        if (received > length) throw new Error(`The store sent more than the ${length} bytes asked for (a Range header ignored?).`);
        yield chunk;
      }
    } catch (error) {
      throw failure('GetObject', this.bucket, key, error);
    }
    if (received !== length) throw failure('GetObject', this.bucket, key, new Error(`The body ended after ${received} of ${length} bytes.`));
  }

  async delete(blobIds: readonly string[]): Promise<void> {
    for (const id of blobIds) assertBlobId(id);
    for (let at = 0; at < blobIds.length; at += DELETE_BATCH) {
      const batch = blobIds.slice(at, at + DELETE_BATCH);
      let errors: Array<{ Key?: string | undefined; Code?: string | undefined; Message?: string | undefined }>;
      try {
        const out = await this.#client.send(new DeleteObjectsCommand({
          Bucket: this.bucket, Delete: { Objects: batch.map((id) => ({ Key: this.keyOf(id) })), Quiet: true },
        }));
        errors = out.Errors ?? [];
      } catch (error) {
        throw failure('DeleteObjects', this.bucket, this.keyOf(batch[0]!), error);
      }
      // A key that no longer exists is not an error in S3, so anything listed here really failed.
      const first = errors[0];
      if (first) {
        throw failure('DeleteObjects', this.bucket, first.Key ?? '', new Error(`${errors.length} blob(s) not deleted: ${first.Code ?? 'Error'} ${first.Message ?? ''}`));
      }
    }
  }

  async list(options: SweepOptions = {}): Promise<string[]> {
    const cutoff = cutoffOf(options);
    const ids: string[] = [];
    const prefix = this.#listPrefix();
    let token: string | undefined;
    do {
      const out = await this.#client.send(new ListObjectsV2Command({
        Bucket: this.bucket, Prefix: prefix, Delimiter: '/', ...(token === undefined ? {} : { ContinuationToken: token }),
      })).catch((error: unknown) => { throw failure('ListObjectsV2', this.bucket, prefix, error); });
      for (const object of out.Contents ?? []) {
        const id = object.Key?.slice(prefix.length) ?? '';
        if (!BLOB_ID.test(id)) continue;
        if (cutoff !== undefined && (object.LastModified?.getTime() ?? 0) > cutoff) continue;
        ids.push(id);
      }
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token !== undefined);
    return ids;
  }

  /**
   * Aborts this prefix's multipart uploads that never completed. With `olderThanMs`, an upload
   * counts as idle from its last part (ListParts), not from its start: a long upload in progress
   * on another instance keeps going.
   */
  async clearTemporary(options: SweepOptions = {}): Promise<number> {
    const cutoff = cutoffOf(options);
    const prefix = this.#listPrefix();
    const stale: Array<{ key: string; uploadId: string }> = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const out = await this.#client.send(new ListMultipartUploadsCommand({
        Bucket: this.bucket, Prefix: prefix, Delimiter: '/',
        ...(keyMarker === undefined ? {} : { KeyMarker: keyMarker }), ...(uploadIdMarker === undefined ? {} : { UploadIdMarker: uploadIdMarker }),
      })).catch((error: unknown) => { throw failure('ListMultipartUploads', this.bucket, prefix, error); });
      for (const upload of out.Uploads ?? []) {
        if (upload.Key === undefined || upload.UploadId === undefined || !BLOB_ID.test(upload.Key.slice(prefix.length))) continue;
        if (cutoff !== undefined && (upload.Initiated?.getTime() ?? 0) > cutoff) continue;
        stale.push({ key: upload.Key, uploadId: upload.UploadId });
      }
      if (!out.IsTruncated || out.NextKeyMarker === undefined) break;
      keyMarker = out.NextKeyMarker;
      uploadIdMarker = out.NextUploadIdMarker;
    }
    let aborted = 0;
    for (const upload of stale) {
      if (cutoff !== undefined && (await this.#lastPartTime(upload.key, upload.uploadId)) > cutoff) continue;
      await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.key, UploadId: upload.uploadId }))
        .then(() => { aborted++; }, (error: unknown) => {
          if (errorName(error) !== 'NoSuchUpload') throw failure('AbortMultipartUpload', this.bucket, upload.key, error);
        });
    }
    return aborted;
  }

  async checkReachable(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      throw failure('HeadBucket', this.bucket, '', error, `The blob bucket "${this.bucket}" does not answer: ${describe(error)}.`);
    }
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }

  #listPrefix(): string {
    return this.prefix === '' ? '' : `${this.prefix}/`;
  }

  /** When the upload's newest part was stored (0 without parts or when it is already gone). */
  async #lastPartTime(key: string, uploadId: string): Promise<number> {
    let latest = 0;
    let marker: string | undefined;
    try {
      do {
        const out = await this.#client.send(new ListPartsCommand({
          Bucket: this.bucket, Key: key, UploadId: uploadId, ...(marker === undefined ? {} : { PartNumberMarker: marker }),
        }));
        for (const part of out.Parts ?? []) latest = Math.max(latest, part.LastModified?.getTime() ?? 0);
        marker = out.IsTruncated ? out.NextPartNumberMarker : undefined;
      } while (marker !== undefined);
    } catch (error) {
      if (errorName(error) === 'NoSuchUpload') return 0;
      throw failure('ListParts', this.bucket, key, error);
    }
    return latest;
  }
}

/**
 * One blob being written. Bytes are copied into a part buffer (callers may reuse their chunks);
 * a full part is sent only once more bytes arrive, so a body of exactly one part stays one
 * PutObject. While a part uploads the next one fills; a third waits (write() does not resolve).
 */
class S3BlobWriter implements BlobWriter {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #key: string;
  readonly #blobId: string;
  /** Full parts go out as UploadParts, one in flight while the next fills (write-behind.ts). */
  readonly #body: WriteBehind;
  #size = 0;
  #state: 'open' | 'committing' | 'done' = 'open';
  #uploadId: string | undefined;
  readonly #parts: CompletedPart[] = [];

  constructor(client: S3Client, bucket: string, key: string, blobId: string, partBytes: number) {
    this.#client = client;
    this.#bucket = bucket;
    this.#key = key;
    this.#blobId = blobId;
    this.#body = new WriteBehind((bytes) => this.#sendPart(bytes), {
      batchBytes: partBytes, initialBytes: INITIAL_BUFFER_BYTES, open: () => this.#createUpload(),
    });
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.#state !== 'open') throw new Error('The blob writer is closed.');
    await this.#body.write(chunk);
    this.#size += chunk.byteLength;
  }

  async commit(): Promise<{ blobId: string; size: number }> {
    if (this.#state !== 'open') throw new Error('The blob writer is closed.');
    this.#state = 'committing';
    try {
      if (!this.#body.sent) {
        // Never more than one part: a single PutObject.
        const body = this.#body.takeUnsent();
        await this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: this.#key, Body: body, ContentLength: body.byteLength }))
          .catch((error: unknown) => { throw failure('PutObject', this.#bucket, this.#key, error); });
      } else {
        await this.#body.flush();
        await this.#client.send(new CompleteMultipartUploadCommand({
          Bucket: this.#bucket, Key: this.#key, UploadId: this.#uploadId, MultipartUpload: { Parts: this.#parts },
        })).catch((error: unknown) => { throw failure('CompleteMultipartUpload', this.#bucket, this.#key, error); });
      }
    } catch (error) {
      await this.#abortUpload();
      throw error;
    } finally {
      this.#state = 'done';
    }
    return { blobId: this.#blobId, size: this.#size };
  }

  async abort(): Promise<void> {
    if (this.#state === 'done') return;
    this.#state = 'done';
    this.#body.takeUnsent();
    await this.#abortUpload();
  }

  /** Before the first part: the body is larger than one part, so it becomes a multipart upload. */
  async #createUpload(): Promise<void> {
    const out = await this.#client.send(new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: this.#key }))
      .catch((error: unknown) => { throw failure('CreateMultipartUpload', this.#bucket, this.#key, error); });
    if (out.UploadId === undefined) throw failure('CreateMultipartUpload', this.#bucket, this.#key, new Error('No UploadId in the response.'));
    this.#uploadId = out.UploadId;
  }

  /** One part as an UploadPart. */
  async #sendPart(body: Buffer): Promise<void> {
    const part: CompletedPart = { PartNumber: this.#parts.length + 1 };
    this.#parts.push(part);
    const out = await this.#client.send(new UploadPartCommand({
      Bucket: this.#bucket, Key: this.#key, UploadId: this.#uploadId, PartNumber: part.PartNumber, Body: body, ContentLength: body.byteLength,
    })).catch((error: unknown) => { throw failure('UploadPart', this.#bucket, this.#key, error); });
    part.ETag = out.ETag;
  }

  /** Best effort: a leftover upload is aborted by the next start's sweep (and by bucket lifecycle rules). */
  async #abortUpload(): Promise<void> {
    await this.#body.settle();
    const uploadId = this.#uploadId;
    if (uploadId === undefined) return;
    this.#uploadId = undefined;
    await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: this.#key, UploadId: uploadId })).catch(() => undefined);
  }
}

function assertBlobId(id: string): void {
  if (!BLOB_ID.test(id)) throw new Error(`Not a blob id: ${JSON.stringify(id)}`);
}

/** The newest storage timestamp that counts as old enough, by the wall clock the store stamps with. */
function cutoffOf(options: SweepOptions): number | undefined {
  return options.olderThanMs === undefined ? undefined : Date.now() - options.olderThanMs;
}

function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === undefined ? `${error.name}: ${error.message}` : `${error.name} (HTTP ${status}): ${error.message}`;
}

/**
 * A blob-store failure as the engine reports it: STORE_INTERNAL (clients see only "internal
 * error"), with the operation, the object and the S3 error kept for the logs.
 */
function failure(operation: string, bucket: string, key: string, cause: unknown, message?: string): StoreError {
  if (cause instanceof StoreError) return cause;
  return new StoreError('STORE_INTERNAL', {
    cause, details: { blobStore: 's3', operation, bucket, key, error: describe(cause) }, ...(message === undefined ? {} : { message }),
  });
}
