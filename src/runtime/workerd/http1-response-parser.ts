/**
 * A strict, incremental HTTP/1.1 response parser for the edge's connections to workerd
 * (workerd-connections.ts): the status line and headers, then the body as Content-Length bytes,
 * chunked, or up to the connection's end. It hands the body on as views into the bytes it was
 * fed, never copies of them, so that a body read into reused buffers stays in them. Anything it
 * cannot read exactly (a malformed line, a head over the limit, conflicting lengths, bytes after
 * a response) is an error thrown from feed(), and the connection is not to be used again.
 */
import { HTTP_TOKEN } from '../../core/http/token.ts';

/** What the parser reports, in order: head, body views (none for a body-less answer), end. */
export interface ResponseEvents {
  head(status: number, statusText: string, headers: string[]): void;
  /** A view into the chunk given to feed(): valid only as long as that chunk is. */
  body(chunk: Uint8Array): void;
  /** The response is complete; `reusable` when the connection may carry another request. */
  end(reusable: boolean): void;
}

/** The largest head (status line and headers) or chunked trailer accepted. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** The longest chunk-size line accepted (a size and any extensions). */
const MAX_CHUNK_LINE = 4096;

type State = 'idle' | 'head' | 'length' | 'close' | 'chunk-size' | 'chunk-data' | 'chunk-data-end' | 'trailers';

const CR = 13;
const LF = 10;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: ([^\r\n]*))?$/;
// eslint-disable-next-line no-control-regex
const BAD_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;
const HEX = /^[0-9A-Fa-f]{1,12}$/;
/** Optional whitespace around a header value: spaces and tabs only (never obs-text such as 0xA0). */
const OWS = /^[ \t]+|[ \t]+$/g;

export class ResponseParseError extends Error {}

export class ResponseParser {
  readonly #events: ResponseEvents;
  #state: State = 'idle';
  #headRequest = false;
  /** Bytes of a head, chunk-size line or trailer seen so far (they may span chunks). */
  #pending: Uint8Array | undefined;
  #remaining = 0;
  #reusable = true;

  constructor(events: ResponseEvents) {
    this.#events = events;
  }

  /** A response is expected next, to a request of `method`. */
  expect(method: string): void {
    if (this.#state !== 'idle') throw new Error('A response is already expected.');
    this.#state = 'head';
    this.#headRequest = method === 'HEAD';
    this.#reusable = true;
  }

  /** True while a response is being read (expected and not yet ended). */
  get busy(): boolean {
    return this.#state !== 'idle';
  }

  /** Reads `chunk`; throws ResponseParseError on anything that is not exactly one HTTP/1.1 response. */
  feed(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.byteLength) {
      switch (this.#state) {
        case 'idle':
          throw new ResponseParseError('workerd sent bytes when no response was expected.');
        case 'head':
        case 'trailers': {
          const end = this.#findBlankLine(chunk, at);
          if (end < 0) return;
          at = end;
          if (this.#state === 'head') this.#onHead();
          else this.#finish();
          break;
        }
        case 'chunk-size': {
          const end = this.#findLine(chunk, at);
          if (end < 0) return;
          at = end;
          this.#onChunkSize();
          break;
        }
        case 'length':
        case 'chunk-data': {
          const take = Math.min(this.#remaining, chunk.byteLength - at);
          this.#remaining -= take;
          const view = chunk.subarray(at, at + take);
          at += take;
          if (this.#remaining === 0) this.#state = this.#state === 'length' ? 'idle' : 'chunk-data-end';
          this.#events.body(view);
          if (this.#state === 'idle') this.#events.end(this.#reusable);
          break;
        }
        case 'chunk-data-end': {
          // The CRLF after a chunk's data, possibly split across chunks.
          const need = this.#remaining === 0 ? CR : LF;
          if (chunk[at] !== need) throw new ResponseParseError('A chunk of the response was not followed by CRLF.');
          at++;
          if (need === CR) this.#remaining = 1;
          else {
            this.#remaining = 0;
            this.#state = 'chunk-size';
          }
          break;
        }
        case 'close':
          this.#events.body(chunk.subarray(at));
          return;
      }
    }
  }

  /** The connection ended: completes a body that runs to the end; throws if a response was cut short. */
  finish(): void {
    if (this.#state === 'close') {
      this.#state = 'idle';
      this.#events.end(false);
      return;
    }
    if (this.#state !== 'idle') throw new ResponseParseError('workerd closed the connection before its response was complete.');
  }

  /** Appends bytes up to and including the first CRLF CRLF (or throws past the limit); answers where it ended, or -1. */
  #findBlankLine(chunk: Uint8Array, at: number): number {
    const before = this.#pending?.byteLength ?? 0;
    // The terminator may straddle the join: look from up to 3 bytes before it.
    const joined = before === 0 ? chunk.subarray(at) : concat(this.#pending!, chunk.subarray(at));
    const from = Math.max(0, before - 3);
    const found = indexOfBlankLine(joined, from);
    if (found < 0) {
      if (joined.byteLength > MAX_HEAD_BYTES) throw new ResponseParseError(`workerd's response head is over ${MAX_HEAD_BYTES} bytes.`);
      this.#pending = before === 0 ? Uint8Array.prototype.slice.call(joined) : joined;
      return -1;
    }
    if (found + 4 > MAX_HEAD_BYTES) throw new ResponseParseError(`workerd's response head is over ${MAX_HEAD_BYTES} bytes.`);
    this.#pending = joined.subarray(0, found);
    return at + (found + 4 - before);
  }

  /** Appends bytes up to and including the first CRLF; answers where it ended, or -1. */
  #findLine(chunk: Uint8Array, at: number): number {
    const before = this.#pending?.byteLength ?? 0;
    const joined = before === 0 ? chunk.subarray(at) : concat(this.#pending!, chunk.subarray(at));
    const found = joined.indexOf(LF, Math.max(0, before - 1));
    if (found < 0 || found > MAX_CHUNK_LINE) {
      if (joined.byteLength > MAX_CHUNK_LINE) throw new ResponseParseError('A chunk-size line of the response is too long.');
      this.#pending = before === 0 ? Uint8Array.prototype.slice.call(joined) : joined;
      return -1;
    }
    if (found === 0 || joined[found - 1] !== CR) throw new ResponseParseError('A chunk-size line of the response does not end in CRLF.');
    this.#pending = joined.subarray(0, found - 1);
    return at + (found + 1 - before);
  }

  #takePending(): string {
    const bytes = this.#pending!;
    this.#pending = undefined;
    return latin1(bytes);
  }

  #onHead(): void {
    const lines = this.#takePending().split('\r\n');
    const status = STATUS_LINE.exec(lines[0]!);
    if (!status) throw new ResponseParseError(`workerd's status line is malformed: ${JSON.stringify(lines[0]!.slice(0, 100))}.`);
    const code = Number(status[2]);
    const headers: string[] = [];
    let length: number | undefined;
    let chunked = false;
    let hasEncoding = false;
    let reusable = status[1] === '1';
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0) throw new ResponseParseError(`A header line of workerd's response is malformed: ${JSON.stringify(line.slice(0, 100))}.`);
      const name = line.slice(0, colon);
      if (!HTTP_TOKEN.test(name)) throw new ResponseParseError(`A header name of workerd's response is malformed: ${JSON.stringify(name.slice(0, 100))}.`);
      const value = line.slice(colon + 1).replace(OWS, '');
      if (BAD_VALUE.test(value)) throw new ResponseParseError(`The header ${name} of workerd's response has a control character.`);
      headers.push(name, value);
      const lower = name.length === 14 || name.length === 17 || name.length === 10 ? name.toLowerCase() : '';
      if (lower === 'content-length') {
        if (!/^\d{1,15}$/.test(value) || (length !== undefined && length !== Number(value))) {
          throw new ResponseParseError(`workerd's response has an invalid Content-Length: ${JSON.stringify(value.slice(0, 100))}.`);
        }
        length = Number(value);
      } else if (lower === 'transfer-encoding') {
        hasEncoding = true;
        chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
      } else if (lower === 'connection') {
        if (/(?:^|,)\s*close\s*(?:,|$)/i.test(value)) reusable = false;
      }
    }
    if (code < 200) {
      // An interim answer (100 Continue, 103 Early Hints) is passed over; 101 would switch protocols, which the edge never asks for.
      if (code === 101) throw new ResponseParseError('workerd switched protocols, which the edge never asks for.');
      return;
    }
    this.#reusable = reusable;
    this.#events.head(code, status[3] ?? '', headers);
    if (this.#headRequest || code === 204 || code === 304) {
      this.#finish();
    } else if (hasEncoding) {
      // Both framings at once (RFC 9112 §6.3): the encoding wins, and the connection is not trusted again.
      if (length !== undefined) this.#reusable = false;
      if (chunked) this.#state = 'chunk-size';
      else {
        this.#reusable = false;
        this.#state = 'close';
      }
    } else if (length !== undefined) {
      this.#remaining = length;
      if (length === 0) this.#finish();
      else this.#state = 'length';
    } else {
      this.#reusable = false;
      this.#state = 'close';
    }
  }

  #onChunkSize(): void {
    const line = this.#takePending();
    const semicolon = line.indexOf(';');
    const size = (semicolon < 0 ? line : line.slice(0, semicolon)).trim();
    if (!HEX.test(size)) throw new ResponseParseError(`A chunk size of workerd's response is malformed: ${JSON.stringify(line.slice(0, 100))}.`);
    const length = parseInt(size, 16);
    if (length === 0) {
      this.#state = 'trailers';
      // The blank line that ends the trailers may be the very next two bytes: seed the search with a CRLF.
      this.#pending = CRLF;
      return;
    }
    this.#remaining = length;
    this.#state = 'chunk-data';
  }

  #finish(): void {
    this.#pending = undefined;
    this.#state = 'idle';
    this.#events.end(this.#reusable);
  }
}

const CRLF = new Uint8Array([CR, LF]);

function indexOfBlankLine(bytes: Uint8Array, from: number): number {
  for (let i = bytes.indexOf(CR, from); i >= 0 && i + 3 < bytes.byteLength; i = bytes.indexOf(CR, i + 1)) {
    if (bytes[i + 1] === LF && bytes[i + 2] === CR && bytes[i + 3] === LF) return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
