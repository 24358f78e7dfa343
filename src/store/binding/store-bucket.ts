/**
 * StoreBucket: the bucket binding a script receives as `env.<binding>` (docs/object-store.md). It converts
 * and validates arguments as the real runtime does, calls the engine, and shapes results and errors
 * the way scripts observe them on the platform.
 */
import type { BindingEngine } from './binding-engine.ts';
import { StoreError } from '../engine/errors.ts';
import type { PutOptions } from '../engine/types.ts';
import { scriptCall, wrongParameter } from './binding-errors.ts';
import { toExpectedChecksum } from './checksums.ts';
import { toConditional } from './conditional.ts';
import { toCustomMetadata, toHttpMetadata } from './http-metadata.ts';
import { toListOptions } from './list-options.ts';
import { assertBodyValue, cancelIfStream, toBodyInput, type StreamLengths } from './put-value.ts';
import { toRangeRequest } from './range.ts';
import { toSsecKey } from './ssec-key.ts';
import { GetResult, HeadResult } from './store-object.ts';
import { StoreMultipartUploadHandle } from './store-multipart-upload.ts';
import type { StoreGetOptions, StoreListOptions, StoreMultipartOptions, StoreObjects, StorePutOptions, StorePutValue } from './types.ts';

export interface StoreBucketOptions {
  /** The compatibility rule for list's `include` (see compat.ts). */
  listHonorsInclude: boolean;
  /** Who knows whether a stream put() or uploadPart() is given has a known length (put-value.ts): workerd for its bindings, else the stream's kind. */
  streamLengths?: StreamLengths;
}

export class StoreBucket {
  readonly #engine: BindingEngine;
  readonly #bucket: string;
  readonly #honorsInclude: boolean;
  readonly #streamLengths: StreamLengths;

  constructor(engine: BindingEngine, bucketName: string, options: StoreBucketOptions) {
    this.#engine = engine;
    this.#bucket = bucketName;
    this.#honorsInclude = options.listHonorsInclude;
    this.#streamLengths = options.streamLengths ?? 'stream-kind';
  }

  async head(key: string): Promise<HeadResult | null> {
    const name = String(key);
    const meta = await scriptCall('head', () => this.#engine.head(this.#bucket, name));
    return meta ? new HeadResult(meta, { offset: 0, length: meta.size }) : null;
  }

  async get(key: string, options?: StoreGetOptions | null): Promise<GetResult | HeadResult | null> {
    const name = String(key);
    const onlyIf = toConditional(options?.onlyIf, 'GetOptions');
    const range = toRangeRequest(options?.range);
    const ssecKey = toSsecKey(options?.ssecKey, 'GetOptions');
    const read = (withRange: boolean) =>
      this.#engine.get(this.#bucket, name, {
        ...(onlyIf ? { onlyIf } : {}),
        ...(range && withRange ? { range } : {}),
        ...(ssecKey !== undefined ? { ssecKey } : {}),
      });
    const result = await scriptCall('get', async () => {
      try {
        return await read(true);
      } catch (error) {
        // A Range *header* the object cannot satisfy means the whole object, never an error
        // (as on the platform); only a range object reports 10039.
        if (!(options?.range instanceof Headers) || !(error instanceof StoreError) || error.code !== 'STORE_INVALID_RANGE') throw error;
        return read(false);
      }
    });
    if (!result) return null;
    return result.body ? new GetResult(result.meta, result.range, result.body) : new HeadResult(result.meta, result.range);
  }

  async put(key: string, value: StorePutValue, options?: StorePutOptions | null): Promise<HeadResult | null> {
    const name = String(key);
    // Argument conversion checks the value before the options, as the runtime does.
    assertBodyValue(value, 'put', 'StoreBucket');
    let engineOptions: PutOptions;
    try {
      engineOptions = toPutOptions(options);
    } catch (error) {
      cancelIfStream(value);
      throw error;
    }
    const body = toBodyInput(value, this.#streamLengths);
    const meta = await scriptCall('put', () => this.#engine.put(this.#bucket, name, body, engineOptions));
    if (!meta) return null;
    // put() answers with the metadata that was sent, as the runtime does.
    return new HeadResult({ ...meta, httpMetadata: engineOptions.httpMetadata ?? {}, customMetadata: engineOptions.customMetadata ?? {} });
  }

  async delete(keys: string | string[]): Promise<void> {
    const list = Array.isArray(keys) ? keys.map(String) : [String(keys)];
    await scriptCall('delete', () => this.#engine.delete(this.#bucket, list));
  }

  async list(options?: StoreListOptions | null): Promise<StoreObjects> {
    const engineOptions = toListOptions(options, this.#honorsInclude);
    const result = await scriptCall('list', () => this.#engine.list(this.#bucket, engineOptions));
    const delimiter = engineOptions.delimiter ?? '';
    const listing: StoreObjects = {
      objects: result.objects.map((item) => new HeadResult(item)),
      truncated: result.truncated,
      // The binding's form: the prefix up to, not including, the delimiter (`a/b/c` yields `a`, then `a/b`).
      delimitedPrefixes: result.delimitedPrefixes.map((group) => group.slice(0, group.length - delimiter.length)),
    };
    if (result.truncated && result.cursor !== undefined) listing.cursor = result.cursor;
    return listing;
  }

  async createMultipartUpload(key: string, options?: StoreMultipartOptions | null): Promise<StoreMultipartUploadHandle> {
    const name = String(key);
    const httpMetadata = toHttpMetadata(options?.httpMetadata, 'MultipartOptions');
    const customMetadata = toCustomMetadata(options?.customMetadata, 'MultipartOptions');
    const ssecKey = toSsecKey(options?.ssecKey, 'MultipartOptions');
    const uploadId = await scriptCall('createMultipartUpload', () =>
      this.#engine.createMultipartUpload(this.#bucket, name, {
        ...(httpMetadata ? { httpMetadata } : {}),
        ...(customMetadata ? { customMetadata } : {}),
        ...(options?.storageClass !== undefined ? { storageClass: options.storageClass } : {}),
        ...(ssecKey !== undefined ? { ssecKey } : {}),
      }),
    );
    return new StoreMultipartUploadHandle(this.#engine, this.#bucket, name, uploadId, this.#streamLengths);
  }

  /** Synchronous and unchecked, as on the platform: the upload id is used as given. */
  resumeMultipartUpload(key: string, uploadId: string): StoreMultipartUploadHandle {
    if (typeof uploadId !== 'string') throw wrongParameter('resumeMultipartUpload', 'StoreBucket', 2, 'string');
    return new StoreMultipartUploadHandle(this.#engine, this.#bucket, String(key), uploadId, this.#streamLengths);
  }
}

function toPutOptions(options: StorePutOptions | null | undefined): PutOptions {
  if (options === undefined || options === null) return {};
  const out: PutOptions = {};
  const onlyIf = toConditional(options.onlyIf, 'PutOptions');
  if (onlyIf) out.onlyIf = onlyIf;
  const httpMetadata = toHttpMetadata(options.httpMetadata);
  if (httpMetadata) out.httpMetadata = httpMetadata;
  const customMetadata = toCustomMetadata(options.customMetadata);
  if (customMetadata) out.customMetadata = customMetadata;
  const expected = toExpectedChecksum(options);
  if (expected) out.expectedChecksum = expected;
  if (options.storageClass !== undefined) out.storageClass = options.storageClass;
  const ssecKey = toSsecKey(options.ssecKey, 'PutOptions');
  if (ssecKey !== undefined) out.ssecKey = ssecKey;
  return out;
}
