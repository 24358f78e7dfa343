/**
 * What the bucket binding's cases (`*.case.ts` beside this file) are written with. Every case runs
 * in this process on a bucket of `edgeport/store` (binding-cases.ts) and inside workerd through a
 * script, on several compatibility dates with and without nodejs_compat
 * (test/runtime/workerd/store-binding.test.ts). So cases and this kit use only what a script's
 * isolate has, Web APIs: no node:assert, no node:crypto, no Buffer (eslint.config.js keeps them out).
 */
import type { StoreBucket } from '../../../src/store/binding/index.ts';

export type DigestAlgorithm = 'md5' | 'sha1' | 'sha256' | 'sha384' | 'sha512';

export interface CaseContext {
  /** A bucket of the case's own, empty when the case starts. */
  bucket: StoreBucket;
  /** Where the case runs: in-process (edgeport/store) or in a script on workerd. */
  runtime: 'in-process' | 'workerd';
  /** Whether list() honours `include` under the compatibility date and flags the case runs with. */
  listHonorsInclude: boolean;
  /** Lowercase hex digest of `data` (a string as UTF-8): node:crypto in-process, crypto.subtle in workerd. */
  digest(algorithm: DigestAlgorithm, data: string | Uint8Array): Promise<string>;
}

/** A case file's cases, by name: each throws (or rejects) when the binding misbehaves. */
export type BindingCases = Record<string, (context: CaseContext) => Promise<void> | void>;

export class AssertionError extends Error {
  override name = 'AssertionError';
}

type ErrorClass = new (...args: never[]) => Error;
/** What throws() and rejects() accept: an error class, a RegExp for the message, `{ name?, message? }`, or a validator returning true. */
export type Expected = ErrorClass | RegExp | { name?: string; message?: string | RegExp } | ((error: unknown) => boolean);

/** A readable rendering of a value for failure messages. */
function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return `${value.constructor.name}(${value.byteLength})`;
  try {
    return JSON.stringify(value, (_, v: unknown) => (v === undefined ? '<undefined>' : typeof v === 'bigint' ? `${v}n` : v)) ?? String(value);
  } catch {
    return String(value);
  }
}

function fail(message: string | undefined, detail: string): never {
  throw new AssertionError(message ? `${message}: ${detail}` : detail);
}

function bytesOf(value: ArrayBuffer | ArrayBufferView): Uint8Array {
  return value instanceof ArrayBuffer ? new Uint8Array(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}

/** Strict deep equality, as node:assert's deepStrictEqual for the values cases compare. */
function isDeepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Date) return a.getTime() === (b as Date).getTime();
  if (a instanceof ArrayBuffer || ArrayBuffer.isView(a)) {
    const x = bytesOf(a);
    const y = bytesOf(b as ArrayBuffer);
    return x.byteLength === y.byteLength && x.every((byte, i) => byte === y[i]);
  }
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every(
    (key) => Object.prototype.hasOwnProperty.call(b, key) && isDeepEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

function matches(error: unknown, expected: Expected): boolean {
  if (expected instanceof RegExp) return error instanceof Error && expected.test(error.message);
  if (typeof expected === 'function') {
    if (expected === Error || expected.prototype instanceof Error) return error instanceof (expected as ErrorClass);
    return (expected as (error: unknown) => boolean)(error) === true;
  }
  if (!(error instanceof Error)) return false;
  if (expected.name !== undefined && error.name !== expected.name) return false;
  const message = expected.message;
  if (message === undefined) return true;
  return typeof message === 'string' ? error.message === message : message.test(error.message);
}

function describeExpected(expected: Expected): string {
  if (typeof expected === 'function') return expected.name || 'a validator';
  return show(expected instanceof RegExp ? String(expected) : expected);
}

/** The assertions cases use, named and behaving as node:assert/strict's. */
export interface Assert {
  ok(value: unknown, message?: string): asserts value;
  equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  notEqual(actual: unknown, expected: unknown, message?: string): void;
  deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  match(actual: string, pattern: RegExp, message?: string): void;
  throws(run: () => unknown, expected: Expected, message?: string): void;
  doesNotThrow(run: () => unknown, message?: string): void;
  rejects(promise: Promise<unknown> | (() => Promise<unknown>), expected: Expected, message?: string): Promise<void>;
}

export const assert: Assert = {
  ok(value: unknown, message?: string): asserts value {
    if (!value) fail(message, `expected a truthy value, got ${show(value)}`);
  },
  equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T {
    if (!Object.is(actual, expected)) fail(message, `expected ${show(expected)}, got ${show(actual)}`);
  },
  notEqual(actual: unknown, expected: unknown, message?: string): void {
    if (Object.is(actual, expected)) fail(message, `expected anything but ${show(expected)}`);
  },
  deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T {
    if (!isDeepEqual(actual, expected)) fail(message, `expected ${show(expected)}, got ${show(actual)}`);
  },
  match(actual: string, pattern: RegExp, message?: string): void {
    if (typeof actual !== 'string' || !pattern.test(actual)) fail(message, `expected a match for ${String(pattern)}, got ${show(actual)}`);
  },
  throws(run: () => unknown, expected: Expected, message?: string): void {
    try {
      run();
    } catch (error) {
      if (!matches(error, expected)) fail(message, `expected an error like ${describeExpected(expected)}, got ${show(error)}`);
      return;
    }
    fail(message, `expected an error like ${describeExpected(expected)}, but nothing was thrown`);
  },
  doesNotThrow(run: () => unknown, message?: string): void {
    try {
      run();
    } catch (error) {
      fail(message, `expected no error, got ${show(error)}`);
    }
  },
  async rejects(promise: Promise<unknown> | (() => Promise<unknown>), expected: Expected, message?: string): Promise<void> {
    try {
      await (typeof promise === 'function' ? promise() : promise);
    } catch (error) {
      if (!matches(error, expected)) fail(message, `expected a rejection like ${describeExpected(expected)}, got ${show(error)}`);
      return;
    }
    fail(message, `expected a rejection like ${describeExpected(expected)}, but it resolved`);
  },
};

/** Asserts a rejection with exactly this error class (not a subclass) and message. */
export async function rejectsWith(promise: Promise<unknown>, type: ErrorClass, message: string | RegExp): Promise<void> {
  const wanted = `a ${type.name} with message ${typeof message === 'string' ? JSON.stringify(message) : String(message)}`;
  try {
    await promise;
  } catch (error) {
    const ok = error instanceof Error && error.constructor === type && (typeof message === 'string' ? error.message === message : message.test(error.message));
    if (!ok) fail(undefined, `expected ${wanted}, got ${describeError(error)}`);
    return;
  }
  fail(undefined, `expected ${wanted}, but it resolved`);
}

/** A thrown value as a failure message names it: an error's class and message, and its cause when it has one. */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return show(error);
  const cause =
    error.cause === undefined ? '' : `, caused by ${error.cause instanceof Error ? `${error.cause.name}: ${error.cause.message}` : show(error.cause)}`;
  return `a ${error.constructor.name} with message ${JSON.stringify(error.message)}${cause}`;
}

/** The bytes of `text` as UTF-8. */
export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** `bytes` decoded as UTF-8. */
export function text(bytes: ArrayBuffer | ArrayBufferView): string {
  return new TextDecoder().decode(bytes);
}

/** Lowercase hex of `bytes` (the kit's own, so a case checks the binding's hex against an independent one). */
export function hex(bytes: ArrayBuffer | ArrayBufferView): string {
  return [...bytesOf(bytes)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The bytes `digits` (lowercase hex) spell. */
export function fromHex(digits: string): Uint8Array {
  return Uint8Array.from(digits.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/**
 * A stream of unknown length as a script builds one, of `chunks`, closed unless `open`.
 * `cancelled` resolves with the reason the stream is cancelled with; it is undefined where that
 * cannot be seen: workerd has no ReadableStream constructor before compatibility date 2022-11-30,
 * and the stream is then the readable half of a TransformStream (an IdentityTransformStream).
 */
export function scriptStream(
  chunks: Uint8Array[],
  options: { open?: boolean } = {},
): { stream: ReadableStream<Uint8Array>; cancelled: Promise<unknown> | undefined } {
  let cancel: (reason: unknown) => void = () => undefined;
  const cancelled = new Promise<unknown>((resolve) => {
    cancel = resolve;
  });
  const source: UnderlyingDefaultSource<Uint8Array> = {
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      if (!options.open) controller.close();
    },
    cancel,
  };
  try {
    return { stream: new ReadableStream(source), cancelled };
  } catch {
    // No constructor: written through a TransformStream instead.
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    void (async () => {
      for (const chunk of chunks) await writer.write(chunk);
      if (!options.open) await writer.close();
    })().catch(() => undefined);
    return { stream: readable, cancelled: undefined };
  }
}

/** workerd's FixedLengthStream, which Node.js does not have. */
export interface FixedLengthStreamClass {
  new (length: number): TransformStream<Uint8Array, Uint8Array>;
}

/** workerd's FixedLengthStream class; throws where there is none (cases use it only inside workerd). */
export function fixedLengthStreamClass(): FixedLengthStreamClass {
  const FixedLengthStream = (globalThis as { FixedLengthStream?: FixedLengthStreamClass }).FixedLengthStream;
  if (!FixedLengthStream) throw new Error("FixedLengthStream is workerd's: cases use it only there.");
  return FixedLengthStream;
}

/** The readable half of a FixedLengthStream (workerd only) of `bytes`, written to it and closed. */
export function fixedLengthStream(bytes: Uint8Array): ReadableStream<Uint8Array> {
  const { readable, writable } = new (fixedLengthStreamClass())(bytes.byteLength);
  const writer = writable.getWriter();
  void writer
    .write(bytes)
    .then(() => writer.close())
    .catch(() => undefined);
  return readable;
}
