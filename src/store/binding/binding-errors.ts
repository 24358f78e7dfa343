/**
 * How engine failures reach a script: a plain `Error` (no `code`, name "Error") whose message is
 * `<action>: <message> (<v4 code>)`, as the real runtime formats backend errors.
 */
import { StoreError, storeFaultOf } from '../engine/errors.ts';

export type BindingAction =
  'head' | 'get' | 'put' | 'list' | 'delete' | 'createMultipartUpload' | 'uploadPart' | 'completeMultipartUpload' | 'abortMultipartUpload';

/**
 * A failure that belongs to the script's own body stream (it failed while the engine read it, or
 * it has no known length): the script gets `reason` itself, not an internal error.
 */
export class ScriptStreamFailure {
  readonly reason: unknown;
  constructor(reason: unknown) {
    this.reason = reason;
  }
}

const INTERNAL = 'We encountered an internal error. Please try again. (10001)';
const ALGORITHM_NAMES: Record<string, string> = { md5: 'MD5', sha1: 'SHA-1', sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' };

/**
 * Converts anything the engine threw into the error a script sees. A failure of the script's own
 * body stream is rethrown as is; a backend fault becomes ServiceUnavailable (10043); any other
 * foreign error is an internal error (10001) with the original as `cause`.
 */
export function toScriptError(action: BindingAction, error: unknown): unknown {
  if (error instanceof ScriptStreamFailure) return error.reason;
  if (error instanceof StoreError) return new Error(`${action}: ${storeMessage(error)} (${error.v4})`);
  // A backend that is down, slow or full (the database, the blob store, the disk): retryable, and said so.
  const fault = storeFaultOf(error);
  if (fault) return new Error(`${action}: ${fault.message} (${fault.v4})`, { cause: error });
  return new Error(`${action}: ${INTERNAL}`, { cause: error });
}

/** The backend message; BadDigest's is the runtime's three lines, built from the details. */
function storeMessage(error: StoreError): string {
  const details = error.details;
  if (error.code !== 'STORE_BAD_DIGEST' || typeof details?.algorithm !== 'string') return error.message;
  const name = ALGORITHM_NAMES[details.algorithm] ?? details.algorithm.toUpperCase();
  const expected = String(details.expected).toLowerCase();
  const actual = String(details.actual).toLowerCase();
  return `The ${name} checksum you specified did not match what we received.\nYou provided a ${name} checksum with value: ${expected}\nActual ${name} was: ${actual}`;
}

/** Runs an engine call, rethrowing failures in the script-facing shape. */
export async function scriptCall<T>(action: BindingAction, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toScriptError(action, error);
  }
}

/**
 * The runtime's refusal of a ReadableStream whose length it does not know, by put() or
 * uploadPart(): a request or response body with a length, the readable half of a FixedLengthStream
 * or a get body passes; a stream the script builds does not.
 */
export function unknownLengthError(): TypeError {
  return new TypeError('Provided readable stream must have a known length (request/response body or readable half of FixedLengthStream)');
}

/** The JSG argument-conversion error for a parameter of the wrong type. */
export function wrongParameter(method: string, owner: string, index: number, types: string): TypeError {
  return new TypeError(`Failed to execute '${method}' on '${owner}': parameter ${index} is not of type '${types}'.`);
}

/** The JSG error for a struct field of the wrong type. */
export function wrongField(field: string, struct: string, type: string): TypeError {
  return new TypeError(`Incorrect type for the '${field}' field on '${struct}': the provided value is not of type '${type}'.`);
}
