/**
 * The dashboard's only way to the server: the public management API under /client/v4, signed in
 * by the session cookie (httpOnly: this code never sees it) plus the session's CSRF token on every
 * request that is not a GET. Answers are the API's envelope; a refusal becomes an ApiFailure that
 * carries the API's own error entries, so pages show its words.
 */

export const API = '/client/v4';

export interface ErrorEntry {
  code: number;
  message: string;
  source?: { pointer: string };
}

export class ApiFailure extends Error {
  readonly status: number;
  readonly errors: ErrorEntry[];
  constructor(status: number, errors: ErrorEntry[]) {
    super(errors.map((e) => e.message).join('; ') || `The server answered ${status}.`);
    this.status = status;
    this.errors = errors;
  }
}

export interface Envelope<T> {
  result: T;
  result_info?: { cursor?: string; is_truncated?: boolean; delimited?: string[]; count?: number };
  success: boolean;
  errors: ErrorEntry[];
}

let csrfToken: string | null = null;
let onSignedOut: () => void = () => undefined;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when a request finds the session gone (expired, or ended elsewhere). */
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

function headersFor(method: string, extra?: Record<string, string>): Record<string, string> {
  return { ...(method !== 'GET' && csrfToken ? { 'x-csrf-token': csrfToken } : {}), ...extra };
}

/** Reads an envelope answer; throws ApiFailure on a refusal. */
async function readEnvelope<T>(response: Response): Promise<Envelope<T>> {
  let envelope: Envelope<T>;
  try {
    envelope = (await response.json()) as Envelope<T>;
  } catch {
    throw new ApiFailure(response.status, [{ code: 0, message: `The server answered ${response.status} without a readable body.` }]);
  }
  if (!envelope.success) {
    if (response.status === 401 && envelope.errors.some((e) => e.code === 10000)) onSignedOut();
    throw new ApiFailure(response.status, envelope.errors);
  }
  return envelope;
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<Envelope<T>> {
  const response = await fetch(API + path, {
    method,
    credentials: 'same-origin',
    headers: headersFor(method, body === undefined ? undefined : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return readEnvelope<T>(response);
}

export async function get<T>(path: string): Promise<T> {
  return (await call<T>('GET', path)).result;
}

/**
 * Asks the GraphQL analytics endpoint (POST /graphql): its `data`, or an ApiFailure carrying its
 * `errors` (GraphQL answers 200 with `{data: null, errors}` when it cannot run a query).
 */
export async function graphql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const response = await fetch(`${API}/graphql`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: headersFor('POST', { 'content-type': 'application/json' }),
    body: JSON.stringify({ query, variables }),
  });
  let answer: { data?: T | null; errors?: Array<{ message: string }> | null; success?: boolean };
  try {
    answer = (await response.json()) as typeof answer;
  } catch {
    throw new ApiFailure(response.status, [{ code: 0, message: `The server answered ${response.status} without a readable body.` }]);
  }
  // A refusal before the query runs (credentials, CSRF) is the API's envelope.
  if (answer.success === false) return readEnvelope<T>(new Response(JSON.stringify(answer), { status: response.status })).then((e) => e.result);
  if (answer.errors?.length || !answer.data)
    throw new ApiFailure(
      response.status,
      (answer.errors ?? []).map((e) => ({ code: 0, message: e.message })),
    );
  return answer.data;
}

/**
 * Sends a body with upload progress (fetch reports none): `onProgress(loadedBytes)` as it goes.
 * Resolves to the envelope's result; `signal` aborts it.
 */
export function sendWithProgress<T>(
  method: string,
  path: string,
  body: Blob,
  options: {
    headers?: Record<string, string>;
    onProgress: (loaded: number) => void;
    signal?: AbortSignal;
  },
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, API + path);
    for (const [name, value] of Object.entries(headersFor(method, options.headers))) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => options.onProgress(event.loaded);
    xhr.onerror = () => reject(new ApiFailure(0, [{ code: 0, message: 'The upload failed: the connection to the server was lost.' }]));
    xhr.onabort = () => reject(new ApiFailure(0, [{ code: 0, message: 'The upload was cancelled.' }]));
    xhr.onload = () => {
      const response = new Response(xhr.responseText, { status: xhr.status, headers: { 'content-type': 'application/json' } });
      readEnvelope<T>(response).then((envelope) => resolve(envelope.result), reject);
    };
    options.signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(body);
  });
}

/** A path segment: keys and names percent-encoded, `/` included (the API's object routes expect it). */
export function seg(value: string | number): string {
  return encodeURIComponent(String(value));
}

/** The words to show for a failure: the API's own messages, one per entry. */
export function messagesOf(error: unknown): string[] {
  if (error instanceof ApiFailure) return error.errors.map((e) => e.message);
  return [error instanceof Error ? error.message : String(error)];
}
