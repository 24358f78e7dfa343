/**
 * An object's HTTP metadata between header values and the text it is stored as: every surface that
 * reads the standard headers into a store (S3, the management API) keeps their text
 * (core/http/header-text.ts: UTF-8, else one character a byte), and every one that writes them
 * back as headers (S3 GET/HEAD, public buckets, the R2 API) sends that text's UTF-8 bytes.
 */
import { headerBytes, headerText } from '../../core/http/header-text.ts';
import type { HttpMetadata } from './types.ts';

/** The fields that are header text (cacheExpiry is a time). */
const TEXT_FIELDS = ['contentType', 'contentLanguage', 'contentDisposition', 'contentEncoding', 'cacheControl'] as const;

function converted(meta: HttpMetadata, convert: (value: string) => string): HttpMetadata {
  const out: HttpMetadata = { ...meta };
  for (const field of TEXT_FIELDS) {
    const value = out[field];
    if (value !== undefined) out[field] = convert(value);
  }
  return out;
}

/** Metadata read from received header values (one character per byte, as node gives them) as the text to store. */
export function httpMetadataAsText(received: HttpMetadata): HttpMetadata {
  return converted(received, headerText);
}

/** Stored metadata as header values to write: its text as UTF-8 bytes, one character per byte. */
export function httpMetadataAsHeaderBytes(stored: HttpMetadata): HttpMetadata {
  return converted(stored, headerBytes);
}
