/**
 * The account quotas as the store engine reports them: a QuotaRefusal from the metadata store
 * (src/db/account-usage.ts) becomes STORE_QUOTA_EXCEEDED, whose message says what the account
 * stores, its quota and what the write would add.
 */
import { QuotaRefusal, type AccountUsage } from '../../db/account-usage.ts';
import { StoreError } from './errors.ts';

/** A body declared at least this large is checked against the quota before it is read (small ones only at commit). */
export const EARLY_QUOTA_CHECK_BYTES = 1024 * 1024;

/** The StoreError for a refusal; anything else is returned as it is. */
export function quotaError(error: unknown): unknown {
  if (!(error instanceof QuotaRefusal)) return error;
  const { quota, limit, used, adding } = error;
  const message =
    quota === 'maxObjects'
      ? `The account's object count quota is exceeded: it stores ${used} of its ${limit} objects; delete objects, or ask the operator to raise the quota ([quotas] max_objects_per_account, or edgeport accounts quota).`
      : `The account's storage quota is exceeded: it stores ${used} of its ${limit} bytes (objects and the parts of open multipart uploads), and this write adds ${adding}; ` +
        'delete objects or abort uploads, or ask the operator to raise the quota ([quotas] max_object_bytes_per_account, or edgeport accounts quota).';
  return new StoreError('STORE_QUOTA_EXCEEDED', { message, cause: error, details: { quota, limit, used, adding } });
}

/**
 * Before a large body is read: the refusal it would meet at commit (adding `bytes` and `count` to
 * what the account stores now), or null. The commit checks again, exactly, whatever this says.
 */
export function earlyRefusal(usage: AccountUsage, bytes: number, count: number): QuotaRefusal | null {
  const { maxObjectBytes, maxObjects } = usage.quotas;
  if (count > 0 && maxObjects > 0 && usage.objectCount + count > maxObjects) return new QuotaRefusal('maxObjects', maxObjects, usage.objectCount, count);
  if (bytes > 0 && maxObjectBytes > 0 && usage.objectBytes + bytes > maxObjectBytes)
    return new QuotaRefusal('maxObjectBytes', maxObjectBytes, usage.objectBytes, bytes);
  return null;
}
