/**
 * S3-compatible BlobStore (@aws-sdk/client-s3): blobs are the objects `<prefix>/<blobId>` of one
 * bucket on AWS S3, R2, MinIO, edgeport's own S3 API, or any other S3-compatible store. A writer
 * holds up to one part; a body that fits is one PutObject at commit, a larger one becomes a
 * multipart upload whose parts go out while the next one fills (at most two parts in memory). An
 * object appears only when PutObject or CompleteMultipartUpload succeeds, and S3 acknowledges only
 * durable writes, so a committed blob is durable before its metadata row commits, as on disk.
 *
 * Every call has a deadline (`timeoutMs`, `[blobs] timeout_ms`): a call without a body must be
 * answered within it, and no call may go that long without a byte moving on its connection (an
 * upload over a slow link goes on as long as it moves). A store that is down, silent, overloaded
 * (5xx, SlowDown) or full (507, QuotaExceeded) fails the call with a BackendFault, which clients
 * get as a retryable 503. Optional calls some S3 servers lack (ListMultipartUploads: s3rver answers
 * 501) only narrow the start-up sweep, with one warning.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { backendFull, backendUnavailable, type BackendFault } from '../../core/errors/backend-fault.ts';
import { randomHexId } from '../../core/ids.ts';
import type { Logger } from '../../core/log.ts';
import { StoreError } from '../engine/errors.ts';
import type { BlobStore, BlobWriter, SweepOptions } from './blob-store.ts';
import { startFailure } from './start-failure.ts';
import { WriteBehind } from './write-behind.ts';

const BLOB_ID = /^[0-9a-f]{32}$/;
/** S3's limit per DeleteObjects request. */
const DELETE_BATCH = 1000;
/** 8 MiB: above S3's 5 MiB minimum part, and what the AWS CLI uses. */
const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
const MIN_PART_BYTES = 5 * 1024 * 1024;
/** The first part's buffer starts this small and doubles, so small bodies don't reserve a whole part. */
const INITIAL_BUFFER_BYTES = 256 * 1024;
/** `[blobs] timeout_ms`'s default (config/defaults.ts). */
const DEFAULT_TIMEOUT_MS = 10_000;
/** Two tries per call (the SDK's default is 3): a failing store answers the client sooner. */
const MAX_ATTEMPTS = 2;

export interface S3BlobStoreOptions {
  bucket: string;
  /** Key prefix without leading or trailing slash; '' puts blobs at the bucket's root. */
  prefix: string;
  /** Client settings: endpoint, region, credentials, forcePathStyle. */
  client: S3ClientConfig;
  /** Part size of multipart uploads (default 8 MiB, at least 5 MiB). */
  partBytes?: number;
  /** Each call's deadline: an answer without a body, or a byte moving on its connection (default 10 s). */
  timeoutMs?: number;
  /** Where warnings go (a call the store lacks). */
  logger?: Logger;
  /** How messages name the store (the URL without its secret); default `s3://<bucket>/<prefix>`. */
  where?: string;
}

/** Sends one S3 call with the store's deadline, mapping its failure (fault or not) for the engine. */
type Send = <Output = unknown>(operation: string, key: string, command: object, options?: { body?: boolean }) => Promise<Output>;

export class S3BlobStore implements BlobStore {
  readonly dir = undefined;
  readonly bucket: string;
  readonly prefix: string;
  /** How messages name the store: its URL without the secret key. */
  readonly where: string;
  readonly #client: S3Client;
  readonly #partBytes: number;
  readonly #timeoutMs: number;
  readonly #logger: Logger | undefined;
  /** Calls the store answered with NotImplemented, each warned about once. */
  readonly #lacking = new Set<string>();
  readonly #send: Send;

  private constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix;
    this.where = options.where ?? `s3://${options.bucket}/${options.prefix}`;
    this.#partBytes = options.partBytes ?? DEFAULT_PART_BYTES;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#logger = options.logger;
    if (!(this.#partBytes >= MIN_PART_BYTES)) throw new RangeError(`partBytes must be at least ${MIN_PART_BYTES}`);
    this.#client = new S3Client({
      // Many S3-compatible stores reject the SDK's newer default checksum headers; integrity on the
      // wire already comes from SigV4's payload hash (and TLS), and the engine keeps its own MD5.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: MAX_ATTEMPTS,
      // A read holds its connection while the caller consumes the body (a slow client can take a
      // while), so allow far more sockets than the SDK's default 50. No call waits longer than the
      // deadline for a connection, or for a byte once connected.
      requestHandler: {
        httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 512 }),
        httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 512 }),
        connectionTimeout: this.#timeoutMs,
        socketTimeout: this.#timeoutMs,
      },
      ...options.client,
    });
    const timeoutMs = this.#timeoutMs;
    const client = this.#client;
    const bucket = this.bucket;
    this.#send = async function sendWithDeadline<Output>(
      operation: string,
      key: string,
      command: object,
      sendOptions: { body?: boolean } = {},
    ): Promise<Output> {
      // A call without a body must be answered (its head, for a read) within the deadline, retries
      // included; one with a body may take longer, as long as its bytes keep moving (socketTimeout).
      const deadline = sendOptions.body ? undefined : new AbortController();
      const timer = deadline ? setTimeout(() => deadline.abort(), timeoutMs) : undefined;
      try {
        return (await client.send(command as never, deadline ? { abortSignal: deadline.signal } : {})) as Output;
      } catch (error) {
        throw failure(operation, bucket, key, error, { timeoutMs, timedOut: deadline?.signal.aborted === true });
      } finally {
        clearTimeout(timer);
      }
    };
  }

  /** Opens the store and checks that the bucket is reachable with these credentials. */
  static async open(options: S3BlobStoreOptions): Promise<S3BlobStore> {
    const store = new S3BlobStore(options);
    try {
      await store.#send('HeadBucket', '', new HeadBucketCommand({ Bucket: store.bucket }));
    } catch (error) {
      store.#client.destroy();
      throw startFailure(store.where, error, 'opened');
    }
    return store;
  }

  /** The object key of a blob. */
  keyOf(blobId: string): string {
    return this.prefix === '' ? blobId : `${this.prefix}/${blobId}`;
  }

  async createWriter(): Promise<BlobWriter> {
    const blobId = randomHexId();
    return new S3BlobWriter(this.#send, this.bucket, this.keyOf(blobId), blobId, this.#partBytes);
  }

  async *read(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array> {
    if (length <= 0) return;
    assertBlobId(blobId);
    const key = this.keyOf(blobId);
    const out = await this.#send<{ Body?: unknown }>(
      'GetObject',
      key,
      new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${offset}-${offset + length - 1}` }),
    );
    const body = out.Body as AsyncIterable<Uint8Array>;
    // Streamed as it arrives; leaving the loop early destroys the response (and frees its socket).
    let received = 0;
    try {
      for await (const chunk of body) {
        received += chunk.byteLength;
        if (received > length) throw new Error(`The store sent more than the ${length} bytes asked for (a Range header ignored?).`);
        yield chunk;
      }
    } catch (error) {
      throw failure('GetObject', this.bucket, key, error, { timeoutMs: this.#timeoutMs });
    }
    if (received !== length) throw failure('GetObject', this.bucket, key, new Error(`The body ended after ${received} of ${length} bytes.`));
  }

  async delete(blobIds: readonly string[]): Promise<void> {
    for (const id of blobIds) assertBlobId(id);
    for (let at = 0; at < blobIds.length; at += DELETE_BATCH) {
      const batch = blobIds.slice(at, at + DELETE_BATCH);
      const out = await this.#send<{ Errors?: Array<{ Key?: string | undefined; Code?: string | undefined; Message?: string | undefined }> }>(
        'DeleteObjects',
        this.keyOf(batch[0]!),
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((id) => ({ Key: this.keyOf(id) })), Quiet: true },
        }),
      );
      const errors = out.Errors ?? [];
      // A key that no longer exists is not an error in S3, so anything listed here really failed.
      const first = errors[0];
      if (first) {
        throw failure(
          'DeleteObjects',
          this.bucket,
          first.Key ?? '',
          new Error(`${errors.length} blob(s) not deleted: ${first.Code ?? 'Error'} ${first.Message ?? ''}`),
        );
      }
    }
  }

  async list(options: SweepOptions = {}): Promise<string[]> {
    const cutoff = cutoffOf(options);
    const ids: string[] = [];
    const prefix = this.#listPrefix();
    let token: string | undefined;
    do {
      const out = await this.#send<{ Contents?: Array<{ Key?: string; LastModified?: Date }>; IsTruncated?: boolean; NextContinuationToken?: string }>(
        'ListObjectsV2',
        prefix,
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          Delimiter: '/',
          ...(token === undefined ? {} : { ContinuationToken: token }),
        }),
      );
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
   * on another instance keeps going. A store without ListMultipartUploads (501 NotImplemented)
   * cannot say which uploads were left: nothing is aborted, with one warning (its own expiry, or a
   * lifecycle rule AbortIncompleteMultipartUpload, removes them); orphaned blobs are still swept
   * by the engine's own records (list + referenced).
   */
  async clearTemporary(options: SweepOptions = {}): Promise<number> {
    const cutoff = cutoffOf(options);
    const prefix = this.#listPrefix();
    const stale: Array<{ key: string; uploadId: string }> = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      let out: {
        Uploads?: Array<{ Key?: string; UploadId?: string; Initiated?: Date }>;
        IsTruncated?: boolean;
        NextKeyMarker?: string;
        NextUploadIdMarker?: string;
      };
      try {
        out = await this.#send(
          'ListMultipartUploads',
          prefix,
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: prefix,
            Delimiter: '/',
            ...(keyMarker === undefined ? {} : { KeyMarker: keyMarker }),
            ...(uploadIdMarker === undefined ? {} : { UploadIdMarker: uploadIdMarker }),
          }),
        );
      } catch (error) {
        if (!notImplemented(error)) throw error;
        this.#lacks(
          'ListMultipartUploads',
          "multipart uploads left by writes that never finished (a crash, a kill) cannot be listed, so they are not aborted: give the bucket a lifecycle rule AbortIncompleteMultipartUpload, or rely on the store's own expiry of uploads",
        );
        return 0;
      }
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
      await this.#send(
        'AbortMultipartUpload',
        upload.key,
        new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.key, UploadId: upload.uploadId }),
      ).then(
        () => {
          aborted++;
        },
        (error: unknown) => {
          if (sdkName(error) !== 'NoSuchUpload') throw error;
        },
      );
    }
    return aborted;
  }

  async checkReachable(): Promise<void> {
    await this.#send('HeadBucket', '', new HeadBucketCommand({ Bucket: this.bucket }));
  }

  /** Warns once that the store lacks `operation`, and what that means. */
  #lacks(operation: string, consequence: string): void {
    if (this.#lacking.has(operation)) return;
    this.#lacking.add(operation);
    this.#logger?.warn({ blobStore: this.where, operation }, `The blob store does not implement ${operation} (HTTP 501 NotImplemented): ${consequence}.`);
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
        const out = await this.#send<{ Parts?: Array<{ LastModified?: Date }>; IsTruncated?: boolean; NextPartNumberMarker?: string }>(
          'ListParts',
          key,
          new ListPartsCommand({
            Bucket: this.bucket,
            Key: key,
            UploadId: uploadId,
            ...(marker === undefined ? {} : { PartNumberMarker: marker }),
          }),
        );
        for (const part of out.Parts ?? []) latest = Math.max(latest, part.LastModified?.getTime() ?? 0);
        marker = out.IsTruncated ? out.NextPartNumberMarker : undefined;
      } while (marker !== undefined);
    } catch (error) {
      if (sdkName(error) === 'NoSuchUpload') return 0;
      // Without ListParts an upload's age is its start's.
      if (notImplemented(error)) {
        this.#lacks('ListParts', 'an unfinished upload counts as idle from its start, not from its last part');
        return 0;
      }
      throw error;
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
  readonly #send: Send;
  readonly #bucket: string;
  readonly #key: string;
  readonly #blobId: string;
  /** Full parts go out as UploadParts, one in flight while the next fills (write-behind.ts). */
  readonly #body: WriteBehind;
  #size = 0;
  #state: 'open' | 'committing' | 'done' = 'open';
  #uploadId: string | undefined;
  readonly #parts: CompletedPart[] = [];

  constructor(send: Send, bucket: string, key: string, blobId: string, partBytes: number) {
    this.#send = send;
    this.#bucket = bucket;
    this.#key = key;
    this.#blobId = blobId;
    this.#body = new WriteBehind((bytes) => this.#sendPart(bytes), {
      batchBytes: partBytes,
      initialBytes: INITIAL_BUFFER_BYTES,
      open: () => this.#createUpload(),
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
        await this.#send('PutObject', this.#key, new PutObjectCommand({ Bucket: this.#bucket, Key: this.#key, Body: body, ContentLength: body.byteLength }), {
          body: true,
        });
      } else {
        await this.#body.flush();
        // A completion of many parts may take the store a while, keeping its connection alive meanwhile: no overall deadline.
        await this.#send(
          'CompleteMultipartUpload',
          this.#key,
          new CompleteMultipartUploadCommand({
            Bucket: this.#bucket,
            Key: this.#key,
            UploadId: this.#uploadId,
            MultipartUpload: { Parts: this.#parts },
          }),
          { body: true },
        );
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
    const out = await this.#send<{ UploadId?: string }>(
      'CreateMultipartUpload',
      this.#key,
      new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: this.#key }),
    );
    if (out.UploadId === undefined) throw failure('CreateMultipartUpload', this.#bucket, this.#key, new Error('No UploadId in the response.'));
    this.#uploadId = out.UploadId;
  }

  /** One part as an UploadPart. */
  async #sendPart(body: Buffer): Promise<void> {
    const part: CompletedPart = { PartNumber: this.#parts.length + 1 };
    this.#parts.push(part);
    const out = await this.#send<{ ETag?: string }>(
      'UploadPart',
      this.#key,
      new UploadPartCommand({
        Bucket: this.#bucket,
        Key: this.#key,
        UploadId: this.#uploadId,
        PartNumber: part.PartNumber,
        Body: body,
        ContentLength: body.byteLength,
      }),
      { body: true },
    );
    part.ETag = out.ETag;
  }

  /** Best effort: a leftover upload is aborted by the next start's sweep (and by bucket lifecycle rules). */
  async #abortUpload(): Promise<void> {
    await this.#body.settle();
    const uploadId = this.#uploadId;
    if (uploadId === undefined) return;
    this.#uploadId = undefined;
    await this.#send('AbortMultipartUpload', this.#key, new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: this.#key, UploadId: uploadId })).catch(
      () => undefined,
    );
  }
}

function assertBlobId(id: string): void {
  if (!BLOB_ID.test(id)) throw new Error(`Not a blob id: ${JSON.stringify(id)}`);
}

/** The newest storage timestamp that counts as old enough, by the wall clock the store stamps with. */
function cutoffOf(options: SweepOptions): number | undefined {
  return options.olderThanMs === undefined ? undefined : Date.now() - options.olderThanMs;
}

/** The S3 error code the SDK named its exception after (NoSuchUpload, SlowDown, ...), through our wrapping. */
function sdkName(error: unknown): string | undefined {
  const wrapped = error instanceof StoreError || (error instanceof Error && error.name === 'BackendFault');
  const cause = wrapped ? (error as Error).cause : error;
  return cause instanceof Error ? cause.name : undefined;
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

/** The store answered 501 or NotImplemented: it lacks the call (s3rver's ListMultipartUploads). */
function notImplemented(error: unknown): boolean {
  const details = (error as { details?: { status?: unknown } }).details;
  return details?.status === 501 || statusOf(error) === 501 || sdkName(error) === 'NotImplemented';
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const status = statusOf(error);
  return status === undefined ? `${error.name}: ${error.message}` : `${error.name} (HTTP ${status}): ${error.message}`;
}

/** Node's codes of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);
/** S3 codes of a store that cannot serve now (whatever status they come with). */
const BUSY_CODES = new Set(['SlowDown', 'ServiceUnavailable', 'InternalError', 'RequestTimeout', 'Throttling', 'ThrottlingException']);
/** S3 codes of a store with no room: MinIO's (with 507), Ceph RGW's quota, others'. */
const FULL_CODES = new Set(['XMinioStorageFull', 'InsufficientStorage', 'QuotaExceeded', 'InsufficientCapacity']);

/**
 * A blob-store failure as the engine reports it. A store that is down, silent, overloaded or full
 * is a BackendFault (clients get a retryable 503); anything else (a missing object, refused
 * credentials, a call it lacks) is STORE_INTERNAL. Both keep the call, the object, the HTTP status
 * and the S3 error in `details`, for the logs and for start-up messages (startFailure).
 */
function failure(
  operation: string,
  bucket: string,
  key: string,
  cause: unknown,
  options: { timeoutMs?: number; timedOut?: boolean } = {},
): StoreError | BackendFault {
  if (cause instanceof StoreError || (cause instanceof Error && cause.name === 'BackendFault')) return cause as StoreError | BackendFault;
  const status = statusOf(cause);
  const name = cause instanceof Error ? cause.name : undefined;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const details = { blobStore: 's3', operation, bucket, key, ...(status === undefined ? {} : { status }), error: describe(cause) };
  const ms = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (status === undefined && (options.timedOut || name === 'TimeoutError' || name === 'AbortError' || code === 'ETIMEDOUT')) {
    return backendUnavailable('blob store', `did not answer ${operation} within ${ms} ms`, cause, details);
  }
  if (status === undefined && typeof code === 'string' && NETWORK_CODES.has(code)) {
    return backendUnavailable(
      'blob store',
      code === 'ECONNREFUSED' ? `refused the connection (${operation})` : `could not be reached (${operation}: ${code})`,
      cause,
      details,
    );
  }
  if (status === 507 || (name !== undefined && FULL_CODES.has(name))) return backendFull('blob store', cause, details);
  if ((status !== undefined && ((status >= 500 && status !== 501) || status === 429)) || (name !== undefined && BUSY_CODES.has(name))) {
    return backendUnavailable('blob store', `answered ${operation} with HTTP ${status ?? '?'} ${name ?? ''}`.trimEnd(), cause, details);
  }
  return new StoreError('STORE_INTERNAL', { cause, details });
}
