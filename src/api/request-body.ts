/**
 * Request bodies: JSON only (`Content-Type: application/json`), refused with 413 before they are
 * read whole when larger than the limit (by Content-Length at once, else while streaming), and
 * with 400 before they are parsed when not JSON or nested deeper than MAX_JSON_DEPTH (validation
 * and error messages walk bodies recursively; 10,000 levels overflowed the stack).
 */
import { MAX_JSON_DEPTH, scanJsonShape } from '../core/json-shape.ts';
import { API_ERRORS, ApiError } from './errors.ts';

/** Default limit of a request body: the largest valid bodies (40 custom fields, filters) are a few KiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** `anyMediaType`: the body is read as JSON whatever its Content-Type (routes whose real clients label JSON `text/plain`). */
export async function readJsonBody(request: Request, maxBytes: number, options: { anyMediaType?: boolean } = {}): Promise<unknown> {
  const mediaType = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json' && options.anyMediaType !== true) {
    const entry = API_ERRORS.API_INVALID_REQUEST_HEADERS;
    throw new ApiError('API_INVALID_REQUEST_HEADERS', {
      items: [
        { code: entry.code, message: entry.message, error_chain: [{ code: 6105, message: 'Invalid Content-Type header, valid values are application/json' }] },
      ],
    });
  }
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  const bytes = await readLimited(request.body, maxBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError('API_MALFORMED_JSON');
  }
  const shape = scanJsonShape(text, { maxDepth: MAX_JSON_DEPTH });
  if (shape.kind === 'too-deep') {
    throw new ApiError('API_JSON_TOO_DEEP', { message: `Malformed JSON in request body: arrays and objects nest more than ${MAX_JSON_DEPTH} levels deep` });
  }
  if (shape.kind !== 'json') throw new ApiError('API_MALFORMED_JSON');
  return JSON.parse(text) as unknown;
}

/**
 * A body read whole, up to `maxBytes`: past that the stream is cancelled and `refusal()` thrown
 * (by default the API's "body too large"), so an oversized body is never held whole.
 */
export async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  refusal: () => Error = () => tooLarge(maxBytes),
): Promise<Uint8Array> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw refusal();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('API_BODY_TOO_LARGE', { message: `Request body is too large: at most ${maxBytes} bytes are accepted` });
}
