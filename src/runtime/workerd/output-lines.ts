/**
 * Splits what workerd prints into lines without ever holding more than `maxLineBytes` of one: a
 * longer line is cut there (at a UTF-8 character boundary) and the rest of it is counted and
 * dropped as it arrives, so a script's single 100 MB console.log costs the server a few KiB of
 * memory, not 100 MB (node:readline keeps a line whole until its newline).
 */

export type LineHandler = (line: string, cutBytes: number) => void;

const NEWLINE = 0x0a;
const CR = 0x0d;

export class LineSplitter {
  readonly #maxLineBytes: number;
  readonly #onLine: LineHandler;
  /** The start of the line being read (at most maxLineBytes, copied out of the chunks it came in). */
  #kept: Buffer[] = [];
  #keptBytes = 0;
  /** Bytes of the line being read past maxLineBytes: counted, not kept. */
  #cutBytes = 0;
  /** The line's last byte so far was a CR (of a CRLF: not part of the line). */
  #endsWithCr = false;

  constructor(maxLineBytes: number, onLine: LineHandler) {
    if (!(maxLineBytes >= 4)) throw new RangeError('maxLineBytes must be at least 4 (one UTF-8 character).');
    this.#maxLineBytes = maxLineBytes;
    this.#onLine = onLine;
  }

  /** Reads `chunk`, calling the handler for each line it completes. */
  push(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    while (start < bytes.length) {
      const newline = bytes.indexOf(NEWLINE, start);
      const end = newline === -1 ? bytes.length : newline;
      if (newline !== -1 && this.#keptBytes === 0 && this.#cutBytes === 0) {
        // A whole line inside this chunk: read it where it is.
        this.#emit(bytes.subarray(start, end), 0, end > start && bytes[end - 1] === CR);
      } else {
        this.#keep(bytes.subarray(start, end));
        if (newline !== -1) this.#emitKept();
      }
      if (newline === -1) return;
      start = newline + 1;
    }
  }

  /** The output ended: a last line without its newline is still a line. */
  end(): void {
    if (this.#keptBytes > 0 || this.#cutBytes > 0) this.#emitKept();
  }

  #keep(part: Buffer): void {
    if (part.length === 0) return;
    this.#endsWithCr = part[part.length - 1] === CR;
    const room = this.#maxLineBytes - this.#keptBytes;
    const kept = Math.min(room, part.length);
    if (kept > 0) {
      // A copy: the chunk it came in may be large, and is not held for one line's sake.
      this.#kept.push(Buffer.from(part.subarray(0, kept)));
      this.#keptBytes += kept;
    }
    this.#cutBytes += part.length - kept;
  }

  #emitKept(): void {
    const kept = this.#kept.length === 1 ? this.#kept[0]! : Buffer.concat(this.#kept, this.#keptBytes);
    const cut = this.#cutBytes;
    const endsWithCr = this.#endsWithCr;
    this.#kept = [];
    this.#keptBytes = 0;
    this.#cutBytes = 0;
    this.#endsWithCr = false;
    this.#emit(kept, cut, endsWithCr);
  }

  /** `raw`: the line's first bytes (at most the cap, unless whole); `cut`: bytes past them; `endsWithCr`: its last byte is a CRLF's CR. */
  #emit(raw: Buffer, cut: number, endsWithCr: boolean): void {
    let line = raw;
    let cutBytes = cut;
    if (endsWithCr) {
      if (cutBytes > 0) cutBytes--;
      else line = line.subarray(0, line.length - 1);
    }
    if (line.length > this.#maxLineBytes) {
      cutBytes += line.length - this.#maxLineBytes;
      line = line.subarray(0, this.#maxLineBytes);
    }
    if (cutBytes > 0) {
      const whole = utf8Prefix(line, line.length);
      cutBytes += line.length - whole;
      line = line.subarray(0, whole);
    }
    let text = line.toString('utf8');
    // Bytes that are not UTF-8 decode to U+FFFD (3 bytes each): the text may be longer than its bytes were.
    if (text.length * 3 > this.#maxLineBytes && Buffer.byteLength(text) > this.#maxLineBytes) {
      const encoded = Buffer.from(text, 'utf8');
      text = encoded.subarray(0, utf8Prefix(encoded, this.#maxLineBytes)).toString('utf8');
    }
    this.#onLine(text, cutBytes);
  }
}

/**
 * The length of the longest prefix of `bytes` within `max` that does not end inside a UTF-8
 * character (a character whose lead byte is there and not all of its continuation bytes).
 */
export function utf8Prefix(bytes: Uint8Array, max: number): number {
  const end = Math.min(max, bytes.length);
  // A character is at most 4 bytes: look back at most 3 for the last lead byte.
  for (let back = 1; back <= Math.min(4, end); back++) {
    const byte = bytes[end - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? end - back : end;
  }
  return end;
}
