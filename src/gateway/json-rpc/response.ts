/**
 * JSON-RPC 2.0 response objects (§5), built as text: results arrive as JSON text from the chain,
 * the cache or an upstream and are spliced in without being parsed again.
 */
import type { JsonRpcError } from '../errors.ts';

/** The `error` member of a response. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** What a call produced: its result as JSON text, or an error object. */
export type RpcAnswer =
  /**
   * `cached` marks an answer served from the cache; `epoch`, one that holds only while the
   * network's head stays at that epoch (cache/chain-head.ts).
   */
  | { readonly result: string; readonly error?: undefined; readonly cached?: boolean; readonly epoch?: number }
  | { readonly result?: undefined; readonly error: RpcErrorObject; readonly cached?: undefined; readonly epoch?: undefined };

/** A response up to its id; `resultTail` is the rest: a replay splices any id between them. */
export const RESPONSE_HEAD = '{"jsonrpc":"2.0","id":';

export function resultTail(resultJson: string): string {
  return `,"result":${resultJson}}`;
}

export function resultResponse(id: string, resultJson: string): string {
  return RESPONSE_HEAD + id + resultTail(resultJson);
}

export function errorResponse(id: string, error: RpcErrorObject): string {
  return `${RESPONSE_HEAD}${id},"error":${JSON.stringify(error)}}`;
}

export function answerResponse(id: string, answer: RpcAnswer): string {
  return answer.error ? errorResponse(id, answer.error) : resultResponse(id, answer.result);
}

export function toErrorObject(error: JsonRpcError): RpcErrorObject {
  return error.data === undefined ? { code: error.rpcCode, message: error.message } : { code: error.rpcCode, message: error.message, data: error.data };
}

export function errorAnswer(error: JsonRpcError): RpcAnswer {
  return { error: toErrorObject(error) };
}
