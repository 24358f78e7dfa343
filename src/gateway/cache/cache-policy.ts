/**
 * Which answers may be cached. Final ones, kept until evicted: constants of the chain (eth_chainId,
 * net_version), lookups by block hash (a hash names one block forever), and answers about blocks
 * at or below the finalized head (by number, or transactions and receipts whose block is final).
 * Head-bound ones, kept only while the head does not move (chain-head.ts): eth_blockNumber and
 * reads at `latest`. Never: other tags (`pending`, `safe`, `finalized` move on their own;
 * eRPC#223), errors, `null` (a receipt not yet mined), writes, anything else.
 */
import { readBlockRef } from '../block-params.ts';

type CacheRule =
  | { kind: 'constant' }
  | { kind: 'by-block-hash' }
  /** A transaction or receipt: final once the block holding it is. */
  | { kind: 'mined' }
  /** The block parameter at `param` must be a hash or a number at or below the finalized head. */
  | { kind: 'at-block'; param: number }
  | { kind: 'logs' };

export const CACHE_RULES: Readonly<Record<string, CacheRule>> = {
  eth_chainId: { kind: 'constant' },
  net_version: { kind: 'constant' },
  eth_getBlockByHash: { kind: 'by-block-hash' },
  eth_getBlockTransactionCountByHash: { kind: 'by-block-hash' },
  eth_getTransactionByBlockHashAndIndex: { kind: 'by-block-hash' },
  eth_getUncleCountByBlockHash: { kind: 'by-block-hash' },
  eth_getTransactionByHash: { kind: 'mined' },
  eth_getTransactionReceipt: { kind: 'mined' },
  eth_getBlockByNumber: { kind: 'at-block', param: 0 },
  eth_getBlockTransactionCountByNumber: { kind: 'at-block', param: 0 },
  eth_getTransactionByBlockNumberAndIndex: { kind: 'at-block', param: 0 },
  eth_getUncleCountByBlockNumber: { kind: 'at-block', param: 0 },
  eth_getBalance: { kind: 'at-block', param: 1 },
  eth_getCode: { kind: 'at-block', param: 1 },
  eth_getTransactionCount: { kind: 'at-block', param: 1 },
  eth_call: { kind: 'at-block', param: 1 },
  eth_getStorageAt: { kind: 'at-block', param: 2 },
  eth_getProof: { kind: 'at-block', param: 2 },
  eth_getLogs: { kind: 'logs' },
};

/** Methods whose answer is the head itself. */
const HEAD_METHODS = new Set(['eth_blockNumber']);

/** Whether this call's answer holds exactly as long as the head does not move. */
export function isHeadBound(method: string, params: readonly unknown[]): boolean {
  if (HEAD_METHODS.has(method)) return true;
  const rule = CACHE_RULES[method];
  return rule !== undefined && rule.kind === 'at-block' && params[rule.param] === 'latest';
}

/** Whether answers to a method are ever cached (the `x-edgeport-cache` header says MISS rather than BYPASS). */
export function isCachedMethod(method: string): boolean {
  return CACHE_RULES[method] !== undefined || HEAD_METHODS.has(method);
}

/** The cache (and in-flight) key of a call on a network. */
export function callKey(network: string, method: string, params: readonly unknown[]): string {
  return `${network}\n${method}\n${JSON.stringify(params)}`;
}

/** Whether `resultJson`, answered to this call, can never change. `finalized` is -1n when unknown. */
export function isFinalAnswer(method: string, params: readonly unknown[], resultJson: string, finalized: bigint): boolean {
  const rule = CACHE_RULES[method];
  if (rule === undefined || resultJson === 'null') return false;
  switch (rule.kind) {
    case 'constant':
    case 'by-block-hash':
      return true;
    case 'mined': {
      const blockNumber = (JSON.parse(resultJson) as { blockNumber?: unknown }).blockNumber;
      return typeof blockNumber === 'string' && isFinalRef(blockNumber, finalized);
    }
    case 'at-block':
      return isFinalRef(params[rule.param], finalized);
    case 'logs': {
      const filter = params[0] as { blockHash?: unknown; fromBlock?: unknown; toBlock?: unknown } | undefined;
      if (typeof filter !== 'object' || filter === null) return false;
      if (typeof filter.blockHash === 'string') return true;
      return isFinalRef(filter.fromBlock ?? 'latest', finalized) && isFinalRef(filter.toBlock ?? 'latest', finalized);
    }
  }
}

function isFinalRef(param: unknown, finalized: bigint): boolean {
  const ref = readBlockRef(param);
  return ref.kind === 'hash' || (ref.kind === 'number' && ref.number <= finalized);
}
