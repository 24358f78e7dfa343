/**
 * The types of `edgeport/store` (entry.js), standalone so that a user's TypeScript reads them
 * without compiling edgeport's sources under its own settings. They mirror index.ts and
 * binding/types.ts; test/store/open-store-bucket.test.ts checks at typecheck that the
 * implementation satisfies them, and compiles a user's project against them.
 */

export type StorageClass = 'Standard' | 'InfrequentAccess';

export interface StoreHTTPMetadata {
  contentType?: string;
  contentLanguage?: string;
  contentDisposition?: string;
  contentEncoding?: string;
  cacheControl?: string;
  cacheExpiry?: Date;
}

export interface StoreChecksums {
  readonly md5?: ArrayBuffer;
  readonly sha1?: ArrayBuffer;
  readonly sha256?: ArrayBuffer;
  readonly sha384?: ArrayBuffer;
  readonly sha512?: ArrayBuffer;
  toJSON(): Record<string, string>;
}

export type StoreRange = { offset: number; length?: number } | { offset?: number; length: number } | { suffix: number };

export interface StoreConditional {
  etagMatches?: string;
  etagDoesNotMatch?: string;
  uploadedBefore?: Date;
  uploadedAfter?: Date;
  secondsGranularity?: boolean;
}

/** A customer's key for SSE-C: 64 lowercase hex characters, or 32 bytes. */
export type StoreSsecKey = ArrayBuffer | ArrayBufferView | string;

export interface StoreGetOptions {
  onlyIf?: StoreConditional | Headers;
  range?: StoreRange | Headers;
  /** The key an SSE-C object was stored with. */
  ssecKey?: StoreSsecKey;
}

export interface StorePutOptions {
  onlyIf?: StoreConditional | Headers;
  httpMetadata?: StoreHTTPMetadata | Headers;
  customMetadata?: Record<string, string>;
  md5?: ArrayBuffer | ArrayBufferView | string;
  sha1?: ArrayBuffer | ArrayBufferView | string;
  sha256?: ArrayBuffer | ArrayBufferView | string;
  sha384?: ArrayBuffer | ArrayBufferView | string;
  sha512?: ArrayBuffer | ArrayBufferView | string;
  storageClass?: StorageClass;
  /** Store the object encrypted with this customer's key (SSE-C). */
  ssecKey?: StoreSsecKey;
}

export interface StoreMultipartOptions {
  httpMetadata?: StoreHTTPMetadata | Headers;
  customMetadata?: Record<string, string>;
  storageClass?: StorageClass;
  /** Encrypt the parts and the object with this customer's key (SSE-C). */
  ssecKey?: StoreSsecKey;
}

export interface StoreUploadPartOptions {
  /** The upload's SSE-C key, when it was created with one. */
  ssecKey?: StoreSsecKey;
}

export interface StoreListOptions {
  limit?: number;
  prefix?: string;
  cursor?: string;
  delimiter?: string;
  startAfter?: string;
  include?: Array<'httpMetadata' | 'customMetadata'>;
}

export interface StoreUploadedPart {
  partNumber: number;
  etag: string;
}

export interface StoreObject {
  readonly key: string;
  readonly version: string;
  readonly size: number;
  readonly etag: string;
  readonly httpEtag: string;
  readonly uploaded: Date;
  /** Always present: `{}` for a list item whose kind was not in `include`. */
  readonly httpMetadata: StoreHTTPMetadata;
  readonly customMetadata: Record<string, string>;
  readonly range?: { offset: number; length: number } | undefined;
  readonly checksums: StoreChecksums;
  readonly storageClass: StorageClass;
  /** The MD5 (base64) of the SSE-C key the object is stored with; undefined without one. */
  readonly ssecKeyMd5?: string | undefined;
  writeHttpMetadata(headers: Headers): void;
}

export interface StoreObjectBody extends StoreObject {
  readonly body: ReadableStream<Uint8Array>;
  readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  text(): Promise<string>;
  json<T>(): Promise<T>;
  blob(): Promise<Blob>;
}

export interface StoreObjects {
  objects: StoreObject[];
  truncated: boolean;
  cursor?: string;
  delimitedPrefixes: string[];
}

export interface StoreMultipartUpload {
  readonly key: string;
  readonly uploadId: string;
  uploadPart(
    partNumber: number,
    value: ReadableStream | ArrayBuffer | ArrayBufferView | string | Blob,
    options?: StoreUploadPartOptions,
  ): Promise<StoreUploadedPart>;
  abort(): Promise<void>;
  complete(uploadedParts: StoreUploadedPart[]): Promise<StoreObject>;
}

/**
 * What put() stores. A ReadableStream must have a known length, as on the platform: here, in
 * Node.js, a byte stream (a Request's, Response's or Blob's body) or a get body; any other stream
 * is refused with `TypeError: Provided readable stream must have a known length (...)`.
 */
export type StorePutValue = ReadableStream | ArrayBuffer | ArrayBufferView | string | null | Blob;

/** An object's metadata (head, a failed `onlyIf`, put, list items). */
export declare class HeadResult implements StoreObject {
  protected constructor();
  readonly key: string;
  readonly version: string;
  readonly size: number;
  readonly etag: string;
  readonly httpEtag: string;
  readonly uploaded: Date;
  readonly httpMetadata: StoreHTTPMetadata;
  readonly customMetadata: Record<string, string>;
  readonly range: { offset: number; length: number } | undefined;
  readonly checksums: StoreChecksums;
  readonly storageClass: StorageClass;
  readonly ssecKeyMd5: string | undefined;
  writeHttpMetadata(headers: Headers): void;
}

/** An object with its body (get). */
export declare class GetResult extends HeadResult implements StoreObjectBody {
  readonly body: ReadableStream<Uint8Array>;
  readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  text(): Promise<string>;
  json<T>(): Promise<T>;
  blob(): Promise<Blob>;
}

/** The bucket binding, as a script receives it as `env.<binding>`. */
export declare class StoreBucket {
  protected constructor();
  head(key: string): Promise<StoreObject | null>;
  get(key: string, options?: StoreGetOptions | null): Promise<StoreObjectBody | StoreObject | null>;
  put(key: string, value: StorePutValue, options?: StorePutOptions | null): Promise<StoreObject | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options?: StoreListOptions | null): Promise<StoreObjects>;
  createMultipartUpload(key: string, options?: StoreMultipartOptions | null): Promise<StoreMultipartUpload>;
  resumeMultipartUpload(key: string, uploadId: string): StoreMultipartUpload;
}

export interface OpenStoreBucketOptions {
  /** The bucket's name (3-63 characters of a-z, 0-9 and '-'); created if it does not exist. */
  bucket: string;
  /** The data dir, locked while the bucket is open. Default: a new temporary directory, deleted by close(). */
  dataDir?: string;
  /** An account id (32 hex digits), or null for a bucket of no account. Default: the data dir's first account, else none. */
  account?: string | null;
  /** `YYYY-MM-DD`, as a script's `compatibility_date`. Default: today. */
  compatibilityDate?: string;
  /** As a script's `compatibility_flags`, e.g. `['store_list_honor_include']`. */
  compatibilityFlags?: string[];
}

/** A StoreBucket opened by openStoreBucket: the script API plus close(). */
export declare class LocalStoreBucket extends StoreBucket {
  /** The data dir the bucket lives in (absolute). */
  readonly dataDir: string;
  /** Closes the store and unlocks the data dir (deleting it when it was a temporary one). Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Opens `options.bucket` in this process; close() it when done. */
export declare function openStoreBucket(options: OpenStoreBucketOptions): Promise<LocalStoreBucket>;
