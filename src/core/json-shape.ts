/**
 * The shape of a JSON text, found in one pass that allocates nothing: whether it is JSON at all
 * (RFC 8259, exactly what `JSON.parse` accepts), how deeply it nests, how many values it holds and
 * how many items its top-level array has. Surfaces call it before `JSON.parse`, so a body nested
 * 100,000 levels deep or a batch of millions of members is refused before any value is built or
 * walked recursively, and after the first value over a limit nothing more is read.
 */

/** How deeply edgeport accepts JSON to nest on every surface (`[]` is 1 level, `[{}]` 2). */
export const MAX_JSON_DEPTH = 64;

export interface JsonShapeLimits {
  /** The most arrays and objects nested inside one another; the scan stops at the first one deeper. */
  maxDepth: number;
  /** When the text is an array: the most items it may have; the scan stops as the next one begins. */
  maxArrayItems?: number;
  /** The most values (each scalar, array and object counts one) the text may hold. */
  maxValues?: number;
}

export type JsonShape =
  /** Valid JSON within the limits: `JSON.parse` accepts it. `items` counts a top-level array's items (0 otherwise). */
  | { readonly kind: 'json'; readonly root: 'array' | 'object' | 'scalar'; readonly items: number; readonly depth: number; readonly values: number }
  /** Not JSON; `offset` is the index of the first character that cannot continue it. */
  | { readonly kind: 'invalid'; readonly offset: number }
  /** An array or object opens at `offset`, one level deeper than `maxDepth`. Nothing after it was looked at. */
  | { readonly kind: 'too-deep'; readonly offset: number }
  /** The top-level array's item number `maxArrayItems + 1` begins at `offset`. Nothing after it was looked at. */
  | { readonly kind: 'too-many-items'; readonly offset: number }
  /** Value number `maxValues + 1` begins at `offset`. Nothing after it was looked at. */
  | { readonly kind: 'too-many-values'; readonly offset: number };

const ARRAY = 1;
const OBJECT = 2;

/**
 * Scans `text` against `limits`. Whichever problem comes first in the text is reported: a syntax
 * error, a level too deep, one array item or one value too many.
 */
export function scanJsonShape(text: string, limits: JsonShapeLimits): JsonShape {
  const { maxDepth } = limits;
  const maxItems = limits.maxArrayItems ?? Infinity;
  const maxValues = limits.maxValues ?? Infinity;
  const end = text.length;
  // The open containers, innermost last: bounded by maxDepth, whatever the text.
  const open = new Uint8Array(maxDepth);
  let depth = 0;
  let deepest = 0;
  let items = 0;
  let values = 0;
  let i = skipWhitespace(text, 0);
  const root = text.charCodeAt(i) === 0x5b ? 'array' : text.charCodeAt(i) === 0x7b ? 'object' : 'scalar';
  for (;;) {
    // A value begins at i.
    if (++values > maxValues) return { kind: 'too-many-values', offset: i };
    const c = text.charCodeAt(i);
    if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (depth === maxDepth) return { kind: 'too-deep', offset: i };
      open[depth++] = c === 0x5b ? ARRAY : OBJECT;
      if (depth > deepest) deepest = depth;
      i = skipWhitespace(text, i + 1);
      const next = text.charCodeAt(i);
      if (next === (c === 0x5b ? 0x5d : 0x7d)) {
        depth--;
        i++;
      } else {
        if (c === 0x7b) {
          i = memberName(text, i);
          if (i < 0) return { kind: 'invalid', offset: ~i };
        } else if (depth === 1 && ++items > maxItems) {
          return { kind: 'too-many-items', offset: i };
        }
        continue;
      }
    } else {
      const after = c === 0x22 /* " */ ? scanString(text, i) : c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39) ? scanNumber(text, i) : scanLiteral(text, i, c);
      if (after < 0) return { kind: 'invalid', offset: ~after };
      i = after;
    }
    // A value ended at i: what follows it closes containers, or separates it from the next one.
    for (;;) {
      i = skipWhitespace(text, i);
      if (depth === 0) return i === end ? { kind: 'json', root, items, depth: deepest, values } : { kind: 'invalid', offset: i };
      const d = text.charCodeAt(i);
      const container = open[depth - 1];
      if (d === 0x2c /* , */) {
        i = skipWhitespace(text, i + 1);
        if (container === OBJECT) {
          i = memberName(text, i);
          if (i < 0) return { kind: 'invalid', offset: ~i };
        } else if (depth === 1 && ++items > maxItems) {
          return { kind: 'too-many-items', offset: i };
        }
        break;
      }
      if (d !== (container === ARRAY ? 0x5d /* ] */ : 0x7d) /* } */) return { kind: 'invalid', offset: i };
      depth--;
      i++;
    }
  }
}

/**
 * An object member's `"name" :` at `i`; returns the index of its value, or the bitwise complement
 * of the offset of a syntax error (negative). Failures use `~offset` throughout, so that no
 * result objects are allocated on the way.
 */
function memberName(text: string, i: number): number {
  if (text.charCodeAt(i) !== 0x22) return ~i;
  const after = scanString(text, i);
  if (after < 0) return after;
  const colon = skipWhitespace(text, after);
  if (text.charCodeAt(colon) !== 0x3a /* : */) return ~colon;
  return skipWhitespace(text, colon + 1);
}

/** A string literal at `i` (a `"`): control characters must be escaped, escapes must be JSON's. */
function scanString(text: string, i: number): number {
  const end = text.length;
  for (let j = i + 1; j < end; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) return j + 1;
    if (c < 0x20) return ~j;
    if (c === 0x5c /* \ */) {
      const e = text.charCodeAt(++j);
      if (e === 0x75 /* u */) {
        for (let k = 1; k <= 4; k++) if (!isHexDigit(text.charCodeAt(j + k))) return ~(j + k);
        j += 4;
      } else if (!(e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74)) {
        return ~j;
      }
    }
  }
  return ~end;
}

/** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` at `i`. */
function scanNumber(text: string, i: number): number {
  let j = i;
  if (text.charCodeAt(j) === 0x2d) j++;
  if (text.charCodeAt(j) === 0x30) j++;
  else if (isDigit(text.charCodeAt(j))) j = skipDigits(text, j);
  else return ~j;
  if (text.charCodeAt(j) === 0x2e /* . */) {
    if (!isDigit(text.charCodeAt(j + 1))) return ~(j + 1);
    j = skipDigits(text, j + 1);
  }
  const e = text.charCodeAt(j);
  if (e === 0x65 || e === 0x45) {
    j++;
    const sign = text.charCodeAt(j);
    if (sign === 0x2b || sign === 0x2d) j++;
    if (!isDigit(text.charCodeAt(j))) return ~j;
    j = skipDigits(text, j);
  }
  return j;
}

function scanLiteral(text: string, i: number, c: number): number {
  const word = c === 0x74 ? 'true' : c === 0x66 ? 'false' : c === 0x6e ? 'null' : undefined;
  if (word === undefined) return ~i;
  for (let k = 1; k < word.length; k++) if (text.charCodeAt(i + k) !== word.charCodeAt(k)) return ~(i + k);
  return i + word.length;
}

function skipDigits(text: string, i: number): number {
  while (isDigit(text.charCodeAt(i))) i++;
  return i;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** JSON's whitespace: space, tab, LF and CR only. */
function skipWhitespace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}
