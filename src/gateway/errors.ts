/**
 * The gateway's error catalog and its one wire mapping: every failure the gateway itself reports
 * is a `GATEWAY_*` code, answered as a JSON-RPC error object `{code, message, data?}` with the HTTP
 * status the catalog gives. JSON-RPC-level failures use HTTP 200, as geth does (ethers cannot read
 * a JSON-RPC error behind a non-2xx status); only transport failures (wrong path, HTTP method,
 * media type, body size, rate limit) use 4xx. Errors a chain answers (a revert, "nonce too low")
 * are answers, not gateway errors, and pass through as they are.
 */
import { EdgeportError, type ErrorCatalog } from '../core/errors/edgeport-error.ts';

/** One class per JSON-RPC error code (JSON-RPC 2.0 §5.1 and EIP-1474), as viem's `src/errors/rpc.ts`. */
export abstract class JsonRpcError extends EdgeportError<GatewayErrorCode> {
  static readonly code: number;
  /** The JSON-RPC `error.data` member, when there is something to add. */
  readonly data: unknown;

  constructor(code: GatewayErrorCode, message: string, options?: { cause?: unknown; data?: unknown }) {
    super(code, GATEWAY_ERRORS[code].kind, message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.data = options?.data;
  }

  /** The JSON-RPC code on the wire. */
  get rpcCode(): number {
    return (this.constructor as typeof JsonRpcError).code;
  }

  /** The HTTP status of a response that carries only this error. */
  get status(): number {
    return GATEWAY_ERRORS[this.code].status;
  }
}

export class ParseError extends JsonRpcError {
  static override readonly code = -32700;
}
export class InvalidRequestError extends JsonRpcError {
  static override readonly code = -32600;
}
export class MethodNotFoundError extends JsonRpcError {
  static override readonly code = -32601;
}
export class InvalidParamsError extends JsonRpcError {
  static override readonly code = -32602;
}
export class InternalError extends JsonRpcError {
  static override readonly code = -32603;
}
/** EIP-1474 "resource unavailable": viem reports it as ResourceUnavailableRpcError and does not retry. */
export class ResourceUnavailableError extends JsonRpcError {
  static override readonly code = -32002;
}
/** EIP-1474 "limit exceeded". */
export class LimitExceededError extends JsonRpcError {
  static override readonly code = -32005;
}

type RpcErrorClass = (new (code: GatewayErrorCode, message: string, options?: { cause?: unknown; data?: unknown }) => JsonRpcError) & { readonly code: number };

interface GatewayErrorEntry {
  kind: 'user' | 'system';
  /** The default message; most throw sites give a more precise one. */
  message: string;
  rpc: RpcErrorClass;
  /** HTTP status when this error is the whole answer (inside a batch, members never change it). */
  status: number;
}

export type GatewayErrorCode =
  | 'GATEWAY_PARSE_ERROR'
  | 'GATEWAY_INVALID_REQUEST'
  | 'GATEWAY_EMPTY_BATCH'
  | 'GATEWAY_BATCH_TOO_LARGE'
  | 'GATEWAY_JSON_TOO_DEEP'
  | 'GATEWAY_JSON_TOO_MANY_VALUES'
  | 'GATEWAY_METHOD_NOT_FOUND'
  | 'GATEWAY_METHOD_REFUSED'
  | 'GATEWAY_INVALID_PARAMS'
  | 'GATEWAY_INTERNAL'
  | 'GATEWAY_NETWORK_RETIRED'
  | 'GATEWAY_UNKNOWN_NETWORK'
  | 'GATEWAY_NOT_FOUND'
  | 'GATEWAY_HTTP_METHOD_NOT_ALLOWED'
  | 'GATEWAY_UNSUPPORTED_MEDIA_TYPE'
  | 'GATEWAY_BODY_TOO_LARGE'
  | 'GATEWAY_RATE_LIMITED'
  | 'GATEWAY_OVERLOADED'
  | 'GATEWAY_UPSTREAM_UNAVAILABLE'
  | 'GATEWAY_CHAIN_UNAVAILABLE';

/** Every gateway error: kind, default message, JSON-RPC class and HTTP status (README lists them). */
export const GATEWAY_ERRORS: ErrorCatalog<GatewayErrorCode> & Record<GatewayErrorCode, GatewayErrorEntry> = {
  GATEWAY_PARSE_ERROR: { kind: 'user', rpc: ParseError, status: 200, message: 'Parse error: the request body is not valid JSON.' },
  GATEWAY_INVALID_REQUEST: { kind: 'user', rpc: InvalidRequestError, status: 200, message: 'Invalid request: not a JSON-RPC 2.0 request object.' },
  GATEWAY_EMPTY_BATCH: {
    kind: 'user',
    rpc: InvalidRequestError,
    status: 200,
    message: 'Invalid request: empty batch. A batch is a non-empty array of request objects.',
  },
  GATEWAY_BATCH_TOO_LARGE: {
    kind: 'user',
    rpc: InvalidRequestError,
    status: 200,
    message: 'Invalid request: the batch has more members than this gateway accepts.',
  },
  GATEWAY_JSON_TOO_DEEP: {
    kind: 'user',
    rpc: InvalidRequestError,
    status: 200,
    message: 'Invalid request: the body nests arrays and objects deeper than this gateway accepts.',
  },
  GATEWAY_JSON_TOO_MANY_VALUES: {
    kind: 'user',
    rpc: InvalidRequestError,
    status: 200,
    message: 'Invalid request: the body holds more JSON values than this gateway accepts.',
  },
  GATEWAY_METHOD_NOT_FOUND: { kind: 'user', rpc: MethodNotFoundError, status: 200, message: 'The method does not exist/is not available.' },
  GATEWAY_METHOD_REFUSED: { kind: 'user', rpc: MethodNotFoundError, status: 200, message: 'The method is refused by this gateway.' },
  GATEWAY_INVALID_PARAMS: { kind: 'user', rpc: InvalidParamsError, status: 200, message: 'Invalid params.' },
  GATEWAY_INTERNAL: {
    kind: 'system',
    rpc: InternalError,
    status: 200,
    message: 'Internal error: the gateway failed to answer this request. It has been logged.',
  },
  GATEWAY_NETWORK_RETIRED: { kind: 'user', rpc: ResourceUnavailableError, status: 200, message: 'This network is retired and no longer served.' },
  GATEWAY_UNKNOWN_NETWORK: { kind: 'user', rpc: ResourceUnavailableError, status: 404, message: 'Unknown network.' },
  GATEWAY_NOT_FOUND: { kind: 'user', rpc: InvalidRequestError, status: 404, message: 'Not found: send JSON-RPC requests to POST /v1/<network>.' },
  GATEWAY_HTTP_METHOD_NOT_ALLOWED: {
    kind: 'user',
    rpc: InvalidRequestError,
    status: 405,
    message: 'HTTP method not allowed: send JSON-RPC requests with POST.',
  },
  GATEWAY_UNSUPPORTED_MEDIA_TYPE: {
    kind: 'user',
    rpc: InvalidRequestError,
    status: 415,
    message: 'Unsupported content type: send the request with Content-Type: application/json.',
  },
  GATEWAY_BODY_TOO_LARGE: { kind: 'user', rpc: InvalidRequestError, status: 413, message: 'The request body is larger than this gateway accepts.' },
  GATEWAY_RATE_LIMITED: { kind: 'user', rpc: LimitExceededError, status: 429, message: 'Rate limit exceeded: too many requests from this client.' },
  GATEWAY_OVERLOADED: {
    kind: 'user',
    rpc: LimitExceededError,
    status: 503,
    message: 'The gateway is overloaded: too much work is waiting. Retry in a few seconds.',
  },
  GATEWAY_UPSTREAM_UNAVAILABLE: { kind: 'system', rpc: InternalError, status: 200, message: 'No upstream node of this network answered; try again later.' },
  GATEWAY_CHAIN_UNAVAILABLE: {
    kind: 'system',
    rpc: InternalError,
    status: 200,
    message: 'The embedded chain of this network could not start; the cause has been logged.',
  },
};

/** Creates the error for `code`, with its catalog message unless a more precise one is given. */
export function gatewayError(code: GatewayErrorCode, message?: string, options?: { cause?: unknown; data?: unknown }): JsonRpcError {
  const entry = GATEWAY_ERRORS[code];
  return new entry.rpc(code, message ?? entry.message, options);
}
