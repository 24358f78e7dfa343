/**
 * Custom fields of a record (docs/edge-and-logs.md, "What edgeport chose"): the configured request headers, response
 * headers and cookies, taken from the ORIGINAL headers. Header names match case-insensitively and
 * are logged lower case; cookie names match case-sensitively. Only the first instance of a repeated
 * header (set-cookie included) or cookie counts. A name that is absent is left out. At most
 * CUSTOM_FIELDS_MAX_BYTES of data (UTF-8 bytes of names and values, request headers first, then
 * cookies, then response headers) are kept; the value that crosses the limit is cut and the rest
 * dropped, without error.
 */

export const CUSTOM_FIELDS_MAX_BYTES = 8 * 1024;

/** Which names to log; header names lower case (the API guarantees it). */
export interface CustomFieldsSelection {
  requestFields: readonly string[];
  responseFields: readonly string[];
  cookieFields: readonly string[];
}

export interface CustomFields {
  RequestHeaders: Record<string, string>;
  ResponseHeaders: Record<string, string>;
  Cookies: Record<string, string>;
}

/** Headers as received: [name, value, name, value, ...] (Node's rawHeaders shape). */
export type RawHeaders = readonly string[];

/** The first value of each wanted header (names lower case) in raw header order. */
export function firstHeaderValues(raw: RawHeaders, wanted: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  if (wanted.length === 0) return found;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!found.has(name) && wanted.includes(name)) {
      found.set(name, raw[i + 1]!);
      if (found.size === wanted.length) break;
    }
  }
  return found;
}

/** The first value of each wanted cookie across every Cookie header, in order. */
export function firstCookieValues(raw: RawHeaders, wanted: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  if (wanted.length === 0) return found;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'cookie') continue;
    for (const pair of raw[i + 1]!.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      const name = pair.slice(0, eq).trim();
      if (!found.has(name) && wanted.includes(name)) found.set(name, pair.slice(eq + 1).trim());
    }
  }
  return found;
}

/** Builds the three maps, in the selection's order, under the combined byte limit. */
export function extractCustomFields(selection: CustomFieldsSelection, request: RawHeaders, response: RawHeaders): CustomFields {
  const out: CustomFields = { RequestHeaders: {}, ResponseHeaders: {}, Cookies: {} };
  let budget = CUSTOM_FIELDS_MAX_BYTES;
  const take = (target: Record<string, string>, names: readonly string[], values: Map<string, string>): void => {
    for (const name of names) {
      const value = values.get(name);
      if (value === undefined) continue;
      if (budget <= 0) return;
      const cost = Buffer.byteLength(name) + Buffer.byteLength(value);
      if (cost <= budget) {
        target[name] = value;
        budget -= cost;
      } else {
        target[name] = truncateUtf8(value, Math.max(0, budget - Buffer.byteLength(name)));
        budget = 0;
      }
    }
  };
  take(out.RequestHeaders, selection.requestFields, firstHeaderValues(request, selection.requestFields));
  take(out.Cookies, selection.cookieFields, firstCookieValues(request, selection.cookieFields));
  take(out.ResponseHeaders, selection.responseFields, firstHeaderValues(response, selection.responseFields));
  return out;
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to a character boundary.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
