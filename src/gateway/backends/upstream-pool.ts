/**
 * A network's upstream nodes: pooled keep-alive connections (undici), a timeout per call, and
 * failover in configuration order. An upstream that fails (connection error, timeout, non-2xx,
 * a body that is not a JSON-RPC response) is skipped for `cooldownMs` while others answer.
 * JSON-RPC errors from a node are answers and pass through unchanged.
 *
 * Writes (eth_sendRawTransaction) are never retried on another upstream once they may have been
 * sent: only a connection that could not be opened (the request provably never left) moves a
 * write on to the next node. Clients are told an upstream failed, never which URL or why; the
 * log has the details.
 */
import { Pool } from 'undici';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/log.ts';
import { gatewayError } from '../errors.ts';
import type { RpcAnswer, RpcErrorObject } from '../json-rpc/response.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { ChainBackend } from './backend.ts';

/** Error codes of connections that never carried the request. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
/** Connections per upstream: enough for a busy gateway, few enough not to flood one node. */
const CONNECTIONS_PER_UPSTREAM = 64;

export interface UpstreamPoolOptions {
  network: string;
  urls: readonly string[];
  timeoutMs: number;
  cooldownMs: number;
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
}

class UpstreamFailure extends Error {
  readonly sent: boolean;
  constructor(message: string, sent: boolean, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.sent = sent;
  }
}

class Upstream {
  readonly index: number;
  readonly #pool: Pool;
  readonly #path: string;
  readonly #headers: Record<string, string>;
  /** Clock time until which this upstream is skipped. */
  downUntil = 0;

  constructor(url: string, index: number) {
    const parsed = new URL(url);
    this.index = index;
    this.#path = `${parsed.pathname}${parsed.search}`;
    const headers = parsed.username
      ? { authorization: `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}` }
      : undefined;
    this.#headers = { 'content-type': 'application/json', ...headers };
    this.#pool = new Pool(parsed.origin, { connections: CONNECTIONS_PER_UPSTREAM, keepAliveTimeout: 30_000 });
  }

  async send(body: string, timeoutMs: number): Promise<RpcAnswer> {
    let response;
    try {
      response = await this.#pool.request({
        path: this.#path,
        method: 'POST',
        headers: this.#headers,
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      throw new UpstreamFailure(`request failed (${code || (error as Error).message})`, !NOT_SENT.has(code), error);
    }
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw new UpstreamFailure(`reading the answer failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, true, error);
    }
    if (response.statusCode < 200 || response.statusCode > 299) throw new UpstreamFailure(`answered HTTP ${response.statusCode}`, true);
    return toAnswer(text);
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

export class UpstreamPool implements ChainBackend {
  readonly #options: UpstreamPoolOptions;
  readonly #upstreams: Upstream[];

  constructor(options: UpstreamPoolOptions) {
    this.#options = options;
    this.#upstreams = options.urls.map((url, i) => new Upstream(url, i));
  }

  async call(method: string, params: readonly unknown[], options?: { write?: boolean }): Promise<RpcAnswer> {
    const { clock, logger, network, metrics } = this.#options;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    let tried = 0;
    for (const upstream of this.#order(clock.now())) {
      tried++;
      try {
        const answer = await upstream.send(body, this.#options.timeoutMs);
        upstream.downUntil = 0;
        metrics.upstreamCall(network, upstream.index, 'ok');
        return answer;
      } catch (error) {
        if (!(error instanceof UpstreamFailure)) throw error;
        upstream.downUntil = clock.now() + this.#options.cooldownMs;
        metrics.upstreamCall(network, upstream.index, 'failed');
        logger.warn(
          { network, upstream: upstream.index, method, err: error.cause ?? error },
          `Upstream ${upstream.index} of ${network} failed: ${error.message}.`,
        );
        if (options?.write && error.sent) {
          throw gatewayError(
            'GATEWAY_UPSTREAM_UNAVAILABLE',
            `The upstream node of ${network} failed while taking the transaction; it was not sent to another node, as it may have been received. Check with eth_getTransactionByHash before sending it again.`,
          );
        }
      }
    }
    throw gatewayError('GATEWAY_UPSTREAM_UNAVAILABLE', `No upstream node of ${network} answered (${tried} tried); try again later.`);
  }

  async close(): Promise<void> {
    await Promise.all(this.#upstreams.map((u) => u.close()));
  }

  /** Healthy upstreams in configuration order, then those cooling down (better late than never). */
  #order(now: number): Upstream[] {
    const healthy = this.#upstreams.filter((u) => u.downUntil <= now);
    return healthy.length === this.#upstreams.length ? healthy : [...healthy, ...this.#upstreams.filter((u) => u.downUntil > now)];
  }
}

/** Reads a node's JSON-RPC response to our single call. */
function toAnswer(text: string): RpcAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UpstreamFailure('answered something that is not JSON', true, error);
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const response = parsed as { result?: unknown; error?: RpcErrorObject };
    const error = response.error;
    if (isErrorObject(error))
      return {
        error: error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data },
      };
    if ('result' in response) return { result: JSON.stringify(response.result) };
  }
  throw new UpstreamFailure('answered JSON that is not a JSON-RPC response', true);
}

function isErrorObject(value: unknown): value is RpcErrorObject {
  return (
    typeof value === 'object' && value !== null && typeof (value as RpcErrorObject).code === 'number' && typeof (value as RpcErrorObject).message === 'string'
  );
}
