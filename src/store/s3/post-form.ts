/**
 * A streaming multipart/form-data reader (RFC 7578 over RFC 2046 §5.1) for S3 POST Object: the
 * fields before the file part are read into memory, bounded (`preDataMax`, S3's limit on what
 * precedes the file), and the file part's bytes are handed on as they arrive, never held whole.
 * Parts after the file are not parsed (S3 ignores them); `drain` reads what is left, bounded.
 */
import { S3Error } from './s3-error.ts';

export interface FormField {
  /** As sent (S3 compares field names case-insensitively: callers lower-case). */
  name: string;
  value: string;
}

export interface FormFile {
  /** The form field name of the file part, as sent. */
  name: string;
  /** The part's filename parameter, without any directory a client left in it; undefined when absent. */
  filename: string | undefined;
  contentType: string | undefined;
  /** The file's bytes; iterate once. Throws IncompleteBody when the form ends inside the file. */
  body: AsyncIterable<Uint8Array>;
}

export interface FormUpload {
  /** The fields before the file part, in order. */
  fields: FormField[];
  /** The file part, or undefined when the form closed without one. */
  file: FormFile | undefined;
  /**
   * Reads and discards what follows the file (after its body was read), at most about `limit`
   * bytes: true when the request ended within them (else the caller closes the connection).
   */
  drain(limit: number): Promise<boolean>;
}

const malformed = (why: string) => new S3Error('MalformedPOSTRequest', 400, `The body of your POST request is not well-formed multipart/form-data: ${why}`);
const preDataTooLarge = (limit: number) =>
  new S3Error(
    'MaxPostPreDataLengthExceeded',
    400,
    `Your POST request fields preceding the upload file were too large: at most ${limit} bytes may precede the file; send the file field last and fewer or shorter fields.`,
  );
const incomplete = () => new S3Error('IncompleteBody', 400, 'The request body ended before the file part did (no closing boundary).');

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** The boundary of a multipart/form-data Content-Type, or undefined when it is another type or names none. */
export function formBoundary(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const [type, ...params] = splitParams(contentType);
  if (type?.toLowerCase() !== 'multipart/form-data') return undefined;
  const boundary = params.find(([name]) => name === 'boundary')?.[1];
  // RFC 2046: 1 to 70 characters, not ending in a space.
  return boundary !== undefined && /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/.test(boundary) ? boundary : undefined;
}

/**
 * `type; a=b; c="d"` -> ['type', ['a', 'b'], ['c', 'd']] (parameter names lower-cased). Quoted
 * values are taken as they are: browsers (HTML's form encoding) escape `"` and line breaks as
 * %22, %0D and %0A and send backslashes as they are (a Windows path), so `\` escapes nothing.
 */
function splitParams(header: string): [string | undefined, ...Array<[string, string]>] {
  const semi = header.indexOf(';');
  const head = (semi < 0 ? header : header.slice(0, semi)).trim();
  const params: Array<[string, string]> = [];
  const re = /;\s*([^=;\s]+)\s*=\s*(?:"([^"]*)"|([^;]*))/g;
  for (const m of header.slice(semi < 0 ? header.length : semi).matchAll(re)) {
    params.push([m[1]!.toLowerCase(), m[2] ?? m[3]!.trim()]);
  }
  return [head, ...params];
}

/** Pulls chunks from the source into one buffer of not-yet-consumed bytes. */
class Reader {
  readonly #source: AsyncIterator<Uint8Array>;
  buffer: Buffer;
  ended = false;

  constructor(source: AsyncIterable<Uint8Array>, initial: Buffer) {
    this.#source = source[Symbol.asyncIterator]();
    this.buffer = initial;
  }

  /** Appends the next chunk; false when the source has ended. */
  async more(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.#source.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    const chunk = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    return true;
  }
}

/**
 * Reads the form up to the start of the file part's bytes. `fileField` names the file part
 * (case-insensitively); at most `preDataMax` bytes (boundaries and part headers included) may
 * come before its bytes.
 */
export async function readForm(source: AsyncIterable<Uint8Array>, boundary: string, preDataMax: number, fileField = 'file'): Promise<FormUpload> {
  // The first delimiter may open the body without a preceding CRLF: reading after a virtual CRLF
  // makes every delimiter `\r\n--boundary`.
  const reader = new Reader(source, Buffer.from(CRLF));
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  let consumed = -CRLF.length;
  const fields: FormField[] = [];

  /** The index of `needle` in the buffer, reading more as needed, within the pre-data limit. */
  const find = async (needle: Buffer, from: number): Promise<number> => {
    for (;;) {
      const at = reader.buffer.indexOf(needle, from);
      if (at >= 0) {
        if (consumed + at + needle.length > preDataMax) throw preDataTooLarge(preDataMax);
        return at;
      }
      if (consumed + reader.buffer.length > preDataMax) throw preDataTooLarge(preDataMax);
      if (!(await reader.more())) throw malformed('it ended before its closing boundary.');
    }
  };
  const need = async (bytes: number): Promise<void> => {
    while (reader.buffer.length < bytes) {
      if (consumed + reader.buffer.length > preDataMax) throw preDataTooLarge(preDataMax);
      if (!(await reader.more())) throw malformed('it ended before its closing boundary.');
    }
  };
  const consume = (bytes: number): void => {
    reader.buffer = reader.buffer.subarray(bytes);
    consumed += bytes;
  };

  // The preamble, up to the first delimiter, is ignored (RFC 2046).
  consume(await find(delimiter, 0));
  for (;;) {
    // At a delimiter: `--` closes the form; else optional transport padding and CRLF.
    consume(delimiter.length);
    await need(2);
    if (reader.buffer[0] === 0x2d && reader.buffer[1] === 0x2d) return { fields, file: undefined, drain: (limit) => drain(reader, limit) };
    const lineEnd = await find(CRLF, 0);
    if (!/^[ \t]*$/.test(reader.buffer.subarray(0, lineEnd).toString('latin1'))) throw malformed('a boundary line has text after the boundary.');
    consume(lineEnd + CRLF.length);
    // Part headers, up to an empty line (none at all: the empty line comes first).
    await need(2);
    let headerText = '';
    if (reader.buffer[0] === 0x0d && reader.buffer[1] === 0x0a) {
      consume(2);
    } else {
      const end = await find(HEADER_END, 0);
      headerText = reader.buffer.subarray(0, end).toString('utf8');
      consume(end + HEADER_END.length);
    }
    const part = partHeaders(headerText);
    if (part.name.toLowerCase() === fileField) {
      const body = fileBody(reader, delimiter);
      return { fields, file: { name: part.name, filename: part.filename, contentType: part.contentType, body }, drain: (limit) => drain(reader, limit) };
    }
    const end = await find(delimiter, 0);
    fields.push({ name: part.name, value: reader.buffer.subarray(0, end).toString('utf8') });
    consume(end);
  }
}

function partHeaders(text: string): { name: string; filename: string | undefined; contentType: string | undefined } {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw malformed(`a part header line is not "name: value" (${JSON.stringify(line.slice(0, 80))}).`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-disposition') disposition = value;
    else if (name === 'content-type') contentType = value;
  }
  if (disposition === undefined) throw malformed('a part has no Content-Disposition header.');
  const [type, ...params] = splitParams(disposition);
  const name = params.find(([param]) => param === 'name')?.[1];
  if (type?.toLowerCase() !== 'form-data' || name === undefined) throw malformed("a part's Content-Disposition is not form-data with a name.");
  const raw = params.find(([param]) => param === 'filename')?.[1];
  // Some clients send the whole path the file had on their disk: only its last component is the file name.
  const filename = raw === undefined ? undefined : raw.slice(Math.max(raw.lastIndexOf('/'), raw.lastIndexOf('\\')) + 1);
  return { name, filename, contentType };
}

/** The file part's bytes, up to the next delimiter (left in the buffer). */
async function* fileBody(reader: Reader, delimiter: Buffer): AsyncIterable<Uint8Array> {
  for (;;) {
    const at = reader.buffer.indexOf(delimiter);
    if (at >= 0) {
      if (at > 0) yield reader.buffer.subarray(0, at);
      reader.buffer = reader.buffer.subarray(at);
      return;
    }
    // All but a tail that could be the start of the delimiter is file data.
    const safe = reader.buffer.length - (delimiter.length - 1);
    if (safe > 0) {
      const data = reader.buffer.subarray(0, safe);
      reader.buffer = reader.buffer.subarray(safe);
      yield data;
    }
    if (!(await reader.more())) throw incomplete();
  }
}

async function drain(reader: Reader, limit: number): Promise<boolean> {
  let seen = reader.buffer.length;
  reader.buffer = Buffer.alloc(0);
  while (seen <= limit) {
    if (!(await reader.more())) return true;
    seen += reader.buffer.length;
    reader.buffer = Buffer.alloc(0);
  }
  return false;
}
