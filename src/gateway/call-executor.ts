/**
 * Runs one well-formed call on one network, in order: method policy -> parameter limits -> cache
 * -> in-flight deduplication -> backend. Writes (eth_sendRawTransaction) skip cache and
 * deduplication. Every outcome is an answer: gateway errors become their JSON-RPC error, anything
 * unexpected becomes GATEWAY_INTERNAL, logged with its cause and counted as unmapped.
 */
import type { Logger } from '../core/log.ts';
import type { AnswerCache } from './cache/answer-cache.ts';
import { CACHE_RULES, callKey, isFinalAnswer } from './cache/cache-policy.ts';
import type { InFlight } from './cache/in-flight.ts';
import { gatewayError, JsonRpcError } from './errors.ts';
import { errorAnswer, type RpcAnswer } from './json-rpc/response.ts';
import type { MethodPolicy } from './method-policy.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { GatewayNetwork } from './network.ts';
import { checkParamLimits, LIMITED_METHODS, type ParamLimits } from './param-limits.ts';

export interface CallExecutorDeps {
  policy: MethodPolicy;
  limits: ParamLimits;
  cache: AnswerCache;
  inFlight: InFlight<RpcAnswer>;
  metrics: GatewayMetrics;
  logger: Logger;
}

export class CallExecutor {
  readonly #deps: CallExecutorDeps;

  constructor(deps: CallExecutorDeps) {
    this.#deps = deps;
  }

  async execute(network: GatewayNetwork, method: string, params: readonly unknown[]): Promise<RpcAnswer> {
    const { policy, metrics } = this.#deps;
    const refused = policy.check(method);
    if (refused) {
      metrics.call(network.name, method, 'rejected');
      return errorAnswer(refused);
    }
    let answer: RpcAnswer;
    try {
      answer = await this.#run(network, method, params);
    } catch (error) {
      answer = errorAnswer(this.#toRpcError(error, network, method));
    }
    metrics.call(network.name, method, answer.error ? 'error' : answer.cached ? 'cache_hit' : 'result');
    return answer;
  }

  async #run(network: GatewayNetwork, method: string, params: readonly unknown[]): Promise<RpcAnswer> {
    const { cache, inFlight, limits } = this.#deps;
    if (LIMITED_METHODS.has(method)) {
      const overLimit = await checkParamLimits(method, params, limits, () => this.#head(network));
      if (overLimit) return errorAnswer(overLimit);
    }
    if (method === 'eth_sendRawTransaction') return (await network.backend()).call(method, params, { write: true });
    const key = callKey(network.name, method, params);
    const cacheable = CACHE_RULES[method] !== undefined;
    if (cacheable) {
      const hit = cache.get(key);
      if (hit !== undefined) return { result: hit, cached: true };
    }
    return inFlight.run(key, async () => {
      const answer = await (await network.backend()).call(method, params);
      if (cacheable && answer.result !== undefined && isFinalAnswer(method, params, answer.result, network.finality.current())) {
        cache.set(key, answer.result);
      }
      return answer;
    });
  }

  /** The newest block number, for ranges that end at a tag; undefined when the chain cannot say. */
  async #head(network: GatewayNetwork): Promise<bigint | undefined> {
    const answer = await this.#deps.inFlight.run(callKey(network.name, 'eth_blockNumber', []), async () => (await network.backend()).call('eth_blockNumber', []));
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
