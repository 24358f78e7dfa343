/** StoreMultipartUpload: a handle on one upload; resuming one does no I/O. */
import type { BindingEngine } from './binding-engine.ts';
import { scriptCall } from './binding-errors.ts';
import { assertBodyValue, toBodyInput, type StreamLengths } from './put-value.ts';
import { HeadResult } from './store-object.ts';
import { toSsecKey } from './ssec-key.ts';
import type { StoreUploadPartOptions, StoreUploadedPart } from './types.ts';

/** The runtime takes part numbers as a C++ `int` (ToInt32: 1.5 is 1, "2" is 2), then checks 1..10000. */
function checkPartNumber(partNumber: unknown): number {
  const n = Number(partNumber) | 0;
  if (n < 1 || n > 10_000) throw new TypeError(`Part number must be between 1 and 10000 (inclusive). Actual value was: ${n}`);
  return n;
}

export class StoreMultipartUploadHandle {
  readonly key: string;
  readonly uploadId: string;
  readonly #engine: BindingEngine;
  readonly #bucket: string;
  readonly #streamLengths: StreamLengths;

  constructor(engine: BindingEngine, bucket: string, key: string, uploadId: string, streamLengths: StreamLengths) {
    this.#engine = engine;
    this.#bucket = bucket;
    this.#streamLengths = streamLengths;
    this.key = key;
    this.uploadId = uploadId;
  }

  async uploadPart(
    partNumber: number,
    value: ReadableStream | ArrayBuffer | ArrayBufferView | string | Blob,
    options?: StoreUploadPartOptions | null,
  ): Promise<StoreUploadedPart> {
    assertBodyValue(value, 'uploadPart', 'StoreMultipartUpload');
    const n = checkPartNumber(partNumber);
    const ssecKey = toSsecKey(options?.ssecKey, 'UploadPartOptions');
    const body = toBodyInput(value, this.#streamLengths);
    // Opaque etags, as the runtime's: a part uploaded again gets a new one, even with the same bytes.
    return scriptCall('uploadPart', () =>
      this.#engine.uploadPart(this.#bucket, this.key, this.uploadId, n, body, { opaqueEtag: true, ...(ssecKey !== undefined ? { ssecKey } : {}) }),
    );
  }

  async abort(): Promise<void> {
    await scriptCall('abortMultipartUpload', () => this.#engine.abortMultipartUpload(this.#bucket, this.key, this.uploadId));
  }

  async complete(uploadedParts: StoreUploadedPart[]): Promise<HeadResult> {
    if (!Array.isArray(uploadedParts)) throw new TypeError("Failed to execute 'complete' on 'StoreMultipartUpload': parameter 1 is not of type 'Array'.");
    const parts = uploadedParts.map((part) => ({ partNumber: checkPartNumber(part?.partNumber), etag: String(part?.etag) }));
    const meta = await scriptCall('completeMultipartUpload', () => this.#engine.completeMultipartUpload(this.#bucket, this.key, this.uploadId, parts));
    return new HeadResult(meta);
  }
}
