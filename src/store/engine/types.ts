/**
 * The store engine's data types. The engine knows nothing of HTTP or of scripts: the bucket
 * binding and the S3 API convert their inputs into these and back.
 */

export type StorageClass = 'Standard' | 'InfrequentAccess';
export const STORAGE_CLASSES: readonly StorageClass[] = ['Standard', 'InfrequentAccess'];

/** HTTP metadata as stored. `cacheExpiry` is epoch milliseconds. Only fields that were set exist. */
export interface HttpMetadata {
  contentType?: string;
  contentLanguage?: string;
  contentDisposition?: string;
  contentEncoding?: string;
  cacheControl?: string;
  cacheExpiry?: number;
}

export type ChecksumAlgorithm = 'md5' | 'sha1' | 'sha256' | 'sha384' | 'sha512';
export const CHECKSUM_ALGORITHMS: readonly ChecksumAlgorithm[] = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'];

/**
 * CRCs the S3 API verifies (x-amz-checksum-crc32, -crc32c, -crc64nvme) and keeps beside the
 * binding's checksums, so a GetObject can return them; scripts never see them (StoreChecksums).
 */
export type CrcAlgorithm = 'crc32' | 'crc32c' | 'crc64nvme';

/** Algorithms a multipart upload can keep part checksums in (S3's x-amz-checksum-algorithm on CreateMultipartUpload). */
export type UploadChecksumAlgorithm = 'crc32' | 'crc32c' | 'crc64nvme' | 'sha1' | 'sha256';

/**
 * How a multipart object's checksum is made of its parts': COMPOSITE, the algorithm over the parts'
 * checksums then `-<parts>`; FULL_OBJECT (CRCs only), the CRC of all the object's bytes.
 */
export type ChecksumType = 'COMPOSITE' | 'FULL_OBJECT';

/**
 * Stored checksums, lowercase hex. A multipart object's COMPOSITE checksum is `<hex>-<parts>`: the
 * digest of its parts' digests, not of its bytes (the binding never shows it).
 */
export type Checksums = Partial<Record<ChecksumAlgorithm | CrcAlgorithm, string>>;

/**
 * How an object (or a multipart upload) encrypted with a customer's key (SSE-C, sse-c.ts) is kept:
 * the key's MD5 (base64), the only part faces show; and, inside the engine, the salt and the
 * salted HMAC a key sent later is checked against. The key itself is never stored.
 */
export interface SseCInfo {
  keyMd5: string;
  salt?: string;
  check?: string;
}

/** Everything known about one stored object (one upload of a key). */
export interface ObjectMeta {
  key: string;
  /** Random, unique per upload of the key. */
  version: string;
  size: number;
  /** MD5 hex for single uploads; `<md5 of part md5s>-<parts>` for multipart ones. */
  etag: string;
  /** Epoch milliseconds. */
  uploaded: number;
  httpMetadata: HttpMetadata;
  customMetadata: Record<string, string>;
  checksums: Checksums;
  storageClass: StorageClass;
  /** Present when the object is stored encrypted with a customer's key (SSE-C). */
  ssec?: SseCInfo;
}

/** One element of an If-Match / If-None-Match list (RFC 7232 §3.1/§3.2). */
export type EtagMatcher = { type: 'wildcard' } | { type: 'strong'; value: string } | { type: 'weak'; value: string };

/** A parsed precondition. Dates are epoch ms. */
export interface Conditional {
  etagMatches?: EtagMatcher[];
  etagDoesNotMatch?: EtagMatcher[];
  uploadedBefore?: number;
  uploadedAfter?: number;
  /** Compare dates truncated to whole seconds (always true for the Headers form). */
  secondsGranularity?: boolean;
  /** The object's size must be exactly this (S3's x-amz-if-match-size on deletes). */
  sizeIs?: number;
  /** Its upload time, in whole seconds, must be this (epoch ms; S3's x-amz-if-match-last-modified-time on deletes). */
  uploadedAt?: number;
  /** Its version must be this: the object found due, not one written since (lifecycle deletions). */
  versionIs?: string;
}

/** What a conditional delete did (StoreEngine.deleteIf). */
export type DeleteOutcome = 'deleted' | 'missing' | 'precondition-failed';

/** A requested range, already validated for shape (non-negative integers, suffix alone). */
export type RangeRequest = { offset?: number; length?: number } | { suffix: number };

/** The range actually served. */
export interface ServedRange {
  offset: number;
  length: number;
}

/** Where an object's bytes live; used to stream them, or to hand a file straight to a socket. */
export type BodySegment =
  | { kind: 'inline'; bytes: Uint8Array }
  | { kind: 'blob'; blobId: string; offset: number; length: number }
  /** Bytes made as they are read (an SSE-C object's, decrypted): never sent straight from a file. */
  | { kind: 'stream'; length: number; read(): AsyncIterable<Uint8Array> };

/**
 * A body handed to put/uploadPart: bytes already in memory, or a stream of known or unknown length.
 * `native` is a script's own stream behind `stream`, for an engine in another process to send as
 * it is: the runtime that made it may know its length where JavaScript cannot (store-client.ts).
 */
export type BodyInput = Uint8Array | { stream: AsyncIterable<Uint8Array>; length?: number; native?: ReadableStream<Uint8Array> };

export interface PutOptions {
  httpMetadata?: HttpMetadata;
  customMetadata?: Record<string, string>;
  /** At most one expected checksum (validated by the caller), lowercase hex. */
  expectedChecksum?: { algorithm: ChecksumAlgorithm; hex: string };
  /**
   * Checksums the caller verified while the body streamed (the S3 API's x-amz-checksum-*), read
   * once the body has ended and stored with the object.
   */
  verifiedChecksums?: () => Checksums;
  storageClass?: StorageClass;
  onlyIf?: Conditional;
  /** Store the body encrypted with this customer's key (SSE-C): 64 lowercase hex characters. */
  ssecKey?: string;
}

export interface GetOptions {
  onlyIf?: Conditional;
  /** The customer's key an SSE-C object was stored with (required for one, refused for any other object). */
  ssecKey?: string;
  range?: RangeRequest;
  /**
   * Serve one part of a multipart object (1-based; S3's GetObject `partNumber`). Part 1 of any
   * other object is all of it. A part beyond the last is STORE_INVALID_PART_NUMBER, its details
   * naming the part asked for (`partNumberRequested`) and how many there are (`actualPartCount`).
   */
  part?: number;
}

/** Result of a get: `body` is absent when the precondition failed. */
export interface GetResult {
  meta: ObjectMeta;
  range: ServedRange;
  body?: ObjectBody;
  /** How many parts a multipart object has; absent for any other object. */
  partsCount?: number;
  /** A multipart object's parts, in order: each one's size and, when its upload kept one, checksum (lowercase hex, in the algorithm of the object's COMPOSITE or FULL_OBJECT checksum). */
  parts?: ReadonlyArray<{ size: number; checksum?: string }>;
}

/** An object's body: the segments that make up the served range, and a way to stream them. */
export interface ObjectBody {
  readonly length: number;
  readonly segments: readonly BodySegment[];
  /** Streams the bytes. Call at most once, and not with `webStream`. */
  stream(): AsyncIterable<Uint8Array>;
  /**
   * The bytes as a web stream the runtime already has (a remote engine's HTTP response body), for
   * a body that has one: a script is handed it as it is, so its runtime streams it natively (and
   * `new Response(object.body)` knows its length). Call at most once, and not with `stream`.
   */
  webStream?(): ReadableStream<Uint8Array>;
  /** Releases file handles if the body is never read. */
  discard(): void;
}

export interface ListOptions {
  prefix?: string;
  delimiter?: string;
  cursor?: string;
  startAfter?: string;
  /** 1..1000, default 1000. */
  limit?: number;
  /** Which metadata to fill in on each item; absent kinds are left undefined. */
  include?: { httpMetadata: boolean; customMetadata: boolean };
}

/** A list item: metadata kinds not requested are undefined. */
export type ListedObject = Omit<ObjectMeta, 'httpMetadata' | 'customMetadata'> & {
  httpMetadata: HttpMetadata | undefined;
  customMetadata: Record<string, string> | undefined;
};

export interface ListResult {
  objects: ListedObject[];
  delimitedPrefixes: string[];
  truncated: boolean;
  /** Present only when truncated. */
  cursor?: string;
}

export interface MultipartOptions {
  httpMetadata?: HttpMetadata;
  customMetadata?: Record<string, string>;
  storageClass?: StorageClass;
  /** Keep every part's checksum in this algorithm and give the object a checksum made of them. */
  checksumAlgorithm?: UploadChecksumAlgorithm;
  /** Which (default COMPOSITE; FULL_OBJECT for CRCs only). */
  checksumType?: ChecksumType;
  /** Encrypt the parts, and the object, with this customer's key (SSE-C); every part must then give it. */
  ssecKey?: string;
}

export interface UploadedPart {
  partNumber: number;
  etag: string;
  /** Checksums the client names for the part at completion (lowercase hex); checked when kept. */
  checksums?: Checksums;
}

export interface CompleteOptions {
  /** Refused with STORE_PRECONDITION_FAILED (the upload stays active) when the key's current object fails it. */
  onlyIf?: Conditional;
  /**
   * The whole object's checksum the client states, in the upload's own algorithm (lowercase hex,
   * and the part count when stated): a different COMPOSITE checksum is STORE_BAD_DIGEST, nothing completed.
   */
  expectedChecksum?: { algorithm: UploadChecksumAlgorithm; hex: string; parts?: number };
  /**
   * The same completion sent again after it succeeded answers the object it made, while that is
   * still the key's current one (S3 clients retry a completion whose answer was lost). Without it
   * (the binding, as the real one), a completed upload is STORE_NO_SUCH_UPLOAD.
   */
  answerRepeat?: boolean;
  /** The upload's SSE-C key, when the caller gives it (S3 may): checked. */
  ssecKey?: string;
  /**
   * S3's rule: an upload created with an SSE-C key and a checksum algorithm completes only with
   * its key; without one it is STORE_SSEC_KEY_REQUIRED and nothing is completed. Uploads without
   * a checksum algorithm (and every upload, without this option: the binding) complete without it.
   */
  ssecKeyWithChecksums?: boolean;
}

export interface HeadOptions {
  /** Check this SSE-C key against an encrypted object (S3's HeadObject); refused for an object not encrypted. */
  ssecKey?: string;
}

export interface UploadPartOptions {
  /** Checksums the caller verified while the body streamed, read once it has ended (as PutOptions). */
  verifiedChecksums?: () => Checksums;
  /**
   * Answer the part's opaque etag, unique to this upload of the part (the binding's), instead of
   * the MD5 of its bytes (S3's). A completion names a part by either; an opaque etag of a part
   * uploaded again no longer names it, even when the bytes are the same.
   */
  opaqueEtag?: boolean;
  /** The upload's SSE-C key (required for an upload created with one, refused for any other). */
  ssecKey?: string;
}

/** An in-progress multipart upload, for listing (S3 ListMultipartUploads). */
export interface UploadInfo {
  uploadId: string;
  key: string;
  initiated: number;
  storageClass: StorageClass;
}

/** A part of an in-progress upload, for listing (S3 ListParts). */
export interface PartInfo {
  partNumber: number;
  etag: string;
  size: number;
  uploaded: number;
  /** In the upload's checksum algorithm, lowercase hex, when it has one. */
  checksum?: string;
}

export interface BucketInfo {
  name: string;
  created: number;
  storageClass: StorageClass;
}

/** What a bucket holds (R2's storage metrics): counted over at most `BUCKET_USAGE_MAX_ROWS` objects and uploads. */
export interface BucketUsage {
  objectCount: number;
  /** Bytes of the objects' bodies. */
  payloadSize: number;
  /** Bytes of the objects' HTTP and custom metadata, as stored (JSON). */
  metadataSize: number;
  /** Multipart uploads in progress. */
  uploadCount: number;
  /** false when the bucket holds more than the rows counted: the figures are then lower bounds. */
  complete: boolean;
}

/** A usage count reads at most this many rows (of objects, and of uploads): one read, bounded in time. */
export const BUCKET_USAGE_MAX_ROWS = 1_000_000;
