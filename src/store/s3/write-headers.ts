/**
 * Request headers that change what a write means (ACLs, tagging, object lock, server-side
 * encryption) and that edgeport has no feature for. A client that asks for one is refused,
 * never ignored: an object the client believes is public, tagged, locked or encrypted with its
 * key must not be stored as a plain one. The refusal comes before the body is read, so nothing is
 * stored. A presigned URL carries `x-amz-*` headers in its query (the SDK presigner hoists them):
 * these checks see them, because the S3 handler applies them as headers first (presigned-headers.ts).
 *
 * Codes, per case, are what AWS answers for a bucket that cannot have the feature:
 * - ACLs: every edgeport bucket behaves as an S3 bucket with Object Ownership "bucket owner
 *   enforced" (the S3 default for new buckets): the canned ACLs `private` and
 *   `bucket-owner-full-control` change nothing and are accepted; any other ACL or grant is
 *   400 AccessControlListNotSupported (objects) / InvalidBucketAclWithObjectOwnership (CreateBucket).
 * - Object lock headers on a write: 400 InvalidRequest "Bucket is missing Object Lock Configuration";
 *   a bucket created with object lock enabled: 501 NotImplemented.
 * - Tagging and SSE-S3/SSE-KMS/DSSE on a write: 501 NotImplemented. SSE-C is honoured
 *   (sse-c-headers.ts), but in a browser form upload, where it is 501 too.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { S3_ERRORS, S3Error } from './s3-error.ts';

/**
 * The writes that take these headers: `object` is PutObject, CreateMultipartUpload and CopyObject;
 * `part` is UploadPart(Copy) and CompleteMultipartUpload (SSE-C only); `bucket` is CreateBucket.
 */
export type WriteKind = 'object' | 'part' | 'bucket';

const CANNED_ACLS = [
  'private',
  'public-read',
  'public-read-write',
  'authenticated-read',
  'aws-exec-read',
  'bucket-owner-read',
  'bucket-owner-full-control',
  'log-delivery-write',
];
/** Canned ACLs that grant nothing beyond the owner's full control: what every edgeport object has. */
const OWNER_ONLY_ACLS = ['private', 'bucket-owner-full-control'];
const GRANTS = ['x-amz-grant-read', 'x-amz-grant-write', 'x-amz-grant-read-acp', 'x-amz-grant-write-acp', 'x-amz-grant-full-control'];
const OBJECT_LOCK = ['x-amz-object-lock-mode', 'x-amz-object-lock-retain-until-date', 'x-amz-object-lock-legal-hold'];
export const SSE_HEADERS = [
  'x-amz-server-side-encryption',
  'x-amz-server-side-encryption-aws-kms-key-id',
  'x-amz-server-side-encryption-context',
  'x-amz-server-side-encryption-bucket-key-enabled',
];
const SSE_METHODS = ['AES256', 'aws:kms', 'aws:kms:dsse'];
const SSE_C = ['x-amz-server-side-encryption-customer-algorithm', 'x-amz-server-side-encryption-customer-key', 'x-amz-server-side-encryption-customer-key-md5'];

/** A header's value (repeated ones joined, as node joins them); undefined when absent. */
function valueOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function firstPresent(headers: IncomingHttpHeaders, names: readonly string[]): string | undefined {
  for (const name of names) if (headers[name] !== undefined) return name;
  return undefined;
}

/**
 * Throws the S3 error for the first header of `kind`'s write that edgeport cannot honour. SSE-C is
 * honoured (sse-c-headers.ts) except where `sseC` is false: a browser form (POST Object).
 */
export function refuseUnsupportedWriteHeaders(kind: WriteKind, headers: IncomingHttpHeaders, sseC = true): void {
  if (kind === 'part') return;
  const acl = valueOf(headers, 'x-amz-acl');
  if (acl !== undefined && !CANNED_ACLS.includes(acl)) {
    throw S3_ERRORS.invalidArgument(`x-amz-acl must be one of ${CANNED_ACLS.join(', ')}; edgeport accepts only ${OWNER_ONLY_ACLS.join(' and ')}.`);
  }
  const grant = firstPresent(headers, GRANTS);
  if ((acl !== undefined && !OWNER_ONLY_ACLS.includes(acl)) || grant !== undefined) {
    const asked = grant ?? `x-amz-acl: ${acl}`;
    if (kind === 'bucket') {
      throw new S3Error(
        'InvalidBucketAclWithObjectOwnership',
        400,
        `Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting ` +
          `(${asked}): edgeport buckets have no ACLs; leave out the ACL, or use private.`,
      );
    }
    throw new S3Error(
      'AccessControlListNotSupported',
      400,
      `The bucket does not allow ACLs (${asked}): edgeport objects are always private to their ` +
        `account; leave out the ACL, or use private or bucket-owner-full-control.`,
    );
  }
  if (kind === 'bucket') {
    const lock = valueOf(headers, 'x-amz-bucket-object-lock-enabled');
    if (lock !== undefined && lock.toLowerCase() !== 'false') throw S3_ERRORS.notImplemented('Object lock (x-amz-bucket-object-lock-enabled)');
    const ownership = valueOf(headers, 'x-amz-object-ownership');
    if (ownership !== undefined && ownership !== 'BucketOwnerEnforced') {
      throw S3_ERRORS.notImplemented(`x-amz-object-ownership ${ownership} (buckets are always BucketOwnerEnforced)`);
    }
    return;
  }
  const tagging = valueOf(headers, 'x-amz-tagging');
  if (tagging !== undefined && tagging !== '') throw S3_ERRORS.notImplemented('Object tagging (x-amz-tagging)');
  const lock = firstPresent(headers, OBJECT_LOCK);
  if (lock !== undefined) {
    throw S3_ERRORS.invalidRequest(
      `Bucket is missing Object Lock Configuration (${lock}): edgeport buckets cannot have object lock; leave out the x-amz-object-lock-* headers.`,
    );
  }
  const method = valueOf(headers, 'x-amz-server-side-encryption');
  if (method !== undefined && !SSE_METHODS.includes(method)) {
    throw S3_ERRORS.invalidArgument(`The encryption method specified is not supported: x-amz-server-side-encryption must be one of ${SSE_METHODS.join(', ')}.`);
  }
  const sse = firstPresent(headers, SSE_HEADERS);
  const customer = firstPresent(headers, SSE_C);
  if (sse !== undefined && customer !== undefined) {
    throw S3_ERRORS.invalidArgument(
      `Server Side Encryption with Customer provided key is incompatible with the encryption method specified (${sse} with ${customer}).`,
    );
  }
  if (sse !== undefined) throw S3_ERRORS.notImplemented(`Server-side encryption (${sse})`);
  if (customer !== undefined && !sseC)
    throw S3_ERRORS.notImplemented(`Server-side encryption with customer-provided keys in a browser form upload (${customer})`);
}
