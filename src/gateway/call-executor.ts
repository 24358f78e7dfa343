/**
 * Runs one well-formed call on one network, in order: method policy -> parameter limits -> cache
 * -> in-flight deduplication -> backend. Writes (eth_sendRawTransaction, and methods added by
 * `allow_methods`, which are not known to be reads) skip cache and deduplication and move the
 * network's head epoch once answered, so no answer fetched before a write's answer is out serves
 * a read after it. Reads share an in-flight call only within one epoch, and head-bound answers
 * are cached under the epoch they were fetched in, if it has not moved meanwhile. Calls that run
 * EVM code (eth_call, eth_estimateGas, ...) have their gas cut to the cap and, when not answered
 * from the cache, wait their client's turn in the network's EVM call queue (evm/evm-call-queue.ts);
 * every other call goes straight to the backend. Every outcome is an answer: gateway errors become their JSON-RPC error, anything
 * unexpected becomes GATEWAY_INTERNAL, logged with its cause and counted as unmapped.
 */
import type { Logger } from '../core/log.ts';
import type { AnswerCache } from './cache/answer-cache.ts';
import { CACHE_RULES, callKey, isFinalAnswer, isHeadBound } from './cache/cache-policy.ts';
import type { InFlight } from './cache/in-flight.ts';
import { gatewayError, JsonRpcError } from './errors.ts';
import type { EvmCallQueue } from './evm/evm-call-queue.ts';
import { capCallGas, dataOverCap, EVM_METHODS, transactionOverCap } from './evm/gas-cap.ts';
import { errorAnswer, type RpcAnswer } from './json-rpc/response.ts';
import { DEFAULT_ALLOWED_METHODS, type MethodPolicy } from './method-policy.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { GatewayNetwork } from './network.ts';
import { checkParamLimits, LIMITED_METHODS, type ParamLimits } from './param-limits.ts';

/** Methods known to read only; every other served method may change the chain. */
const READS = new Set(DEFAULT_ALLOWED_METHODS.filter((method) => method !== 'eth_sendRawTransaction'));

export interface CallExecutorDeps {
  policy: MethodPolicy;
  limits: ParamLimits;
  cache: AnswerCache;
  inFlight: InFlight<RpcAnswer>;
  metrics: GatewayMetrics;
  logger: Logger;
  /** Gas for one EVM-executing call on a network (its backend decides the default: DEFAULTS.gateway). */
  evmGasCap: (network: GatewayNetwork) => number;
  /** The EVM call queue of a network. */
  evmQueue: (network: GatewayNetwork) => EvmCallQueue;
}

/** Who sent a call, for the EVM queue's turns and time budget (clientKey of its address). */
export type CallClient = string;

export class CallExecutor {
  readonly #deps: CallExecutorDeps;

  constructor(deps: CallExecutorDeps) {
    this.#deps = deps;
  }

  async execute(network: GatewayNetwork, method: string, params: readonly unknown[], client: CallClient): Promise<RpcAnswer> {
    const { policy, metrics } = this.#deps;
    const refused = policy.check(method);
    if (refused) {
      metrics.call(network.name, method, 'rejected');
      return errorAnswer(refused);
    }
    let answer: RpcAnswer;
    try {
      answer = await this.#run(network, method, params, client);
    } catch (error) {
      answer = errorAnswer(this.#toRpcError(error, network, method));
    }
    metrics.call(network.name, method, answer.error ? 'error' : answer.cached ? 'cache_hit' : 'result');
    return answer;
  }

  async #run(network: GatewayNetwork, method: string, params: readonly unknown[], client: CallClient): Promise<RpcAnswer> {
    const { limits } = this.#deps;
    if (LIMITED_METHODS.has(method)) {
      const overLimit = await checkParamLimits(method, params, limits, () => this.#head(network));
      if (overLimit) return errorAnswer(overLimit);
    }
    const evm = EVM_METHODS.has(method);
    const gasCap = evm ? this.#deps.evmGasCap(network) : 0;
    const overCap = evm ? dataOverCap(method, params, gasCap) : undefined;
    if (overCap !== undefined) return { error: overCap };
    // Capped before the cache key is made: a call asking for more gas is the same call as one at the cap.
    const sent = evm ? capCallGas(method, params, gasCap) : params;
    // The embedded chain runs a raw transaction's EVM code in this process, as it runs a call.
    const embeddedWrite = method === 'eth_sendRawTransaction' && network.backendKind === 'embedded';
    if (embeddedWrite) {
      const overGas = transactionOverCap(params[0], this.#deps.evmGasCap(network));
      if (overGas !== undefined) return { error: overGas };
    }
    const queued = evm || embeddedWrite ? client : undefined;
    if (!READS.has(method)) return this.#write(network, method, sent, queued);
    return this.#read(network, method, sent, queued);
  }

  /** The backend's answer; through the network's EVM queue, in `client`'s turn, when `client` is given. */
  async #ask(network: GatewayNetwork, method: string, params: readonly unknown[], client: CallClient | undefined, write?: boolean): Promise<RpcAnswer> {
    const backend = await network.backend();
    const ask = () => backend.call(method, params, write === undefined ? undefined : { write });
    return client === undefined ? ask() : this.#deps.evmQueue(network).run(client, ask);
  }

  async #write(network: GatewayNetwork, method: string, params: readonly unknown[], client?: CallClient): Promise<RpcAnswer> {
    try {
      return await this.#ask(network, method, params, client, method === 'eth_sendRawTransaction');
    } finally {
      network.head.written();
    }
  }

  #read(network: GatewayNetwork, method: string, params: readonly unknown[], client?: CallClient): Promise<RpcAnswer> {
    const { cache, inFlight } = this.#deps;
    const key = callKey(network.name, method, params);
    const epoch = network.head.epoch();
    const cacheable = CACHE_RULES[method] !== undefined;
    const headBound = isHeadBound(method, params);
    const headKey = headBound ? `${key}\n@${epoch}` : undefined;
    const hit = headKey !== undefined ? cache.get(headKey) : cacheable ? cache.get(key) : undefined;
    if (hit !== undefined) return Promise.resolve(headKey === undefined ? { result: hit, cached: true } : { result: hit, cached: true, epoch });
    return inFlight.run(headKey ?? `${key}\n@${epoch}`, async () => {
      const answer = await this.#ask(network, method, params, client);
      if (answer.result !== undefined) {
        if (method === 'eth_blockNumber') network.head.observe(answer.result);
        if (headKey !== undefined) {
          // Fetched while the head stayed put: it answers for this epoch.
          if (network.head.current === epoch && network.head.caching()) cache.set(headKey, answer.result);
        } else if (cacheable && isFinalAnswer(method, params, answer.result, network.finality.current())) {
          cache.set(key, answer.result);
        }
      }
      return answer;
    });
  }

  /** The newest block number, for ranges that end at a tag; undefined when the chain cannot say. */
  async #head(network: GatewayNetwork): Promise<bigint | undefined> {
    const answer = await this.#read(network, 'eth_blockNumber', []);
    const head: unknown = answer.result === undefined ? undefined : JSON.parse(answer.result);
    return typeof head === 'string' && /^0x[0-9a-fA-F]+$/.test(head) ? BigInt(head) : undefined;
  }

  #toRpcError(error: unknown, network: GatewayNetwork, method: string): JsonRpcError {
    const { logger, metrics } = this.#deps;
    if (error instanceof JsonRpcError) {
      if (error.kind === 'system') logger.warn({ network: network.name, method, code: error.code, err: error.cause ?? error }, error.message);
      return error;
    }
    metrics.unmappedError();
    logger.error({ network: network.name, method, err: error }, 'Unmapped error while answering a call.');
    return gatewayError('GATEWAY_INTERNAL', undefined, { cause: error });
  }
}
