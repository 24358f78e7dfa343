/**
 * The Cache API's storage (`caches.default`, `caches.open()`), a worker of its own inside workerd
 * that the script's cache calls go to: GET answers HIT with the stored response or MISS; PUT stores
 * the serialised response workerd sends while its Cache-Control (s-maxage, then max-age) or Expires
 * keeps it fresh; PURGE deletes. Kept in memory, least recently used first out past a byte budget,
 * and gone when the process restarts.
 *
 * As the platform's cache does, a match honours the headers of the request it is given (workerd
 * passes them on): If-None-Match against the stored ETag, else If-Modified-Since against the stored
 * Last-Modified, answer 304 with no body; one `bytes=` Range answers 206 with that part (416 when
 * it starts past the end; several ranges or a malformed one get the whole response). Vary is not
 * honoured, as on the platform: one response per URL.
 */
import { resolveRange } from '../../../store/engine/ranges.ts';
import { parseRangeHeader } from '../../../store/binding/range.ts';

const BUDGET_BYTES = 64 * 1024 * 1024;

interface Entry {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array;
  expires: number;
}

const entries = new Map<string, Entry>();
let storedBytes = 0;
const decoder = new TextDecoder();

function keyOf(request: Request): string {
  return `${request.headers.get('cf-cache-namespace') ?? ''} ${request.url}`;
}

function forget(key: string): boolean {
  const entry = entries.get(key);
  if (!entry) return false;
  entries.delete(key);
  storedBytes -= entry.body.byteLength;
  return true;
}

/** A stored header's value (names are kept lower-case). */
function headerOf(headers: Array<[string, string]>, name: string): string | undefined {
  return headers.find(([header]) => header === name)?.[1];
}

/** Seconds the response may be served from cache, or 0 when it must not be stored. */
function freshFor(headers: Array<[string, string]>, now: number): number {
  if (headerOf(headers, 'set-cookie') !== undefined) return 0;
  const control = (headerOf(headers, 'cache-control') ?? '').toLowerCase();
  if (/(^|,)\s*(no-store|private)\s*(,|$)/.test(control)) return 0;
  const directive = (name: string) => {
    const match = new RegExp(`(?:^|,)\\s*${name}\\s*=\\s*"?(\\d+)`).exec(control);
    return match ? Number(match[1]) : undefined;
  };
  const seconds = directive('s-maxage') ?? directive('max-age');
  if (seconds !== undefined) return seconds;
  const expires = headerOf(headers, 'expires');
  if (expires !== undefined) return Math.max(0, Math.floor((Date.parse(expires) - now) / 1000)) || 0;
  return 0;
}

/** Parses `HTTP/1.1 <status> <reason>\r\n<headers>\r\n\r\n<body>` (the body plain or chunked). */
function parseSerialised(bytes: Uint8Array): Omit<Entry, 'expires'> | undefined {
  let end = -1;
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      end = i;
      break;
    }
  }
  if (end < 0) return undefined;
  const [statusLine, ...lines] = decoder.decode(bytes.subarray(0, end)).split('\r\n');
  const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(statusLine ?? '')?.[1]);
  if (!Number.isInteger(status)) return undefined;
  const headers: Array<[string, string]> = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
  }
  let body = bytes.subarray(end + 4);
  if (headers.some(([name, value]) => name === 'transfer-encoding' && value.toLowerCase().includes('chunked'))) {
    body = dechunk(body);
  }
  return { status, headers: headers.filter(([name]) => name !== 'transfer-encoding' && name !== 'content-length'), body: body.slice() };
}

function dechunk(bytes: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    let lineEnd = at;
    while (lineEnd + 1 < bytes.length && !(bytes[lineEnd] === 13 && bytes[lineEnd + 1] === 10)) lineEnd++;
    const size = parseInt(decoder.decode(bytes.subarray(at, lineEnd)), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  const out = new Uint8Array(parts.reduce((total, part) => total + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

/** The stored response as the match request asks for it: whole, not modified (304) or a part (206, 416). */
function answerHit(entry: Entry, asked: Headers): Response {
  const headers = new Headers(entry.headers);
  headers.set('cf-cache-status', 'HIT');
  if (notModified(entry, asked)) return new Response(null, { status: 304, headers });
  const range = entry.status === 200 ? asked.get('range') : null;
  const requested = range === null ? undefined : parseRangeHeader(range);
  if (requested !== undefined) {
    const size = entry.body.byteLength;
    let part: { offset: number; length: number };
    try {
      part = resolveRange(requested, size);
    } catch {
      headers.set('content-range', `bytes */${size}`);
      return new Response(null, { status: 416, headers });
    }
    headers.set('content-range', `bytes ${part.offset}-${part.offset + part.length - 1}/${size}`);
    return new Response(entry.body.subarray(part.offset, part.offset + part.length) as Uint8Array<ArrayBuffer>, { status: 206, headers });
  }
  return new Response(entry.body.byteLength === 0 && entry.status === 204 ? null : (entry.body as Uint8Array<ArrayBuffer>), { status: entry.status, headers });
}

/** If-None-Match (weak comparison, `*` for any) against the ETag; without it, If-Modified-Since against Last-Modified. */
function notModified(entry: Entry, asked: Headers): boolean {
  const noneMatch = asked.get('if-none-match');
  if (noneMatch !== null) {
    const etag = headerOf(entry.headers, 'etag');
    if (etag === undefined) return false;
    const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
    return noneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
  }
  const since = Date.parse(asked.get('if-modified-since') ?? '');
  const modified = Date.parse(headerOf(entry.headers, 'last-modified') ?? '');
  return !Number.isNaN(since) && !Number.isNaN(modified) && modified <= since;
}

export default {
  async fetch(request: Request): Promise<Response> {
    const key = keyOf(request);
    const now = Date.now();
    switch (request.method) {
      case 'GET': {
        const entry = entries.get(key);
        if (!entry || entry.expires <= now) {
          forget(key);
          return new Response(null, { headers: { 'cf-cache-status': 'MISS' } });
        }
        // Most recently used last: eviction takes from the front.
        entries.delete(key);
        entries.set(key, entry);
        return answerHit(entry, request.headers);
      }
      case 'PUT': {
        const parsed = parseSerialised(new Uint8Array(await request.arrayBuffer()));
        if (!parsed) return new Response(null, { status: 413 });
        const seconds = freshFor(parsed.headers, now);
        if (seconds <= 0 || parsed.body.byteLength > BUDGET_BYTES / 4) return new Response(null, { status: 413 });
        forget(key);
        entries.set(key, { ...parsed, expires: now + seconds * 1000 });
        storedBytes += parsed.body.byteLength;
        for (const oldest of entries.keys()) {
          if (storedBytes <= BUDGET_BYTES) break;
          forget(oldest);
        }
        return new Response(null, { status: 204 });
      }
      case 'PURGE':
        return new Response(null, { status: forget(key) ? 200 : 404 });
      default:
        return new Response(null, { status: 405 });
    }
  },
};
