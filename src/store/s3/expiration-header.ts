/**
 * S3's `x-amz-expiration` on the answers about one object (PutObject, CopyObject,
 * CompleteMultipartUpload, GetObject, HeadObject): when the bucket's lifecycle rules expire it, and
 * by which rule, as `expiry-date="<HTTP date>", rule-id="<ID>"`.
 */
import type { ObjectMeta } from '../engine/types.ts';
import type { S3Context } from './context.ts';

/** A rule ID as it may stand between the header's quotes: printable ASCII, `"`, `\` and `%` escaped as in a URL. */
function quotable(id: string): string {
  return id.replace(/[^\x20-\x7e]|["\\%]/gu, (c) => encodeURIComponent(c));
}

/**
 * The header for the object, or nothing when no enabled rule expires it. Never rejects: when the
 * rules cannot be read the answer goes without it (an object's body may already be open).
 */
export async function expirationHeader(ctx: S3Context, meta: ObjectMeta): Promise<Record<string, string>> {
  const expiry = await ctx.engine.expirationOf(ctx.bucket!, meta.key, meta.uploaded).catch(() => undefined);
  if (expiry === undefined) return {};
  return { 'x-amz-expiration': `expiry-date="${new Date(expiry.at).toUTCString()}", rule-id="${quotable(expiry.ruleId)}"` };
}
