/**
 * User metadata values (`x-amz-meta-*`) between HTTP headers and the store, as S3 documents them:
 * a value is kept as text (what a script sees in `customMetadata`); RFC 2047 encoded-words in it
 * (`=?UTF-8?B?w6k=?=`) are decoded on the way in, and a value that is not printable US-ASCII is
 * sent back as one encoded-word, `=?UTF-8?B?<base64 of its UTF-8>?=`, since a header cannot carry
 * it as text. A raw non-ASCII header value is read as the UTF-8 it nearly always is (what every
 * SDK and browser sends); bytes that are not UTF-8 are read as Latin-1, one character a byte.
 */
import { headerText } from '../../core/http/header-text.ts';

/** Printable US-ASCII and tab: sent as it is. */
const PLAIN = /^[\t\x20-\x7e]*$/;

/** One RFC 2047 encoded-word: =?charset?B|Q?text?= (a charset's *language suffix, RFC 2231, allowed). */
const ENCODED_WORD = /^=\?([^?*\s]+)(?:\*[^?\s]*)?\?([BbQq])\?([^?\s]*)\?=$/;

/** The text of one encoded-word, or undefined when it is not one that decodes (an unknown charset, bad base64). */
function decodeWord(word: string): string | undefined {
  const m = ENCODED_WORD.exec(word);
  if (!m) return undefined;
  const [, charset, encoding, text] = m as unknown as [string, string, string, string];
  let bytes: Buffer;
  if (encoding === 'B' || encoding === 'b') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
    bytes = Buffer.from(text, 'base64');
  } else {
    if (/=(?![0-9A-Fa-f]{2})/.test(text)) return undefined;
    bytes = Buffer.from(
      text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    );
  }
  try {
    return new TextDecoder(charset, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Decodes the encoded-words of `text` (RFC 2047 §6.2: white space between two adjacent ones is dropped); other text stays. */
function decodeEncodedWords(text: string): string {
  if (!text.includes('=?')) return text;
  const pieces = text.split(/([ \t]+)/);
  let out = '';
  let lastWasWord = false;
  let pendingSpace = '';
  for (const piece of pieces) {
    if (piece === '') continue;
    if (/^[ \t]+$/.test(piece)) {
      pendingSpace += piece;
      continue;
    }
    const decoded = decodeWord(piece);
    if (decoded !== undefined) {
      out += (lastWasWord ? '' : pendingSpace) + decoded;
      lastWasWord = true;
    } else {
      out += pendingSpace + piece;
      lastWasWord = false;
    }
    pendingSpace = '';
  }
  return out + pendingSpace;
}

/**
 * The text a metadata value stands for: `value` as node gives a header (`form` 'header': one
 * character a byte received, latin1), or a value that is already text ('text': a form field).
 */
export function metadataValueFromHeader(value: string, form: 'header' | 'text' = 'header'): string {
  return decodeEncodedWords(form === 'header' ? headerText(value) : value);
}

/** A stored metadata value as a header value: as it is when printable US-ASCII, else one UTF-8 B encoded-word. */
export function metadataValueToHeader(value: string): string {
  return PLAIN.test(value) ? value : `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}
