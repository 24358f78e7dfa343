/**
 * Compatibility dates and flags of a script's config (docs/object-store.md, "Scripts on workerd"): the date's format and range, and the
 * flags that are edgeport's own. A script's other flags are workerd's, which knows every flag of
 * the platform and refuses unknown ones itself ("No such compatibility flag: …"); the in-process
 * `openStoreBucket` knows only the flags below. Behaviour that changed on a date is on from that
 * date or by flag.
 */

/** Flags edgeport itself implements (the bucket binding's), with what they do; workerd never sees them. */
export const COMPATIBILITY_FLAGS = {
  store_list_honor_include: "StoreBucket.list() honours `include` before 2022-08-04 too (as the platform's flag of that name does).",
  nodejs_compat: "workerd's flag for Node.js APIs; accepted by openStoreBucket, where Node.js is all there is.",
} as const satisfies Record<string, string>;

/** The flags of COMPATIBILITY_FLAGS that edgeport implements and workerd does not know. */
export const EDGEPORT_FLAGS: ReadonlySet<string> = new Set(['store_list_honor_include'] satisfies CompatibilityFlag[]);

export type CompatibilityFlag = keyof typeof COMPATIBILITY_FLAGS;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** The furthest timezone is UTC+14: a date that is "today" anywhere on Earth is accepted. */
const LATEST_OFFSET_MS = 14 * 60 * 60 * 1000;

/** The problem with a compatibility date, or undefined when it is a real `YYYY-MM-DD` not after today. */
export function compatibilityDateProblem(date: string, now: number): string | undefined {
  const match = DATE.exec(date);
  if (!match) return `must be a date written YYYY-MM-DD, got ${JSON.stringify(date)}`;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const parsed = new Date(Date.UTC(year, month - 1, day));
  if (parsed.getUTCFullYear() !== year || parsed.getUTCMonth() !== month - 1 || parsed.getUTCDate() !== day) {
    return `${date} is not a calendar date`;
  }
  const today = new Date(now + LATEST_OFFSET_MS).toISOString().slice(0, 10);
  if (date > today) return `${date} is in the future (today is ${today}); use a date no later than today`;
  return undefined;
}

/**
 * The problem with a date later than `newest`, the newest date the installed workerd supports
 * (workerd refuses such a date: the platform's runtime is always current, a self-hosted one is as
 * new as its package); undefined when it is not later.
 */
export function newerThanRuntimeProblem(date: string, newest: string, runtime: string): string | undefined {
  if (date <= newest) return undefined;
  return `${date} is later than ${newest}, the newest date the installed ${runtime} supports; use ${newest} or earlier, or update the workerd package`;
}

/** The flags openStoreBucket does not know, in the order given. */
export function unknownCompatibilityFlags(flags: readonly string[]): string[] {
  return flags.filter((flag) => !Object.hasOwn(COMPATIBILITY_FLAGS, flag));
}
