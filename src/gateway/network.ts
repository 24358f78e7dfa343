/**
 * One network of the gateway (`/v1/<name>`): its chain id, its retirement (docs/gateway.md: from the
 * retirement date on, every request is answered with an error naming the replacement, and no
 * backend is asked), its backend (started at service start, or on first use for a network that
 * was retired then), its finalized head and when its head moves.
 */
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';
import type { GatewayNetworkConfig } from '../config/gateway.ts';
import type { ChainBackend } from './backends/backend.ts';
import { ChainHead } from './cache/chain-head.ts';
import { FinalityTracker } from './cache/finality-tracker.ts';
import { gatewayError, JsonRpcError } from './errors.ts';

/** How often the finalized head is asked: every slot (12 s) upstream; the embedded chain is cheap to ask. */
const FINALITY_REFRESH_MS = { embedded: 1_000, upstreams: 12_000 } as const;
/** How often an upstream's head is asked while calls come in (answers at `latest` are kept until it moves). */
export const UPSTREAM_HEAD_REFRESH_MS = 1_000;

export class GatewayNetwork {
  readonly name: string;
  readonly chainId: number;
  readonly retiredOn: string | undefined;
  readonly replacement: string | undefined;
  /** Start of the retirement day, UTC, in epoch milliseconds. */
  readonly retiredAtMs: number | undefined;
  readonly backendKind: GatewayNetworkConfig['backend']['kind'];
  readonly finality: FinalityTracker;
  readonly head: ChainHead;
  readonly #start: () => Promise<ChainBackend>;
  readonly #logger: Logger;
  #backend: Promise<ChainBackend> | undefined;
  #requests = 0;

  constructor(config: GatewayNetworkConfig, start: () => Promise<ChainBackend>, clock: Clock, logger: Logger) {
    this.name = config.name;
    this.chainId = config.chainId;
    this.retiredOn = config.retiredOn;
    this.replacement = config.replacement;
    this.backendKind = config.backend.kind;
    this.retiredAtMs = config.retiredOn === undefined ? undefined : Date.parse(`${config.retiredOn}T00:00:00Z`);
    this.#start = start;
    this.#logger = logger;
    this.finality = new FinalityTracker({
      fetch: () => this.#fetchFinalized(),
      clock,
      logger,
      refreshMs: FINALITY_REFRESH_MS[config.backend.kind],
    });
    this.head = new ChainHead({
      clock,
      logger,
      ...(config.backend.kind === 'upstreams' ? { watch: { refreshMs: UPSTREAM_HEAD_REFRESH_MS, fetchHead: () => this.#fetchHead() } } : {}),
    });
  }

  /** JSON-RPC calls received for this network since start (batch members count one each). */
  get requests(): number {
    return this.#requests;
  }

  countRequests(calls: number): void {
    this.#requests += calls;
  }

  isRetired(nowMs: number): boolean {
    return this.retiredAtMs !== undefined && nowMs >= this.retiredAtMs;
  }

  /** The error every request to this network gets once it is retired. */
  retirementError(): JsonRpcError {
    const moveTo =
      this.replacement === undefined
        ? ''
        : ` Use ${this.replacement} instead: change only the last segment of the endpoint path, from /v1/${this.name} to /v1/${this.replacement}, and send the same request body.`;
    return gatewayError('GATEWAY_NETWORK_RETIRED', `The network ${this.name} was retired on ${this.retiredOn} and is no longer served.${moveTo}`, {
      data: {
        network: this.name,
        retiredOn: this.retiredOn,
        ...(this.replacement === undefined ? {} : { replacement: this.replacement, endpoint: `/v1/${this.replacement}` }),
      },
    });
  }

  /** The backend, started on first use; a start that failed is tried again by the next request. */
  backend(): Promise<ChainBackend> {
    this.#backend ??= this.#start().catch((error: unknown) => {
      this.#backend = undefined;
      this.#logger.error({ network: this.name, err: error }, `The backend of ${this.name} could not start.`);
      throw error instanceof JsonRpcError
        ? error
        : gatewayError('GATEWAY_CHAIN_UNAVAILABLE', `The embedded chain of ${this.name} could not start; the cause has been logged.`, { cause: error });
    });
    return this.#backend;
  }

  async close(): Promise<void> {
    const backend = this.#backend;
    this.#backend = undefined;
    if (backend) await (await backend.catch(() => undefined))?.close();
  }

  async #fetchHead(): Promise<string | undefined> {
    return (await (await this.backend()).call('eth_blockNumber', [])).result;
  }

  async #fetchFinalized(): Promise<bigint | undefined> {
    const answer = await (await this.backend()).call('eth_getBlockByNumber', ['finalized', false]);
    if (answer.result === undefined || answer.result === 'null') return undefined;
    const number = (JSON.parse(answer.result) as { number?: unknown }).number;
    return typeof number === 'string' ? BigInt(number) : undefined;
  }
}

/** The error for `/v1/<name>` when no network has that name; lists the ones there are. */
export function unknownNetworkError(name: string, served: Iterable<GatewayNetwork>, nowMs: number): JsonRpcError {
  const networks = [...served];
  const known = networks.map((n) => {
    if (n.isRetired(nowMs)) return `/v1/${n.name} (retired on ${n.retiredOn}${n.replacement ? `; use /v1/${n.replacement}` : ''})`;
    return `/v1/${n.name} (chain id ${n.chainId})`;
  });
  return gatewayError(
    'GATEWAY_UNKNOWN_NETWORK',
    `Unknown network ${JSON.stringify(name)}. This gateway serves ${known.length > 0 ? known.join(', ') : 'no networks'}.`,
    {
      data: { networks: networks.map((n) => n.name) },
    },
  );
}
