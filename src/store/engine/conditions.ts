/**
 * Evaluates a precondition against the current object, as the real store does:
 * If-Match strong, If-None-Match weak, both date tests
 * strict, a passing etag test overriding its date test (RFC 7232 §6).
 */
import type { Conditional, EtagMatcher, ObjectMeta } from './types.ts';

function matchesStrong(list: readonly EtagMatcher[], etag: string): boolean {
  return list.some((m) => m.type === 'wildcard' || (m.type === 'strong' && m.value === etag));
}

function matchesWeak(list: readonly EtagMatcher[], etag: string): boolean {
  return list.some((m) => m.type === 'wildcard' || m.value === etag);
}

/** True when the operation may proceed. `current` is null when the key does not exist. */
export function evaluateConditional(cond: Conditional | undefined, current: ObjectMeta | null): boolean {
  if (!cond) return true;
  if (current === null) {
    return (
      cond.etagMatches === undefined &&
      cond.uploadedAfter === undefined &&
      cond.sizeIs === undefined &&
      cond.uploadedAt === undefined &&
      cond.versionIs === undefined
    );
  }
  if (cond.sizeIs !== undefined && current.size !== cond.sizeIs) return false;
  if (cond.uploadedAt !== undefined && Math.floor(current.uploaded / 1000) !== Math.floor(cond.uploadedAt / 1000)) return false;
  if (cond.versionIs !== undefined && current.version !== cond.versionIs) return false;
  const truncate = (ms: number) => (cond.secondsGranularity ? Math.floor(ms / 1000) * 1000 : ms);
  const uploaded = truncate(current.uploaded);
  const ifMatch = cond.etagMatches === undefined || matchesStrong(cond.etagMatches, current.etag);
  const ifNoneMatch = cond.etagDoesNotMatch === undefined || !matchesWeak(cond.etagDoesNotMatch, current.etag);
  const ifModifiedSince = cond.uploadedAfter === undefined || truncate(cond.uploadedAfter) < uploaded || (cond.etagDoesNotMatch !== undefined && ifNoneMatch);
  const ifUnmodifiedSince = cond.uploadedBefore === undefined || uploaded < truncate(cond.uploadedBefore) || (cond.etagMatches !== undefined && ifMatch);
  return ifMatch && ifNoneMatch && ifModifiedSince && ifUnmodifiedSince;
}
