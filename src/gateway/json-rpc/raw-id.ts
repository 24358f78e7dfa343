/**
 * The source text of request ids, for ids `JSON.parse` cannot carry exactly: integers beyond 2^53
 * and numbers with more digits than a double holds. Indexers send big counters; JSON-RPC 2.0 asks
 * the server to echo the id unchanged, so such ids are read from the body itself. Only called for
 * a body that already parsed, so the scanner can trust its structure.
 */

/**
 * For the body's request object (`index` 0) or the `index`-th member of a batch, the source text of
 * its last top-level `"id"` member (`JSON.parse` keeps the last of duplicate keys too).
 */
export function rawIdText(body: string, index: number): string | undefined {
  let i = skipWhitespace(body, 0);
  if (body[i] === '[') {
    i = skipWhitespace(body, i + 1);
    for (let n = 0; n < index; n++) {
      i = skipWhitespace(body, scanValue(body, i));
      i = skipWhitespace(body, i + 1); // the comma
    }
  }
  return body[i] === '{' ? idOfObject(body, i) : undefined;
}

function idOfObject(body: string, start: number): string | undefined {
  let found: string | undefined;
  let i = skipWhitespace(body, start + 1);
  while (body[i] === '"') {
    const keyEnd = scanString(body, i);
    const keySource = body.slice(i, keyEnd);
    const key = keySource.includes('\\') ? (JSON.parse(keySource) as string) : keySource.slice(1, -1);
    i = skipWhitespace(body, keyEnd);
    i = skipWhitespace(body, i + 1); // the colon
    const valueEnd = scanValue(body, i);
    if (key === 'id') found = body.slice(i, valueEnd);
    i = skipWhitespace(body, valueEnd);
    if (body[i] === ',') i = skipWhitespace(body, i + 1);
  }
  return found;
}

/** Index just past the JSON value starting at `i`. */
function scanValue(body: string, i: number): number {
  const c = body[i];
  if (c === '"') return scanString(body, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < body.length; j++) {
      const d = body[j];
      if (d === '"') j = scanString(body, j) - 1;
      else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return body.length;
  }
  let j = i;
  while (j < body.length && !',]} \t\n\r'.includes(body[j]!)) j++;
  return j;
}

/** Index just past the string literal starting at `i` (a `"`). */
function scanString(body: string, i: number): number {
  for (let j = i + 1; j < body.length; j++) {
    const c = body[j];
    if (c === '\\') j++;
    else if (c === '"') return j + 1;
  }
  return body.length;
}

function skipWhitespace(body: string, i: number): number {
  while (i < body.length && (body[i] === ' ' || body[i] === '\n' || body[i] === '\r' || body[i] === '\t')) i++;
  return i;
}
