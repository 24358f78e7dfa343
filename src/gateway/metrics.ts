/**
 * The gateway's Prometheus metrics, served at `GET /metrics` on its listener. One registry per
 * gateway (several can live in one process, in tests); `edgeport start` serves it within the
 * process's metrics (core/metrics.ts) on the API's port too, flushed first (flush). The hot path only bumps a plain number per
 * label set (a Tally, which a replayed answer keeps so it is not even looked up); the counts are
 * added to prom-client's counters when the metrics are read.
 */
import { Counter, Gauge, Registry } from 'prom-client';

/** Increments of one labelled counter not yet handed to prom-client: `pending += 1` counts one. */
export interface Tally {
  counter: Counter<string>;
  labels: string[];
  pending: number;
}

export type CallOutcome = 'result' | 'error' | 'cache_hit' | 'rejected';

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #httpResponses = new Counter({
    name: 'edgeport_gateway_http_responses_total',
    help: 'HTTP responses by status code.',
    labelNames: ['status'],
    registers: [this.registry],
  });
  readonly #calls = new Counter({
    name: 'edgeport_gateway_calls_total',
    help: 'JSON-RPC calls (batch members count one each) by network, method and outcome.',
    labelNames: ['network', 'method', 'outcome'],
    registers: [this.registry],
  });
  readonly #upstreamCalls = new Counter({
    name: 'edgeport_gateway_upstream_calls_total',
    help: 'Calls sent to upstream nodes, by network, upstream position (0 = first URL) and outcome.',
    labelNames: ['network', 'upstream', 'outcome'],
    registers: [this.registry],
  });
  readonly #rateLimited = new Counter({
    name: 'edgeport_gateway_rate_limited_requests_total',
    help: 'HTTP requests refused by the per-client rate limit.',
    registers: [this.registry],
  });
  readonly #overloaded = new Counter({
    name: 'edgeport_gateway_overloaded_requests_total',
    help: 'HTTP requests refused with 503 because too many large bodies were being read.',
    registers: [this.registry],
  });
  readonly #unmapped = new Counter({
    name: 'edgeport_unmapped_errors_total',
    help: 'Errors that reached a surface without a mapping (answered as internal errors).',
    labelNames: ['surface'],
    registers: [this.registry],
  });
  readonly cacheEntries = new Gauge({ name: 'edgeport_gateway_cache_entries', help: 'Answers held in the cache.', registers: [this.registry] });
  readonly #tallies = new Map<string, Tally>();
  readonly #ok = this.#tally(this.#httpResponses, 'http 200', () => ['200']);
  /** Call tallies by network and method label, so counting a call builds no key. */
  readonly #callTallies = new Map<string, Map<string, Partial<Record<CallOutcome, Tally>>>>();
  /** Method label values are bounded: names outside the served set count as "other". */
  readonly #knownMethod: (method: string) => boolean;

  constructor(knownMethod: (method: string) => boolean) {
    this.#knownMethod = knownMethod;
  }

  httpResponse(status: number): void {
    if (status === 200) this.#ok.pending += 1;
    else this.#tally(this.#httpResponses, `http ${status}`, () => [String(status)]).pending += 1;
  }

  call(network: string, method: string, outcome: CallOutcome): void {
    this.callTally(network, method, outcome).pending += 1;
  }

  /** The tally `call` bumps for these labels, to keep and bump directly. */
  callTally(network: string, method: string, outcome: CallOutcome): Tally {
    const label = this.#knownMethod(method) ? method : 'other';
    let byLabel = this.#callTallies.get(network);
    if (byLabel === undefined) this.#callTallies.set(network, (byLabel = new Map()));
    let byOutcome = byLabel.get(label);
    if (byOutcome === undefined) byLabel.set(label, (byOutcome = {}));
    return (byOutcome[outcome] ??= this.#tally(this.#calls, `call ${network} ${label} ${outcome}`, () => [network, label, outcome]));
  }

  upstreamCall(network: string, upstream: number, outcome: 'ok' | 'failed'): void {
    this.#tally(this.#upstreamCalls, `upstream ${network} ${upstream} ${outcome}`, () => [network, String(upstream), outcome]).pending += 1;
  }

  rateLimited(): void {
    this.#rateLimited.inc();
  }

  overloaded(): void {
    this.#overloaded.inc();
  }

  unmappedError(): void {
    this.#unmapped.labels('gateway').inc();
  }

  /** Hands the tallies' counts to prom-client's counters (before the registry is rendered). */
  flush(): void {
    for (const tally of this.#tallies.values()) {
      if (tally.pending === 0) continue;
      tally.counter.labels(...tally.labels).inc(tally.pending);
      tally.pending = 0;
    }
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    this.flush();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The tally under `key` (label values contain no spaces); `labels` runs the first time only. */
  #tally(counter: Counter<string>, key: string, labels: () => string[]): Tally {
    let tally = this.#tallies.get(key);
    if (tally === undefined) {
      tally = { counter, labels: labels(), pending: 0 };
      this.#tallies.set(key, tally);
    }
    return tally;
  }
}
