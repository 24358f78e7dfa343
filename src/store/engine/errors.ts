/**
 * STORE_ERRORS: every failure the store engine can report, with the real store's v4 code, HTTP
 * status and message (docs/errors.md lists them). The binding formats them as
 * `<action>: <message> (<v4>)`; the S3 API as XML with `s3Code`.
 */
import { backendFaultOf } from '../../core/errors/backend-fault.ts';
import { EdgeportError } from '../../core/errors/edgeport-error.ts';

export type StoreErrorCode =
  | 'STORE_INTERNAL'
  | 'STORE_UNAVAILABLE'
  | 'STORE_STORAGE_FULL'
  | 'STORE_NO_SUCH_KEY'
  | 'STORE_NO_SUCH_BUCKET'
  | 'STORE_BUCKET_ALREADY_EXISTS'
  | 'STORE_BUCKET_NOT_EMPTY'
  | 'STORE_INVALID_BUCKET_NAME'
  | 'STORE_ENTITY_TOO_SMALL'
  | 'STORE_ENTITY_TOO_LARGE'
  | 'STORE_METADATA_TOO_LARGE'
  | 'STORE_INVALID_OBJECT_NAME'
  | 'STORE_INVALID_MAX_KEYS'
  | 'STORE_INVALID_CURSOR'
  | 'STORE_NO_SUCH_UPLOAD'
  | 'STORE_INVALID_PART'
  | 'STORE_INVALID_PART_ORDER'
  | 'STORE_TOO_MANY_KEYS'
  | 'STORE_PRECONDITION_FAILED'
  | 'STORE_BAD_DIGEST'
  | 'STORE_INVALID_RANGE'
  | 'STORE_INVALID_PART_NUMBER'
  | 'STORE_BAD_UPLOAD'
  | 'STORE_INVALID_STORAGE_CLASS'
  | 'STORE_INCOMPLETE_BODY'
  | 'STORE_INVALID_CORS'
  | 'STORE_INVALID_LIFECYCLE'
  | 'STORE_QUOTA_EXCEEDED'
  | 'STORE_SSEC_KEY_REQUIRED'
  | 'STORE_SSEC_KEY_MISMATCH'
  | 'STORE_SSEC_NOT_ENCRYPTED';

export interface StoreErrorEntry {
  kind: 'user' | 'system';
  /** The real store's v4 code, shown to scripts in brackets. */
  v4: number;
  status: number;
  s3Code: string;
  message: string;
}

export const STORE_ERRORS: Record<StoreErrorCode, StoreErrorEntry> = {
  STORE_INTERNAL: { kind: 'system', v4: 10001, status: 500, s3Code: 'InternalError', message: 'We encountered an internal error. Please try again.' },
  // Backend faults (core/errors/backend-fault.ts): 503, which AWS SDKs and botocore retry (they do not retry a 507).
  STORE_UNAVAILABLE: {
    kind: 'system',
    v4: 10043,
    status: 503,
    s3Code: 'ServiceUnavailable',
    message: 'The object store is temporarily unavailable: <the database | blob store | disk ...>. Please try again.',
  },
  STORE_STORAGE_FULL: {
    kind: 'system',
    v4: 10043,
    status: 503,
    s3Code: 'InsufficientStorage',
    message: 'The object store is out of space: <the disk | blob store> is full. Writes are refused until space is freed; deletes still work.',
  },
  STORE_NO_SUCH_KEY: { kind: 'user', v4: 10007, status: 404, s3Code: 'NoSuchKey', message: 'The specified key does not exist.' },
  STORE_NO_SUCH_BUCKET: { kind: 'user', v4: 10006, status: 404, s3Code: 'NoSuchBucket', message: 'The specified bucket does not exist.' },
  STORE_BUCKET_ALREADY_EXISTS: {
    kind: 'user',
    v4: 10004,
    status: 409,
    s3Code: 'BucketAlreadyOwnedByYou',
    message: 'The bucket you tried to create already exists, and you own it.',
  },
  STORE_BUCKET_NOT_EMPTY: { kind: 'user', v4: 10008, status: 409, s3Code: 'BucketNotEmpty', message: 'The bucket you tried to delete is not empty.' },
  STORE_INVALID_BUCKET_NAME: { kind: 'user', v4: 10005, status: 400, s3Code: 'InvalidBucketName', message: 'The specified bucket name is not valid.' },
  STORE_ENTITY_TOO_SMALL: {
    kind: 'user',
    v4: 10011,
    status: 400,
    s3Code: 'EntityTooSmall',
    message: 'Your proposed upload is smaller than the minimum allowed object size.',
  },
  STORE_ENTITY_TOO_LARGE: {
    kind: 'user',
    v4: 100100,
    status: 400,
    s3Code: 'EntityTooLarge',
    message: 'Your proposed upload exceeds the maximum allowed object size.',
  },
  STORE_METADATA_TOO_LARGE: {
    kind: 'user',
    v4: 10012,
    status: 400,
    s3Code: 'MetadataTooLarge',
    message: 'Your metadata headers exceed the maximum allowed metadata size.',
  },
  STORE_INVALID_OBJECT_NAME: { kind: 'user', v4: 10020, status: 400, s3Code: 'InvalidObjectName', message: 'The specified object name is not valid.' },
  STORE_INVALID_MAX_KEYS: { kind: 'user', v4: 10022, status: 400, s3Code: 'InvalidArgument', message: 'MaxKeys params must be positive integer <= 1000.' },
  STORE_INVALID_CURSOR: {
    kind: 'user',
    v4: 10029,
    status: 400,
    s3Code: 'InvalidArgument',
    message: 'The provided cursor is not valid: pass the cursor of a previous list call unchanged.',
  },
  STORE_NO_SUCH_UPLOAD: { kind: 'user', v4: 10024, status: 404, s3Code: 'NoSuchUpload', message: 'The specified multipart upload does not exist.' },
  STORE_INVALID_PART: { kind: 'user', v4: 10025, status: 400, s3Code: 'InvalidPart', message: 'One or more of the specified parts could not be found.' },
  STORE_INVALID_PART_ORDER: {
    kind: 'user',
    v4: 10025,
    status: 400,
    s3Code: 'InvalidPartOrder',
    message: 'The list of parts was not in ascending order. The parts list must be specified in order by part number.',
  },
  STORE_TOO_MANY_KEYS: {
    kind: 'user',
    v4: 10027,
    status: 400,
    s3Code: 'InvalidArgument',
    message: 'The number of keys in the request must be between 1 and 1000 inclusive.',
  },
  STORE_PRECONDITION_FAILED: {
    kind: 'user',
    v4: 10031,
    status: 412,
    s3Code: 'PreconditionFailed',
    message: 'At least one of the pre-conditions you specified did not hold.',
  },
  STORE_BAD_DIGEST: { kind: 'user', v4: 10037, status: 400, s3Code: 'BadDigest', message: 'The checksum you specified did not match what we received.' },
  STORE_INVALID_RANGE: { kind: 'user', v4: 10039, status: 416, s3Code: 'InvalidRange', message: 'The requested range is not satisfiable' },
  STORE_INVALID_PART_NUMBER: { kind: 'user', v4: 10039, status: 416, s3Code: 'InvalidPartNumber', message: 'The requested partnumber is not satisfiable' },
  STORE_BAD_UPLOAD: { kind: 'user', v4: 10048, status: 400, s3Code: 'InvalidPart', message: 'There was a problem with the multipart upload.' },
  STORE_INVALID_STORAGE_CLASS: {
    kind: 'user',
    v4: 10040,
    status: 400,
    s3Code: 'InvalidStorageClass',
    message: 'The storage class you specified is not valid: use Standard or InfrequentAccess.',
  },
  STORE_INCOMPLETE_BODY: {
    kind: 'user',
    v4: 10010,
    status: 400,
    s3Code: 'IncompleteBody',
    message: 'You did not provide the number of bytes specified by the Content-Length HTTP header.',
  },
  STORE_INVALID_CORS: { kind: 'user', v4: 10040, status: 400, s3Code: 'InvalidRequest', message: 'The CORS configuration is not valid: <what to fix>' },
  STORE_INVALID_LIFECYCLE: {
    kind: 'user',
    v4: 10040,
    status: 400,
    s3Code: 'InvalidArgument',
    message: 'The lifecycle configuration is not valid: <what to fix>',
  },
  // The real store has no storage quota: 10009 is its code for an account limit (too many buckets);
  // S3 code and status are Ceph RGW's for a user or bucket quota (the AWS SDK names the error by the code).
  STORE_QUOTA_EXCEEDED: {
    kind: 'user',
    v4: 10009,
    status: 403,
    s3Code: 'QuotaExceeded',
    message:
      "The account's storage quota is exceeded: it stores <n> of its <quota> bytes (or objects), and this write adds <n>; delete objects or abort uploads, or ask the operator to raise the quota",
  },
  // SSE-C (sse-c.ts): the platform publishes no codes for these; its codes for a bad argument and
  // for access denied. S3 codes and statuses are S3's (a wrong key is 403 AccessDenied there).
  STORE_SSEC_KEY_REQUIRED: {
    kind: 'user',
    v4: 10040,
    status: 400,
    s3Code: 'InvalidRequest',
    message: 'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.',
  },
  STORE_SSEC_KEY_MISMATCH: {
    kind: 'user',
    v4: 10003,
    status: 403,
    s3Code: 'AccessDenied',
    message: 'The SSE-C key provided does not match the key the object (or upload) was stored with.',
  },
  STORE_SSEC_NOT_ENCRYPTED: {
    kind: 'user',
    v4: 10040,
    status: 400,
    s3Code: 'InvalidRequest',
    message: 'The encryption parameters are not applicable to this object: it was not stored with a customer-provided key (SSE-C).',
  },
};

export class StoreError extends EdgeportError<StoreErrorCode> {
  readonly v4: number;
  readonly status: number;
  constructor(code: StoreErrorCode, options?: { message?: string; cause?: unknown; details?: Record<string, unknown> }) {
    const entry = STORE_ERRORS[code];
    super(code, entry.kind, options?.message ?? entry.message, options);
    this.v4 = entry.v4;
    this.status = entry.status;
  }
}

/**
 * A backend fault (core/errors/backend-fault.ts), or an error that is one, as the store reports it:
 * STORE_UNAVAILABLE or STORE_STORAGE_FULL naming the backend, with the seconds to wait in
 * `details.retryAfterS`; undefined for anything else.
 */
export function storeFaultOf(error: unknown): StoreError | undefined {
  if (error instanceof StoreError && (error.code === 'STORE_UNAVAILABLE' || error.code === 'STORE_STORAGE_FULL')) return error;
  const fault = backendFaultOf(error);
  if (fault === undefined) return undefined;
  const details = { backend: fault.backend, retryAfterS: fault.retryAfterS };
  return fault.code === 'BACKEND_FULL'
    ? new StoreError('STORE_STORAGE_FULL', {
        message: `The object store is out of space: ${lowerFirst(fault.message)}. Writes are refused until space is freed; deletes still work.`,
        cause: fault,
        details,
      })
    : new StoreError('STORE_UNAVAILABLE', {
        message: `The object store is temporarily unavailable: ${lowerFirst(fault.message)}. Please try again.`,
        cause: fault,
        details,
      });
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** Limits of the real store (docs/object-store.md). */
export const STORE_LIMITS = {
  maxKeyBytes: 1024,
  maxListLimit: 1000,
  maxDeleteKeys: 1000,
  maxCustomMetadataBytes: 8192,
  maxPutBytes: 5 * 1024 ** 3 - 5 * 1024 ** 2,
  maxPartBytes: 5 * 1024 ** 3 - 5 * 1024 ** 2,
  minPartBytes: 5 * 1024 ** 2,
  maxPartNumber: 10_000,
  multipartLifetimeMs: 7 * 24 * 3600 * 1000,
  /** How long a finished upload is remembered: a completion sent again within it is answered the same. */
  completedUploadMemoryMs: 24 * 3600 * 1000,
} as const;
