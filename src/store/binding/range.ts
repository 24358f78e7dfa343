/**
 * get()'s `range`: a StoreRange object, validated with the runtime's exact errors, or a
 * Headers whose Range header is read leniently: anything but one valid, satisfiable
 * `bytes=` range means the whole object, never an error, as on the platform.
 */
import type { RangeRequest } from '../engine/types.ts';
import type { StoreRange } from './types.ts';

export function toRangeRequest(range: StoreRange | Headers | undefined | null): RangeRequest | undefined {
  if (range === undefined || range === null) return undefined;
  if (range instanceof Headers) {
    const header = range.get('range');
    return header === null ? undefined : parseRangeHeader(header);
  }
  const { offset, length, suffix } = range as { offset?: unknown; length?: unknown; suffix?: unknown };
  // Checked in the runtime's order: offset, then length, then suffix (so `{offset: -1, suffix: 1}`
  // reports the offset). Values are coerced to numbers (`"1"` is 1).
  const out: { offset?: number; length?: number } = {};
  if (offset !== undefined) out.offset = checkWhole(Number(offset), 'Invalid range. Starting offset');
  if (length !== undefined) out.length = checkWhole(Number(length), 'Invalid range. Length');
  if (suffix !== undefined) {
    if (offset !== undefined) throw new TypeError('Suffix is incompatible with offset.');
    if (length !== undefined) throw new TypeError('Suffix is incompatible with length.');
    const n = Number(suffix);
    if (!(n >= 0)) throw new RangeError(`Invalid suffix. Suffix (${n}) must be greater than or equal to 0.`);
    return { suffix: checkWhole(n, 'Invalid range. Suffix') };
  }
  // `range: {}` names no bytes: edgeport serves the whole object (production answers 10001, an
  // acknowledged bug; workerd PR #6759).
  return out.offset === undefined && out.length === undefined ? undefined : out;
}

/** `what (n) must be ...`: negative first, then fractional, as the runtime checks (NaN fails the first). */
function checkWhole(n: number, what: string): number {
  if (!(n >= 0)) throw new RangeError(`${what} (${n}) must be greater than or equal to 0.`);
  if (!Number.isInteger(n)) throw new RangeError(`${what} (${n}) must be an integer, not floating point.`);
  return n;
}

const SINGLE_RANGE = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i;

/**
 * One `bytes=a-b`, `bytes=a-` or `bytes=-n`; anything else (multi, inverted, garbage, `-0`) is the
 * whole object. Bounds are not known here: the caller serves the whole object when the engine
 * finds the range unsatisfiable (as the platform and Miniflare's `parseRanges` do).
 */
export function parseRangeHeader(header: string): RangeRequest | undefined {
  const match = SINGLE_RANGE.exec(header);
  if (!match) return undefined;
  const [, first, last] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    return suffix === 0 ? undefined : { suffix: Math.min(suffix, Number.MAX_SAFE_INTEGER) };
  }
  const offset = Number(first);
  if (!Number.isSafeInteger(offset)) return undefined;
  const end = Number(last);
  if (last === '' || !Number.isSafeInteger(end)) return { offset };
  if (end < offset) return undefined;
  return { offset, length: end - offset + 1 };
}
