/**
 * Assembles the gateway from its config: networks and their backends (embedded chains start
 * here, so `/v1/sepolia` answers at once), method policy, cache, rate limit, metrics, and the
 * HTTP handler that `edgeport start` puts on its port (8545 by default).
 */
import { join } from 'node:path';
import type { Clock } from '../core/clock.ts';
import { EdgeportError } from '../core/errors/edgeport-error.ts';
import type { Logger } from '../core/log.ts';
import type { ServiceHandle } from '../core/service.ts';
import type { GatewayConfig, GatewayNetworkConfig } from '../config/gateway.ts';
import type { ChainBackend } from './backends/backend.ts';
import { describeDevAccounts } from './backends/dev-accounts.ts';
import { startEmbeddedChain } from './backends/embedded-chain.ts';
import { AnswerCache } from './cache/answer-cache.ts';
import { InFlight } from './cache/in-flight.ts';
import { CallExecutor } from './call-executor.ts';
import { EvmCallQueue } from './evm/evm-call-queue.ts';
import { BodyBudget } from './http/body-budget.ts';
import { createGatewayHandler } from './http/gateway-handler.ts';
import { Replays } from './http/replays.ts';
import type { RpcAnswer } from './json-rpc/response.ts';
import { createMethodPolicy } from './method-policy.ts';
import { GatewayMetrics } from './metrics.ts';
import { GatewayNetwork } from './network.ts';
import { RateLimiter } from './rate-limiter.ts';

/** EVM calls sent to a network's upstream nodes at once: nodes run calls in parallel, and each enforces its own limits too. */
const UPSTREAM_EVM_CONCURRENCY = 16;

export interface GatewayServiceOptions {
  /** The `[gateway]` config: networks and limits (`config.gateway`). */
  networks: GatewayConfig;
  clock: Clock;
  logger: Logger;
  /** Embedded chains persist in `<dataDir>/gateway/<network>.chain.ndjson`; in memory only when absent. */
  dataDir?: string;
}

/** One network as the management API shows it (the dashboard's gateway page). */
export interface GatewayNetworkStatus {
  name: string;
  chainId: number;
  retiredOn: string | undefined;
  replacement: string | undefined;
  /** Retired now, by the injected clock. */
  retired: boolean;
  backend: 'embedded' | 'upstreams';
  /** JSON-RPC calls received since start (batch members count one each). */
  requests: number;
}

export interface GatewayService extends ServiceHandle {
  /** Lines for the start banner: the funded development accounts, when an embedded chain runs. */
  readonly banner: readonly string[];
  readonly metrics: GatewayMetrics;
  /** Brings the metrics up to date (tallies, the cache's size), for a scrape of another listener that renders them. */
  prepareMetrics(): void;
  /** Every network with its state and the calls it has received, in configuration order. */
  networks(): GatewayNetworkStatus[];
}

/** Starts every network not retired at start (the others start on first use) and returns the handler. */
export async function createGatewayService(options: GatewayServiceOptions): Promise<GatewayService> {
  const { networks: config, clock, logger } = options;
  const policy = createMethodPolicy(config);
  const metrics = new GatewayMetrics((method) => policy.check(method) === undefined);
  const networks = new Map(
    config.networks.map((network) => [network.name, new GatewayNetwork(network, () => startBackend(network, options, metrics), clock, logger)]),
  );
  const cache = new AnswerCache({ maxEntries: config.cacheMaxEntries, maxBytes: config.cacheMaxBytes });
  const evmQueues = new Map(
    [...networks.values()].map((network) => [
      network,
      new EvmCallQueue({
        // The embedded chain runs one request at a time: one EVM call at it, so reads wait for one at most.
        concurrency: network.backendKind === 'embedded' ? 1 : UPSTREAM_EVM_CONCURRENCY,
        maxQueuedPerClient: config.maxQueuedEvmCallsPerClient,
        maxQueued: config.maxQueuedEvmCalls,
        timeoutMs: config.evmTimeoutMs,
        budget: config.evmTimePerClient,
        clock,
      }),
    ]),
  );
  const executor = new CallExecutor({
    policy,
    limits: config,
    cache,
    inFlight: new InFlight<RpcAnswer>(),
    metrics,
    logger,
    evmGasCap: (network) => (network.backendKind === 'embedded' ? config.evmGasCap.embedded : config.evmGasCap.upstream),
    evmQueue: (network) => evmQueues.get(network)!,
  });
  const closeAll = () => Promise.all([...networks.values()].map((n) => n.close())).then(() => undefined);
  const active = [...networks.values()].filter((n) => !n.isRetired(clock.now()));
  try {
    await Promise.all(active.map((n) => n.backend()));
  } catch (error) {
    await closeAll();
    const cause = (error as Error).cause ?? error;
    throw new EdgeportError(
      'GATEWAY_CHAIN_UNAVAILABLE',
      'system',
      `The gateway could not start: ${(error as Error).message.replace(/; the cause has been logged\.$/, '')}: ${(cause as Error).message ?? String(cause)}`,
      { cause },
    );
  }
  const embedded = config.networks.filter((n) => n.backend.kind === 'embedded' && active.some((a) => a.name === n.name)).map((n) => n.name);
  const handler = createGatewayHandler({
    networks,
    executor,
    metrics,
    clock,
    logger,
    rateLimiter: new RateLimiter(config.rateLimit, clock),
    maxBodyBytes: config.maxBodyBytes,
    maxBatchItems: config.maxBatchItems,
    beforeMetrics: () => metrics.cacheEntries.set(cache.size),
    // Bounded like the answer cache: together they hold at most twice its byte limit.
    replays: new Replays({ maxEntries: config.cacheMaxEntries, maxBytes: config.cacheMaxBytes }),
    bodies: new BodyBudget(config.maxBodyBytesInFlight),
  });
  const backendKind = new Map(config.networks.map((n) => [n.name, n.backend.kind]));
  return {
    handler,
    metrics,
    prepareMetrics: () => {
      metrics.flush();
      metrics.cacheEntries.set(cache.size);
    },
    networks: () =>
      [...networks.values()].map((n) => ({
        name: n.name,
        chainId: n.chainId,
        retiredOn: n.retiredOn,
        replacement: n.replacement,
        retired: n.isRetired(clock.now()),
        backend: backendKind.get(n.name)!,
        requests: n.requests,
      })),
    banner: embedded.length > 0 ? describeDevAccounts(embedded.join(', ')) : [],
    close: closeAll,
  };
}

function startBackend(network: GatewayNetworkConfig, options: GatewayServiceOptions, metrics: GatewayMetrics): Promise<ChainBackend> {
  const { clock, logger, dataDir } = options;
  if (network.backend.kind === 'upstreams') {
    const { urls } = network.backend;
    // undici, which the pool connects with, is loaded only when a network has upstreams.
    return import('./backends/upstream-pool.ts').then(
      ({ UpstreamPool }) =>
        new UpstreamPool({
          network: network.name,
          urls,
          clock,
          logger,
          metrics,
          timeoutMs: options.networks.upstreamTimeoutMs,
          cooldownMs: options.networks.upstreamCooldownMs,
        }),
    );
  }
  return startEmbeddedChain({
    network: network.name,
    chainId: network.chainId,
    journalPath: dataDir === undefined ? undefined : join(dataDir, 'gateway', `${network.name}.chain.ndjson`),
    logger,
    nowMs: clock.now(),
  });
}
