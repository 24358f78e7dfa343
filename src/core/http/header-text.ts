/**
 * Header values beyond ASCII, between the bytes on the wire and the text a store keeps. Node gives
 * a received header value one character per byte (latin1) and writes one byte per character (and
 * refuses a character above 0xFF). What clients send beyond ASCII is nearly always UTF-8 (the SDKs,
 * curl in a UTF-8 locale): a value whose bytes are valid UTF-8 is read as that text, any other one
 * character a byte, as received. Out, text is written as its UTF-8 bytes, so a value read from
 * UTF-8 goes back as exactly the bytes that came in (S3 returns the bytes it got).
 */

/** ASCII only: the same as bytes and as text. */
// eslint-disable-next-line no-control-regex -- every ASCII character, controls included, is the point
const ASCII = /^[\x00-\x7f]*$/;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text a received header value (one character per byte, as node gives it) stands for. */
export function headerText(received: string): string {
  if (ASCII.test(received)) return received;
  try {
    return UTF8.decode(Buffer.from(received, 'latin1'));
  } catch {
    // Not UTF-8: one character per byte, as received.
    return received;
  }
}

/** `text` as node writes a header value: one character per byte of its UTF-8. */
export function headerBytes(text: string): string {
  return ASCII.test(text) ? text : Buffer.from(text, 'utf8').toString('latin1');
}
