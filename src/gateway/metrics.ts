/**
 * The gateway's Prometheus metrics, served at `GET /metrics` on its listener. One registry per
 * gateway (several can live in one process, in tests). Labelled children are memoized: the hot
 * path increments a counter without hashing label objects.
 */
import { Counter, Gauge, Registry } from 'prom-client';

type CounterChild = ReturnType<Counter<string>['labels']>;

export type CallOutcome = 'result' | 'error' | 'cache_hit' | 'rejected';

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #httpResponses = new Counter({ name: 'edgeport_gateway_http_responses_total', help: 'HTTP responses by status code.', labelNames: ['status'], registers: [this.registry] });
  readonly #calls = new Counter({ name: 'edgeport_gateway_calls_total', help: 'JSON-RPC calls (batch members count one each) by network, method and outcome.', labelNames: ['network', 'method', 'outcome'], registers: [this.registry] });
  readonly #upstreamCalls = new Counter({ name: 'edgeport_gateway_upstream_calls_total', help: 'Calls sent to upstream nodes, by network, upstream position (0 = first URL) and outcome.', labelNames: ['network', 'upstream', 'outcome'], registers: [this.registry] });
  readonly #rateLimited = new Counter({ name: 'edgeport_gateway_rate_limited_requests_total', help: 'HTTP requests refused by the per-client rate limit.', registers: [this.registry] });
  readonly #unmapped = new Counter({ name: 'edgeport_unmapped_errors_total', help: 'Errors that reached a surface without a mapping (answered as internal errors).', labelNames: ['surface'], registers: [this.registry] });
  readonly cacheEntries = new Gauge({ name: 'edgeport_gateway_cache_entries', help: 'Answers held in the cache.', registers: [this.registry] });
  readonly #children = new Map<string, CounterChild>();
  /** Method label values are bounded: names outside the served set count as "other". */
  readonly #knownMethod: (method: string) => boolean;

  constructor(knownMethod: (method: string) => boolean) {
    this.#knownMethod = knownMethod;
  }

  httpResponse(status: number): void {
    this.#child(this.#httpResponses, `http ${status}`, () => [String(status)]).inc();
  }

  call(network: string, method: string, outcome: CallOutcome): void {
    const label = this.#knownMethod(method) ? method : 'other';
    this.#child(this.#calls, `call ${network} ${label} ${outcome}`, () => [network, label, outcome]).inc();
  }

  upstreamCall(network: string, upstream: number, outcome: 'ok' | 'failed'): void {
    this.#child(this.#upstreamCalls, `upstream ${network} ${upstream} ${outcome}`, () => [network, String(upstream), outcome]).inc();
  }

  rateLimited(): void {
    this.#rateLimited.inc();
  }

  unmappedError(): void {
    this.#unmapped.labels('gateway').inc();
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The labelled child of `counter`, memoized under `key` (label values contain no spaces). */
  #child(counter: Counter<string>, key: string, labels: () => string[]): CounterChild {
    let child = this.#children.get(key);
    if (!child) {
      child = counter.labels(...labels());
      this.#children.set(key, child);
    }
    return child;
  }
}
