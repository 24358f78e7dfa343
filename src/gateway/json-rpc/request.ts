/**
 * Parses an HTTP body into JSON-RPC 2.0 requests (jsonrpc.org/specification §4-6), validating each
 * member on its own so one bad member of a batch never spoils the others. Never throws: every
 * problem becomes the error the spec prescribes (-32700 for bad JSON, -32600 for a malformed
 * request or an empty batch), with the id echoed when it could be read and `null` when not.
 *
 * Bounded before anything is built: one pass over the text (core/json-shape.ts) refuses a batch
 * with more than `maxBatchItems` members as the next one begins, JSON nested deeper than
 * MAX_JSON_DEPTH, and bodies of more than VALUES_PER_MEMBER values per allowed member (the cost
 * of parsing, hashing and handing params to a chain grows with values, not bytes: a 5 MiB array
 * of 2.6M numbers took the embedded chain over a second), each with one error object; only then
 * does `JSON.parse` build the members.
 */
import { MAX_JSON_DEPTH, scanJsonShape } from '../../core/json-shape.ts';
import { gatewayError, type JsonRpcError } from '../errors.ts';
import { rawIdText } from './raw-id.ts';

/** A well-formed call. */
export interface RpcCall {
  readonly kind: 'call';
  /** The id as JSON text, exactly as it is echoed; undefined for a notification (no `id` member). */
  readonly id: string | undefined;
  readonly method: string;
  /** Positional params; an omitted `params` is `[]`. */
  readonly params: readonly unknown[];
}

/** A member answered with an error without running anything. */
export interface RejectedMember {
  readonly kind: 'rejected';
  /** JSON text of the id to echo (`null` when unreadable); undefined only for a notification. */
  readonly id: string | undefined;
  readonly error: JsonRpcError;
}

export type RpcMember = RpcCall | RejectedMember;

export type ParsedBody =
  | { readonly kind: 'single'; readonly member: RpcMember }
  | { readonly kind: 'batch'; readonly members: readonly RpcMember[] }
  /** The whole body is one error, answered as a single object with `id: null`. */
  | { readonly kind: 'invalid'; readonly error: JsonRpcError };

export interface ParseLimits {
  maxBatchItems: number;
}

/** JSON values a body may hold per allowed batch member: a typical call has fewer than 10. */
export const VALUES_PER_MEMBER = 100;

export function parseRequestBody(body: string, limits: ParseLimits): ParsedBody {
  const maxValues = VALUES_PER_MEMBER * limits.maxBatchItems;
  const shape = scanJsonShape(body, { maxDepth: MAX_JSON_DEPTH, maxArrayItems: limits.maxBatchItems, maxValues });
  switch (shape.kind) {
    case 'invalid':
      return { kind: 'invalid', error: gatewayError('GATEWAY_PARSE_ERROR') };
    case 'too-deep':
      return {
        kind: 'invalid',
        error: gatewayError(
          'GATEWAY_JSON_TOO_DEEP',
          `Invalid request: the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep; this gateway accepts at most ${MAX_JSON_DEPTH} (Ethereum requests need fewer than 10). Send params without the extra nesting.`,
        ),
      };
    case 'too-many-items':
      return {
        kind: 'invalid',
        error: gatewayError(
          'GATEWAY_BATCH_TOO_LARGE',
          `Invalid request: the batch has more than ${limits.maxBatchItems} members; this gateway accepts at most ${limits.maxBatchItems} per batch. Split it into batches of at most ${limits.maxBatchItems}.`,
        ),
      };
    case 'too-many-values':
      return {
        kind: 'invalid',
        error: gatewayError(
          'GATEWAY_JSON_TOO_MANY_VALUES',
          `Invalid request: the body holds more than ${maxValues} JSON values (numbers, strings, arrays, objects, ...); this gateway accepts at most ${maxValues} per body. Send fewer or smaller params, or split the batch.`,
        ),
      };
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { kind: 'invalid', error: gatewayError('GATEWAY_PARSE_ERROR') };
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: 'invalid', error: gatewayError('GATEWAY_EMPTY_BATCH') };
    return { kind: 'batch', members: value.map((item, index) => toMember(item, body, index, true)) };
  }
  if (!isObject(value)) {
    return {
      kind: 'invalid',
      error: gatewayError('GATEWAY_INVALID_REQUEST', `Invalid request: the body must be a request object or a batch (array) of them, got ${describe(value)}.`),
    };
  }
  return { kind: 'single', member: toMember(value, body, 0, false) };
}

/** Validates one request object (JSON-RPC 2.0 §4). */
export function toMember(value: unknown, body: string, index: number, inBatch: boolean): RpcMember {
  if (!isObject(value)) {
    return reject('null', `Invalid request: ${inBatch ? 'a batch member' : 'the body'} must be a request object, got ${describe(value)}.`);
  }
  const hasId = Object.hasOwn(value, 'id');
  const id = value.id;
  if (hasId && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    return reject('null', `Invalid request: "id" must be a string, a number or null, got ${describe(id)}.`);
  }
  const idText = hasId ? idToText(id as string | number | null, body, index) : undefined;
  if (value.jsonrpc !== '2.0') {
    return reject(
      idText ?? 'null',
      `Invalid request: "jsonrpc" must be the string "2.0", got ${value.jsonrpc === undefined ? 'nothing' : JSON.stringify(value.jsonrpc)}.`,
    );
  }
  if (typeof value.method !== 'string') {
    return reject(idText ?? 'null', `Invalid request: "method" must be a string, got ${value.method === undefined ? 'nothing' : describe(value.method)}.`);
  }
  const params = value.params;
  if (params === undefined) return { kind: 'call', id: idText, method: value.method, params: [] };
  if (Array.isArray(params)) return { kind: 'call', id: idText, method: value.method, params };
  if (isObject(params)) {
    // Named params are valid JSON-RPC, but every Ethereum method is positional: the request is
    // well formed (so a notification stays unanswered), its params are not.
    return {
      kind: 'rejected',
      id: idText,
      error: gatewayError('GATEWAY_INVALID_PARAMS', `Invalid params: ${value.method} takes positional params; send "params" as an array.`),
    };
  }
  return reject(idText ?? 'null', `Invalid request: "params" must be an array, got ${describe(params)}.`);
}

function reject(id: string, message: string): RejectedMember {
  return { kind: 'rejected', id, error: gatewayError('GATEWAY_INVALID_REQUEST', message) };
}

function idToText(id: string | number | null, body: string, index: number): string {
  if (typeof id === 'number' && !Number.isSafeInteger(id)) return rawIdText(body, index) ?? JSON.stringify(id);
  return JSON.stringify(id);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `the ${typeof value} ${JSON.stringify(value)}`;
}
