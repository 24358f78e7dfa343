/**
 * httpMetadata in (an object, or Headers reduced to the six fields the runtime takes), custom
 * metadata coercion, and writeHttpMetadata out, as the runtime does.
 */
import type { HttpMetadata } from '../engine/types.ts';
import { toDateMs } from './conditional.ts';
import { wrongField } from './binding-errors.ts';
import type { StoreHTTPMetadata } from './types.ts';

const STRING_FIELDS = ['contentType', 'contentLanguage', 'contentDisposition', 'contentEncoding', 'cacheControl'] as const;
const HEADER_OF: Record<(typeof STRING_FIELDS)[number], string> = {
  contentType: 'content-type',
  contentLanguage: 'content-language',
  contentDisposition: 'content-disposition',
  contentEncoding: 'content-encoding',
  cacheControl: 'cache-control',
};

export function toHttpMetadata(input: StoreHTTPMetadata | Headers | undefined | null, struct = 'PutOptions'): HttpMetadata | undefined {
  if (input === undefined || input === null) return undefined;
  const out: HttpMetadata = {};
  if (input instanceof Headers) {
    for (const field of STRING_FIELDS) {
      const value = input.get(HEADER_OF[field]);
      if (value !== null) out[field] = value;
    }
    const expires = input.get('expires');
    if (expires !== null) {
      const ms = Date.parse(expires);
      out.cacheExpiry = Number.isNaN(ms) ? 0 : ms;
    }
    return out;
  }
  if (typeof input !== 'object') throw wrongField('httpMetadata', struct, 'HttpMetadata or Headers');
  for (const field of STRING_FIELDS) {
    const value = (input as Record<string, unknown>)[field];
    if (value !== undefined) out[field] = String(value);
  }
  if (input.cacheExpiry !== undefined) out.cacheExpiry = toDateMs(input.cacheExpiry, 'cacheExpiry', 'HttpMetadata');
  return out;
}

export function toCustomMetadata(input: unknown, struct = 'PutOptions'): Record<string, string> | undefined {
  if (input === undefined || input === null) return undefined;
  if (typeof input !== 'object' || Array.isArray(input)) throw wrongField('customMetadata', struct, 'object');
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(input)) out[name] = String(value);
  return out;
}

/** The stored metadata as the script-facing object (cacheExpiry as a Date). */
export function toStoreHttpMetadata(meta: HttpMetadata): StoreHTTPMetadata {
  const out: StoreHTTPMetadata = {};
  for (const field of STRING_FIELDS) if (meta[field] !== undefined) out[field] = meta[field];
  if (meta.cacheExpiry !== undefined) out.cacheExpiry = new Date(meta.cacheExpiry);
  return out;
}

const UNSAFE = /[\r\n\0]/;

/**
 * Sets only the fields present; never etag, last-modified or content-length. A list item listed
 * without `httpMetadata` in `include` has `{}` and writes nothing (Miniflare's behaviour; workerd
 * throws "HTTP metadata unknown" there, which code written against wrangler never expects).
 */
export function writeHttpMetadata(meta: StoreHTTPMetadata, headers: Headers): void {
  const pairs: Array<[string, string]> = [];
  for (const field of STRING_FIELDS) if (meta[field] !== undefined) pairs.push([HEADER_OF[field], meta[field]!]);
  if (meta.cacheExpiry !== undefined) pairs.push(['expires', meta.cacheExpiry.toUTCString()]);
  for (const [, value] of pairs) if (UNSAFE.test(value)) throw new TypeError('Invalid header value.');
  for (const [name, value] of pairs) headers.set(name, value);
}
