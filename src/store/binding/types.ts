/** The script-facing store types (docs/object-store.md), exported for TypeScript users. */
import type { StorageClass } from '../engine/types.ts';

export interface StoreHTTPMetadata {
  contentType?: string;
  contentLanguage?: string;
  contentDisposition?: string;
  contentEncoding?: string;
  cacheControl?: string;
  cacheExpiry?: Date;
}

export interface StoreChecksumsShape {
  readonly md5?: ArrayBuffer;
  readonly sha1?: ArrayBuffer;
  readonly sha256?: ArrayBuffer;
  readonly sha384?: ArrayBuffer;
  readonly sha512?: ArrayBuffer;
  toJSON(): Record<string, string>;
}
export type { StoreChecksums } from './checksums.ts';

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
  /** The key the object was stored with (SSE-C). */
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
  /** Store the object encrypted with this customer's key (SSE-C); every read then needs it. */
  ssecKey?: StoreSsecKey;
}

export interface StoreMultipartOptions {
  httpMetadata?: StoreHTTPMetadata | Headers;
  customMetadata?: Record<string, string>;
  storageClass?: StorageClass;
  /** Encrypt the parts, and the object, with this customer's key (SSE-C); every uploadPart then gives it. */
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
  readonly range?: { offset: number; length: number };
  readonly checksums: StoreChecksumsShape;
  readonly storageClass: StorageClass;
  /** The MD5 (base64) of the SSE-C key the object is stored with; undefined for an object stored without one. */
  readonly ssecKeyMd5?: string;
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

export type StorePutValue = ReadableStream | ArrayBuffer | ArrayBufferView | string | null | Blob;

export interface StoreBucket {
  head(key: string): Promise<StoreObject | null>;
  get(key: string, options?: StoreGetOptions): Promise<StoreObjectBody | StoreObject | null>;
  put(key: string, value: StorePutValue, options?: StorePutOptions): Promise<StoreObject | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options?: StoreListOptions): Promise<StoreObjects>;
  createMultipartUpload(key: string, options?: StoreMultipartOptions): Promise<StoreMultipartUpload>;
  resumeMultipartUpload(key: string, uploadId: string): StoreMultipartUpload;
}
