/**
 * A script upload's multipart body: read whole only up to the upload limit (a larger body is
 * refused by its Content-Length at once, else as soon as the limit is passed), then split into
 * the `metadata` part (JSON, as wrangler sends it, or the bracketed fields the official SDK makes
 * of an object: `metadata[main_module]`, `metadata[bindings][][name]`) and the module parts.
 */
import { ApiError } from '../errors.ts';
import { readLimited } from '../request-body.ts';

/** The platform's limit on a script upload (a paid plan's 10 MiB). */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

export interface UploadPart {
  /** The part's file name, else its field name. */
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

export interface UploadForm {
  metadata: Record<string, unknown>;
  parts: UploadPart[];
}

function tooLarge(): ApiError {
  return new ApiError('API_WORKER_TOO_LARGE', { message: `Your Worker exceeded the size limit of ${MAX_UPLOAD_BYTES} bytes: the upload is larger` });
}

function invalid(message: string): ApiError {
  return new ApiError('API_WORKER_INVALID', { message });
}

async function readBounded(request: Request): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_UPLOAD_BYTES) throw tooLarge();
  return readLimited(request.body, MAX_UPLOAD_BYTES, tooLarge);
}

/** Rebuilds an object from the SDK's bracketed form fields (`a[b][]`, `a[c][][d]`); a repeated key in an array of objects starts its next element. */
export function fromBrackets(fields: ReadonlyArray<[string, string]>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of fields) {
    const path = [...key.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1]!);
    let node: Record<string, unknown> | unknown[] = root;
    for (let i = 0; i < path.length; i++) {
      const segment = path[i]!;
      const last = i === path.length - 1;
      if (Array.isArray(node)) {
        // segment is '' (an array): a primitive is pushed; an object continues the last element unless it already has this key.
        if (last) {
          node.push(parseScalar(value));
          break;
        }
        const nextKey = path[i + 1]!;
        let element = node.at(-1) as Record<string, unknown> | undefined;
        if (element === undefined || typeof element !== 'object' || (nextKey !== '' && i + 1 === path.length - 1 && nextKey in element)) {
          element = {};
          node.push(element);
        }
        node = element;
        continue;
      }
      if (last) {
        node[segment] = parseScalar(value);
        break;
      }
      const isArray = path[i + 1] === '';
      node[segment] ??= isArray ? [] : {};
      node = node[segment] as Record<string, unknown> | unknown[];
    }
  }
  return root;
}

/**
 * The upload's multipart media type. The official SDK (7.3) labels its multipart body
 * `application/javascript`, without the boundary: then the boundary is the body's first line.
 */
function multipartType(declared: string, bytes: Uint8Array): string {
  if (/^multipart\/form-data/i.test(declared)) return declared;
  const head = Buffer.from(bytes.subarray(0, 80)).toString('latin1');
  const boundary = /^--([0-9A-Za-z'()+_,./:=?-]{1,70})\r\n/.exec(head)?.[1];
  if (boundary === undefined) throw invalid('A script upload must be multipart/form-data: a "metadata" part (JSON with main_module) and one part per module');
  return `multipart/form-data; boundary=${boundary}`;
}

function parseScalar(value: string): unknown {
  return value === 'true' ? true : value === 'false' ? false : value;
}

export async function readUploadForm(request: Request): Promise<UploadForm> {
  const bytes = await readBounded(request);
  const contentType = multipartType(request.headers.get('content-type') ?? '', bytes);
  let form: FormData;
  try {
    form = await new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    throw invalid(`The upload is not valid multipart/form-data: ${(error as Error).message}`);
  }
  let metadata: Record<string, unknown> | undefined;
  const bracketed: Array<[string, string]> = [];
  const parts: UploadPart[] = [];
  for (const [field, value] of form.entries()) {
    if (field === 'metadata') {
      const text = typeof value === 'string' ? value : await value.text();
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        metadata = parsed as Record<string, unknown>;
      } catch {
        throw invalid('The metadata part must be a JSON object, such as {"main_module": "index.js", "compatibility_date": "2025-01-01"}');
      }
    } else if (field.startsWith('metadata[') && typeof value === 'string') {
      bracketed.push([field.slice('metadata'.length), value]);
    } else if (typeof value !== 'string') {
      parts.push({ name: value.name || field, contentType: value.type.split(';')[0]!.trim().toLowerCase(), bytes: new Uint8Array(await value.arrayBuffer()) });
    }
  }
  metadata ??= bracketed.length > 0 ? fromBrackets(bracketed) : undefined;
  if (metadata === undefined) throw invalid('The upload has no metadata part: send a "metadata" part with JSON such as {"main_module": "index.js"}');
  return { metadata, parts };
}
