/**
 * What a verified S3 access key may do. A key reaches only its account's buckets (the handler gives
 * each request the account's view of the store); within the account its permission decides, as the
 * real store's token permissions do:
 *
 * | permission | buckets | objects |
 * |---|---|---|
 * | `admin_read_write` | list, create, delete | read, write |
 * | `admin_read_only` | list | read |
 * | `object_read_write` | list (only those it may use) | read, write, in its buckets |
 * | `object_read_only` | list (only those it may use) | read, in its buckets |
 *
 * "Its buckets" are the buckets the key names, or every bucket of the account when it names none.
 * A refusal is S3's `AccessDenied`, whether or not the bucket exists.
 */
import type { AccessKeyPermission } from '../../db/metadata-store.ts';
import { S3_ERRORS } from './s3-error.ts';

/** A usable key as the S3 API needs it. */
export interface S3AccessKey {
  secret: string;
  /**
   * The account whose buckets the key reaches. null reaches the buckets of no account: never a key
   * of the server's (AccessKeys adopts those first), only an S3 face run on a bare engine (tests, benches).
   */
  accountId: string | null;
  permission: AccessKeyPermission;
  /** The account's buckets the key is limited to, or null for all of them. */
  buckets: readonly string[] | null;
}

/** A key that may do everything in the account's buckets (`null`: the buckets of no account). */
export function adminKey(secret: string, accountId: string | null = null): S3AccessKey {
  return { secret, accountId, permission: 'admin_read_write', buckets: null };
}

/** What an operation does: to the account's bucket list, to a bucket itself, or to objects in a bucket. */
export type S3Access = 'list-buckets' | 'bucket-read' | 'bucket-write' | 'object-read' | 'object-write';

/** The access an operation needs, from its method and addressing (subresource writes count as bucket or object writes). */
export function accessOf(method: string, bucket: string | undefined, key: string | undefined, query: URLSearchParams): S3Access {
  const reads = method === 'GET' || method === 'HEAD';
  if (bucket === undefined) return 'list-buckets';
  if (key !== undefined) return reads ? 'object-read' : 'object-write';
  if (reads) return 'bucket-read';
  // DeleteObjects is a POST on the bucket that writes objects.
  return method === 'POST' && query.has('delete') ? 'object-write' : 'bucket-write';
}

/** Throws AccessDenied unless the key may do `access` in `bucket`. */
export function assertAllowed(key: S3AccessKey, access: S3Access, bucket: string | undefined): void {
  if (!allows(key, access, bucket)) throw S3_ERRORS.accessDenied();
}

/** Whether the key may see `bucket` at all (ListBuckets shows only those). */
export function mayUseBucket(key: S3AccessKey, bucket: string): boolean {
  return key.buckets === null || key.buckets.includes(bucket);
}

function allows(key: S3AccessKey, access: S3Access, bucket: string | undefined): boolean {
  const admin = key.permission === 'admin_read_write' || key.permission === 'admin_read_only';
  const writes = key.permission === 'admin_read_write' || key.permission === 'object_read_write';
  switch (access) {
    case 'list-buckets':
      return true;
    case 'bucket-write':
      return admin && writes;
    case 'bucket-read':
    case 'object-read':
      return bucket !== undefined && mayUseBucket(key, bucket);
    case 'object-write':
      return writes && bucket !== undefined && mayUseBucket(key, bucket);
  }
}
