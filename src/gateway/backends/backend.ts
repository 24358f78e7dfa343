/**
 * What a network's answers come from: the embedded chain or a pool of upstream nodes. A backend
 * takes one clean call at a time (the gateway owns the JSON-RPC envelope) and resolves with the
 * node's answer; it rejects only with a JsonRpcError of its own (an upstream outage, a chain that
 * could not start).
 */
import type { RpcAnswer } from '../json-rpc/response.ts';

export interface ChainBackend {
  /** `write` marks eth_sendRawTransaction: never retried on another upstream once sent. */
  call(method: string, params: readonly unknown[], options?: { write?: boolean }): Promise<RpcAnswer>;
  close(): Promise<void>;
}
