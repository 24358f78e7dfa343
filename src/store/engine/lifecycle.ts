/**
 * Bucket lifecycle rules: what the store does by itself to a bucket's objects and multipart uploads
 * as they age. One model for the two faces that set them, S3's LifecycleConfiguration (XML, Days
 * and Dates) and the platform's R2 lifecycle rules (JSON, ages in seconds): each face converts its
 * shape to this and back. The sweeper (lifecycle-sweeper.ts) applies them.
 */
import { StoreError } from './errors.ts';
import type { StorageClass } from './types.ts';

/** When an action becomes due for an object: an age since its upload, or a date for every object. */
export type LifecycleCondition = { afterSeconds: number } | { date: number };

export interface LifecycleRule {
  /** Unique among the bucket's rules (S3's ID, R2's id). */
  id: string;
  /** A disabled rule is kept but applies to nothing. */
  enabled: boolean;
  /** Objects and uploads whose key starts with this ('' for all). */
  prefix: string;
  /** Delete the objects once due. */
  expiration?: LifecycleCondition;
  /** Move the objects to InfrequentAccess once due. */
  transition?: LifecycleCondition;
  /** Abort multipart uploads this long after they were created. */
  abortUploadsAfterSeconds?: number;
  /** Set when S3's older form gave the prefix (a rule-level `Prefix`, no `Filter`): read back the same way. */
  prefixAtRule?: boolean;
}

export const LIFECYCLE_LIMITS = {
  /** S3's limit of rules per configuration. */
  maxRules: 1000,
  maxIdLength: 255,
  /** A prefix is at most a key long. */
  maxPrefixBytes: 1024,
  /** About 2.7 million years: ages are whole seconds, and a date lies within the year 275760. */
  maxAgeSeconds: 2 ** 46,
};

const DAY_SECONDS = 86_400;
const DAY_MS = DAY_SECONDS * 1000;

function invalid(message: string): StoreError {
  return new StoreError('STORE_INVALID_LIFECYCLE', { message: `The lifecycle configuration is not valid: ${message}` });
}

function assertCondition(rule: LifecycleRule, name: string, condition: LifecycleCondition): void {
  if ('afterSeconds' in condition) {
    const age = condition.afterSeconds;
    if (!Number.isInteger(age) || age < 1 || age > LIFECYCLE_LIMITS.maxAgeSeconds) {
      throw invalid(`rule ${JSON.stringify(rule.id)}: the ${name} age must be a whole number of seconds (days) of at least 1, not ${age}.`);
    }
  } else if (!Number.isFinite(condition.date) || Number.isNaN(new Date(condition.date).getTime())) {
    throw invalid(`rule ${JSON.stringify(rule.id)}: the ${name} date is not a date.`);
  }
}

/** Throws STORE_INVALID_LIFECYCLE, naming the first problem and its fix, unless the rules can be kept. */
export function assertLifecycleRules(rules: readonly LifecycleRule[]): void {
  if (rules.length > LIFECYCLE_LIMITS.maxRules) throw invalid(`at most ${LIFECYCLE_LIMITS.maxRules} rules, not ${rules.length}.`);
  const ids = new Set<string>();
  for (const rule of rules) {
    if (rule.id === '' || rule.id.length > LIFECYCLE_LIMITS.maxIdLength) {
      throw invalid(`a rule's id must be 1 to ${LIFECYCLE_LIMITS.maxIdLength} characters, not ${rule.id.length}.`);
    }
    if (ids.has(rule.id)) throw invalid(`two rules have the id ${JSON.stringify(rule.id)}; each rule needs its own.`);
    ids.add(rule.id);
    if (new TextEncoder().encode(rule.prefix).byteLength > LIFECYCLE_LIMITS.maxPrefixBytes) {
      throw invalid(`rule ${JSON.stringify(rule.id)}: a prefix is at most ${LIFECYCLE_LIMITS.maxPrefixBytes} bytes.`);
    }
    if (!rule.expiration && !rule.transition && rule.abortUploadsAfterSeconds === undefined) {
      throw invalid(`rule ${JSON.stringify(rule.id)} has no action: give it an expiration, a transition or an abort of incomplete multipart uploads.`);
    }
    if (rule.expiration) assertCondition(rule, 'expiration', rule.expiration);
    if (rule.transition) assertCondition(rule, 'transition', rule.transition);
    if (rule.abortUploadsAfterSeconds !== undefined) assertCondition(rule, 'multipart abort', { afterSeconds: rule.abortUploadsAfterSeconds });
    if (
      rule.expiration &&
      rule.transition &&
      'afterSeconds' in rule.expiration &&
      'afterSeconds' in rule.transition &&
      rule.transition.afterSeconds >= rule.expiration.afterSeconds
    ) {
      throw invalid(
        `rule ${JSON.stringify(rule.id)}: its transition (after ${rule.transition.afterSeconds} s) must come before its expiration (after ${rule.expiration.afterSeconds} s).`,
      );
    }
  }
}

/** When an object's expiration falls, and the rule that sets it: what S3's `x-amz-expiration` header tells. */
export interface LifecycleExpiry {
  at: number;
  ruleId: string;
}

/**
 * When an action on the condition falls due for an object uploaded at `uploaded` (epoch ms): its
 * date; an age in whole days (S3's Days, wrangler's days) as S3 counts it, the upload time plus
 * the age rounded up to the next midnight UTC; any other age (the R2 API's seconds) exactly.
 */
export function dueAt(condition: LifecycleCondition, uploaded: number): number {
  if ('date' in condition) return condition.date;
  const at = uploaded + condition.afterSeconds * 1000;
  return condition.afterSeconds % DAY_SECONDS === 0 ? Math.ceil(at / DAY_MS) * DAY_MS : at;
}

/** Whether an action on the condition is due for an object uploaded at `uploaded`, at `now` (epoch ms). */
export function isDue(condition: LifecycleCondition, uploaded: number, now: number): boolean {
  return dueAt(condition, uploaded) <= now;
}

/** The earliest expiration the enabled rules give an object of `key` uploaded at `uploaded`, if any. */
export function expiryOf(rules: readonly LifecycleRule[], key: string, uploaded: number): LifecycleExpiry | undefined {
  let out: LifecycleExpiry | undefined;
  for (const rule of rules) {
    if (!rule.enabled || !rule.expiration || !key.startsWith(rule.prefix)) continue;
    const at = dueAt(rule.expiration, uploaded);
    if (out === undefined || at < out.at) out = { at, ruleId: rule.id };
  }
  return out;
}

/** What the rules make of an object now: expired (deleted) first, else moved to InfrequentAccess, else nothing. */
export function dueAction(
  rules: readonly LifecycleRule[],
  object: { key: string; uploaded: number; storageClass: StorageClass },
  now: number,
): 'expire' | 'transition' | undefined {
  let transition = false;
  for (const rule of rules) {
    if (!rule.enabled || !object.key.startsWith(rule.prefix)) continue;
    if (rule.expiration && isDue(rule.expiration, object.uploaded, now)) return 'expire';
    if (rule.transition && object.storageClass === 'Standard' && isDue(rule.transition, object.uploaded, now)) transition = true;
  }
  return transition ? 'transition' : undefined;
}

/** Whether the rules abort an upload of `key` created at `created`, at `now`: its exact age, not rounded to a midnight. */
export function uploadDue(rules: readonly LifecycleRule[], key: string, created: number, now: number): boolean {
  return rules.some(
    (rule) =>
      rule.enabled && rule.abortUploadsAfterSeconds !== undefined && key.startsWith(rule.prefix) && created + rule.abortUploadsAfterSeconds * 1000 <= now,
  );
}

/**
 * The key prefixes the sweeper scans for the enabled rules with object actions (or upload aborts,
 * with `uploads`): the fewest that cover them, in order ('' alone when one rule covers every key).
 */
export function scanPrefixes(rules: readonly LifecycleRule[], uploads = false): string[] {
  const wanted = rules
    .filter((rule) => rule.enabled && (uploads ? rule.abortUploadsAfterSeconds !== undefined : rule.expiration || rule.transition))
    .map((rule) => rule.prefix)
    .sort(compareUtf8);
  const out: string[] = [];
  for (const prefix of wanted) {
    if (!out.some((covering) => prefix.startsWith(covering))) out.push(prefix);
  }
  return out;
}

/** S3's Days as seconds. */
export function daysToSeconds(days: number): number {
  return days * DAY_SECONDS;
}

function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
