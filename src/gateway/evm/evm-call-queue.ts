/**
 * Where the calls that run EVM code (EVM_METHODS) wait their turn on one network. The embedded
 * chain runs one request at a time, so an endless eth_call in front of it would hold every other
 * call back; here EVM calls take at most `concurrency` places at the chain (1 for the embedded
 * chain), cheap reads never come through this queue and so wait at most for the one running.
 *
 * Fair between clients (IP addresses, as counted by clientKey): each client runs one EVM call at
 * a time and clients take turns (round robin), so a client with a thousand calls waiting does not
 * delay another's one call by more than one turn. Each client has a bucket of chain time
 * (milliseconds of the chain's wall time its calls took), refilled by the injected clock; a
 * client whose bucket is empty is refused with the rate-limit error until it refills. A call that
 * runs past `timeoutMs` is answered with geth's timeout error at once; the chain cannot be
 * interrupted, so its place is given back (and its time charged) only when it ends, which the gas
 * cap bounds.
 */
import type { Clock } from '../../core/clock.ts';
import { gatewayError } from '../errors.ts';
import type { RpcAnswer } from '../json-rpc/response.ts';

export interface EvmCallQueueOptions {
  /** EVM calls at the backend at once. */
  concurrency: number;
  maxQueuedPerClient: number;
  maxQueued: number;
  timeoutMs: number;
  budget: { msPerSecond: number; burstMs: number };
  clock: Clock;
}

interface Job {
  work: () => Promise<RpcAnswer>;
  resolve: (answer: RpcAnswer) => void;
  reject: (error: unknown) => void;
}

interface ClientState {
  /** Chain milliseconds left; negative after a call that took more than was left (debt). */
  tokens: number;
  updatedAt: number;
  waiting: Job[];
  running: boolean;
}

/** Past this many clients, idle clients with a full bucket are dropped; they would start full anyway. */
const SWEEP_THRESHOLD = 10_000;

export class EvmCallQueue {
  readonly #options: EvmCallQueueOptions;
  readonly #perMs: number;
  readonly #clients = new Map<string, ClientState>();
  /** Clients with a call waiting and none running, in turn order. */
  readonly #ready: ClientState[] = [];
  #running = 0;
  #waiting = 0;

  constructor(options: EvmCallQueueOptions) {
    this.#options = options;
    this.#perMs = options.budget.msPerSecond / 1000;
  }

  /** Calls waiting (not yet at the backend). */
  get waiting(): number {
    return this.#waiting;
  }

  /** Runs `work` in `client`'s turn; rejects with a JsonRpcError when the call is refused. */
  run(client: string, work: () => Promise<RpcAnswer>): Promise<RpcAnswer> {
    const state = this.#client(client);
    this.#refill(state);
    if (state.tokens <= 0) return Promise.reject(this.#outOfTime(state));
    if (state.waiting.length >= this.#options.maxQueuedPerClient) {
      return Promise.reject(
        gatewayError(
          'GATEWAY_RATE_LIMITED',
          `Rate limit exceeded: this client already has ${state.waiting.length} calls that run EVM code (eth_call, eth_estimateGas, ...) waiting, the most this gateway queues per client. Send fewer at once.`,
        ),
      );
    }
    if (this.#waiting >= this.#options.maxQueued) {
      return Promise.reject(
        gatewayError(
          'GATEWAY_OVERLOADED',
          `The gateway is overloaded: ${this.#waiting} calls that run EVM code are waiting for the chain. Retry in a few seconds.`,
        ),
      );
    }
    return new Promise<RpcAnswer>((resolve, reject) => {
      state.waiting.push({ work, resolve, reject });
      this.#waiting += 1;
      if (!state.running && state.waiting.length === 1) this.#ready.push(state);
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#running < this.#options.concurrency && this.#ready.length > 0) {
      const state = this.#ready.shift()!;
      const job = state.waiting.shift()!;
      this.#waiting -= 1;
      this.#refill(state);
      if (state.tokens <= 0) {
        // Its time ran out while it waited: every call it still has waiting is refused now.
        const error = this.#outOfTime(state);
        job.reject(error);
        const rest = state.waiting.splice(0);
        this.#waiting -= rest.length;
        for (const refused of rest) refused.reject(error);
        continue;
      }
      this.#start(state, job);
    }
  }

  #start(state: ClientState, job: Job): void {
    state.running = true;
    this.#running += 1;
    const started = performance.now();
    const timer = setTimeout(
      () => job.resolve({ error: { code: -32000, message: `execution aborted (timeout = ${goDuration(this.#options.timeoutMs)})` } }),
      this.#options.timeoutMs,
    );
    const settle = () => {
      clearTimeout(timer);
      // Chain time is measured, not scheduled: what the call actually held the chain for.
      this.#refill(state);
      state.tokens -= performance.now() - started;
      state.running = false;
      this.#running -= 1;
      if (state.waiting.length > 0) this.#ready.push(state);
      this.#pump();
    };
    let pending: Promise<RpcAnswer>;
    try {
      pending = job.work();
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (answer) => {
        settle();
        job.resolve(answer);
      },
      (error: unknown) => {
        settle();
        job.reject(error);
      },
    );
  }

  #client(client: string): ClientState {
    let state = this.#clients.get(client);
    if (state === undefined) {
      if (this.#clients.size >= SWEEP_THRESHOLD) this.#sweep();
      state = { tokens: this.#options.budget.burstMs, updatedAt: this.#options.clock.now(), waiting: [], running: false };
      this.#clients.set(client, state);
    }
    return state;
  }

  #refill(state: ClientState): void {
    const now = this.#options.clock.now();
    state.tokens = Math.min(this.#options.budget.burstMs, state.tokens + Math.max(0, now - state.updatedAt) * this.#perMs);
    state.updatedAt = now;
  }

  #outOfTime(state: ClientState): ReturnType<typeof gatewayError> {
    const retryS = Math.max(1, Math.ceil((1 - state.tokens) / this.#perMs / 1000));
    return gatewayError(
      'GATEWAY_RATE_LIMITED',
      `Rate limit exceeded: this client's calls that run EVM code (eth_call, eth_estimateGas, ...) used its share of the chain's time (${this.#options.budget.msPerSecond} ms per second). Retry in ${retryS} s.`,
      { data: { retryAfterSeconds: retryS } },
    );
  }

  #sweep(): void {
    for (const [client, state] of this.#clients) {
      if (state.running || state.waiting.length > 0) continue;
      this.#refill(state);
      if (state.tokens >= this.#options.budget.burstMs) this.#clients.delete(client);
    }
  }
}

/** A duration as Go prints it (geth's message): `5s`, `1.5s`, `300ms`. */
function goDuration(ms: number): string {
  return ms % 1000 === 0 || ms > 1000 ? `${ms / 1000}s` : `${ms}ms`;
}
