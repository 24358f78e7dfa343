/**
 * `onlyIf` as a StoreConditional object or as Headers, converted to the engine's Conditional with
 * the runtime's exact validation errors. The Headers form parses RFC 7232
 * etag lists and always compares dates in whole seconds.
 */
import type { Conditional, EtagMatcher } from '../engine/types.ts';
import { wrongField } from './binding-errors.ts';
import type { StoreConditional } from './types.ts';

/** `struct` names the options type in the runtime's type error for a non-object `onlyIf`. */
export function toConditional(
  onlyIf: StoreConditional | Headers | undefined | null,
  struct: 'GetOptions' | 'PutOptions' = 'GetOptions',
): Conditional | undefined {
  if (onlyIf === undefined || onlyIf === null) return undefined;
  if (onlyIf instanceof Headers) return fromHeaders(onlyIf);
  if (typeof onlyIf !== 'object') throw wrongField('onlyIf', struct, 'Conditional or Headers');
  const cond: Conditional = {};
  if (onlyIf.etagMatches !== undefined) cond.etagMatches = [objectEtag(onlyIf.etagMatches, 'etagMatches')];
  if (onlyIf.etagDoesNotMatch !== undefined) cond.etagDoesNotMatch = [objectEtag(onlyIf.etagDoesNotMatch, 'etagDoesNotMatch')];
  if (onlyIf.uploadedBefore !== undefined) cond.uploadedBefore = toDateMs(onlyIf.uploadedBefore, 'uploadedBefore', 'Conditional');
  if (onlyIf.uploadedAfter !== undefined) cond.uploadedAfter = toDateMs(onlyIf.uploadedAfter, 'uploadedAfter', 'Conditional');
  if (onlyIf.secondsGranularity) cond.secondsGranularity = true;
  return cond;
}

function objectEtag(value: unknown, field: string): EtagMatcher {
  if (typeof value !== 'string') throw wrongField(field, 'Conditional', 'string');
  // As the runtime tests it: starts and ends with a quote (so a lone `"` counts too).
  if (value.startsWith('"') && value.endsWith('"')) throw new TypeError(`Conditional ETag should not be wrapped in quotes (${value}).`);
  // `*` is a wildcard since workerd PR #2611; any other value a strong etag.
  return value === '*' ? { type: 'wildcard' } : { type: 'strong', value };
}

/** A Date or epoch milliseconds; anything else is the runtime's type error. */
export function toDateMs(value: unknown, field: string, struct: string): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Number.NaN;
  if (typeof value !== 'number' && !(value instanceof Date)) throw wrongField(field, struct, 'date');
  if (ms > Date.UTC(2189, 11, 31, 23, 59, 59, 999)) throw new TypeError("This API doesn't support dates after 2189.");
  return Number.isNaN(ms) ? 0 : ms;
}

function fromHeaders(headers: Headers): Conditional | undefined {
  const cond: Conditional = { secondsGranularity: true };
  let any = false;
  const ifMatch = headers.get('if-match');
  if (ifMatch !== null) {
    cond.etagMatches = parseEtagList(ifMatch, 'if-match');
    any = true;
  }
  const ifNoneMatch = headers.get('if-none-match');
  if (ifNoneMatch !== null) {
    cond.etagDoesNotMatch = parseEtagList(ifNoneMatch, 'if-none-match');
    any = true;
  }
  const ims = headers.get('if-modified-since');
  if (ims !== null) {
    cond.uploadedAfter = parseHttpDate(ims);
    any = true;
  }
  const ius = headers.get('if-unmodified-since');
  if (ius !== null) {
    cond.uploadedBefore = parseHttpDate(ius);
    any = true;
  }
  return any ? cond : undefined;
}

/** The JS date parser, as the runtime uses; an unparseable date is epoch 0, not an error. */
function parseHttpDate(text: string): number {
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? 0 : ms;
}

/**
 * RFC 7232 §3.1 entity-tag list, scanned the way the real runtime scans it: find the next `"`,
 * `*`, `W` and `,`. A comma first is skipped (empty elements are fine); otherwise, after an etag a
 * comma was required. A `*` replaces the whole list. Text that holds no `"` or `*` ends the scan,
 * and an empty result is an error (so a lone unquoted value is refused).
 */
export function parseEtagList(text: string, header: 'if-match' | 'if-none-match'): EtagMatcher[] {
  const list: EtagMatcher[] = [];
  let rest = text;
  let commaRequired = false;
  for (;;) {
    const wildcard = find(rest, '*');
    const quote = find(rest, '"');
    const weak = find(rest, 'W');
    const comma = find(rest, ',');
    if (quote === NONE && wildcard === NONE) break;
    if (comma < wildcard && comma < quote && comma < weak) {
      rest = rest.slice(comma + 1);
      commaRequired = false;
      continue;
    }
    if (commaRequired) throw new Error(`Comma was expected to separate etags. ${MISSING_COMMA[firstOf(wildcard, quote, weak)]}`);
    if (wildcard < quote) return [{ type: 'wildcard' }];
    const close = rest.indexOf('"', quote + 1);
    if (close < 0) throw new Error('Unclosed double quote for Etag');
    const value = rest.slice(quote + 1, close);
    if (weak < quote) {
      if (rest[weak + 1] !== '/' || weak + 2 !== quote) throw new Error('Weak etags must start with W/ and their value must be quoted');
      list.push({ type: 'weak', value });
    } else {
      list.push({ type: 'strong', value });
    }
    rest = rest.slice(close + 1);
    commaRequired = true;
  }
  if (list.length === 0) throw new Error(`Invalid ETag in ${header} header`);
  return list;
}

const NONE = Number.POSITIVE_INFINITY;

function find(text: string, char: string): number {
  const at = text.indexOf(char);
  return at < 0 ? NONE : at;
}

function firstOf(wildcard: number, quote: number, weak: number): 'wildcard' | 'quote' | 'weak' {
  const first = Math.min(wildcard, quote, weak);
  return first === wildcard ? 'wildcard' : first === quote ? 'quote' : 'weak';
}

const MISSING_COMMA = {
  wildcard: "Encountered a wildcard character '*' instead.",
  quote: `Encountered a double quote character '"' instead. This would otherwise indicate the start of a new strong etag.`,
  weak: "Encountered a weak quotation character 'W' instead. This would otherwise indicate the start of a new weak etag.",
} as const;
