/**
 * The real gateway's parameter limits (docs/gateway.md, "Methods"): eth_getLogs and
 * trace_filter span at most 800 blocks, trace_filter returns at most 200 traces, eth_feeHistory
 * covers at most 10 blocks. Refused with -32602 before any node is asked.
 */
import { readBlockRef, readQuantity } from './block-params.ts';
import { gatewayError, type JsonRpcError } from './errors.ts';

export interface ParamLimits {
  maxLogsBlockRange: number;
  maxFeeHistoryBlocks: number;
}

const TRACE_FILTER_MAX_COUNT = 200;

/** Methods that have a limit; every other method skips this step entirely. */
export const LIMITED_METHODS = new Set(['eth_getLogs', 'trace_filter', 'eth_feeHistory']);

/**
 * undefined when the call is within limits. `head` gives the newest block number, asked only when
 * a range ends at a moving tag (`latest` and friends).
 */
export async function checkParamLimits(
  method: string,
  params: readonly unknown[],
  limits: ParamLimits,
  head: () => Promise<bigint | undefined>,
): Promise<JsonRpcError | undefined> {
  if (method === 'eth_feeHistory') {
    const count = readQuantity(params[0]);
    if (count !== undefined && count > BigInt(limits.maxFeeHistoryBlocks)) {
      return gatewayError(
        'GATEWAY_INVALID_PARAMS',
        `Invalid params: eth_feeHistory covers at most ${limits.maxFeeHistoryBlocks} blocks per call; asked for ${count}.`,
      );
    }
    return undefined;
  }
  const filter = params[0];
  if (typeof filter !== 'object' || filter === null) return undefined;
  const { fromBlock, toBlock, blockHash, count } = filter as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown; count?: unknown };
  if (method === 'trace_filter' && typeof count === 'number' && count > TRACE_FILTER_MAX_COUNT) {
    return gatewayError(
      'GATEWAY_INVALID_PARAMS',
      `Invalid params: trace_filter returns at most ${TRACE_FILTER_MAX_COUNT} traces per call; asked for ${count}.`,
    );
  }
  if (blockHash !== undefined) return undefined;
  const from = await resolve(fromBlock ?? 'latest', head);
  const to = await resolve(toBlock ?? 'latest', head);
  if (from === undefined || to === undefined || to < from) return undefined;
  const span = to - from + 1n;
  if (span > BigInt(limits.maxLogsBlockRange)) {
    return gatewayError(
      'GATEWAY_INVALID_PARAMS',
      `Invalid params: ${method} is limited to ${limits.maxLogsBlockRange} blocks per query; blocks ${from} to ${to} are ${span}. Split the range into smaller queries.`,
    );
  }
  return undefined;
}

async function resolve(param: unknown, head: () => Promise<bigint | undefined>): Promise<bigint | undefined> {
  const ref = readBlockRef(param);
  if (ref.kind === 'number') return ref.number;
  if (ref.kind === 'tag') return head();
  return undefined;
}
