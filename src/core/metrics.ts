/**
 * The process's Prometheus metrics (prom-client), served at `GET /metrics` on the management API's
 * port. Every service registers its metrics in this registry (the gateway, which keeps a registry
 * of its own for its port's /metrics, is rendered with it: include); what is cheaper to read
 * at scrape time than to count on the hot path (tallies, spool sizes) is brought up to date by the
 * hooks given to beforeScrape, run before each rendering.
 *
 * HTTP requests of every listener are counted by instrumentRequests: labels are the service, the
 * method (a fixed set, else `other`) and the status class (`2xx`...`5xx`, or `aborted` when the
 * client went away first): never a path, an id or a key, so the number of series stays bounded.
 * Names follow `edgeport_<area>_<name>_<unit>`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Histogram, Registry } from 'prom-client';
import type { RequestListener } from './service.ts';

/** Seconds: from a fast cached read to a slow upload. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const METHODS = new Set(['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS']);
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

export type StatusClass = (typeof STATUS_CLASSES)[number] | 'aborted';

export function statusClass(status: number): StatusClass {
  return STATUS_CLASSES[Math.floor(status / 100) - 1] ?? '5xx';
}

export class Metrics {
  readonly registry = new Registry();
  readonly #hooks: Array<() => void | Promise<void>> = [];
  /** Registries of services that keep their own (the gateway's), rendered with this one. */
  readonly #included: Registry[] = [];
  readonly #requests = new Counter({
    name: 'edgeport_http_requests_total',
    help: 'HTTP requests answered, by service, method and status class (aborted: the client left first).',
    labelNames: ['service', 'method', 'status_class'],
    registers: [this.registry],
  });
  readonly #errors = new Counter({
    name: 'edgeport_http_request_errors_total',
    help: 'HTTP requests that failed on the server side (5xx) or were cut before their answer was sent (aborted), by service.',
    labelNames: ['service', 'kind'],
    registers: [this.registry],
  });
  readonly #durations = new Histogram({
    name: 'edgeport_http_request_duration_seconds',
    help: 'Time from the request head to the last byte of the answer, by service.',
    labelNames: ['service'],
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  /** Runs `hook` before each rendering (to set gauges, hand over tallies); a promise is waited for. */
  beforeScrape(hook: () => void | Promise<void>): void {
    this.#hooks.push(hook);
  }

  /** Renders `registry` with this one (its metric names must differ from this one's), after `hook`. */
  include(registry: Registry, hook?: () => void): void {
    this.#included.push(registry);
    if (hook) this.#hooks.push(hook);
  }

  /** The Prometheus text exposition of every registered metric. */
  async text(): Promise<string> {
    for (const hook of this.#hooks) await hook();
    return (this.#included.length === 0 ? this.registry : Registry.merge([this.registry, ...this.#included])).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** `handler`, with each request counted and timed under `service` (e.g. `edge`, `api`, `s3`, `gateway`). */
  instrumentRequests(handler: RequestListener, service: string): RequestListener {
    const durations = this.#durations.labels(service);
    const counts = new Map<string, Counter.Internal>();
    const count = (method: string, klass: StatusClass) => {
      const key = `${method} ${klass}`;
      let child = counts.get(key);
      if (child === undefined) counts.set(key, (child = this.#requests.labels(service, method, klass)));
      child.inc();
      if (klass === '5xx' || klass === 'aborted') this.#errors.labels(service, klass === '5xx' ? 'server_error' : 'aborted').inc();
    };
    return function instrumentedRequest(req: IncomingMessage, res: ServerResponse): void {
      const started = process.hrtime.bigint();
      const method = METHODS.has(req.method ?? '') ? req.method! : 'other';
      res.once('close', () => {
        count(method, res.writableFinished ? statusClass(res.statusCode) : 'aborted');
        durations.observe(Number(process.hrtime.bigint() - started) / 1e9);
      });
      handler(req, res);
    };
  }
}
