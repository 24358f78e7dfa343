/**
 * Proxies a request to a zone's origin, streaming both bodies under backpressure. Hop-by-hop
 * headers (RFC 9110 §7.6.1, and any named in Connection) are not forwarded either way; the origin
 * gets the client's Host and X-Forwarded-For / X-Forwarded-Proto / edgeport-connecting-ip /
 * edgeport-ray. When the origin cannot answer, the client gets the real service's origin error
 * statuses: 521 (connection refused), 522 (connect timed out), 523 (unreachable), 524 (no response
 * in time), 502 (anything else). A zone that is not the operator's connects only where its
 * OriginGuard allows (origin-policy.ts): the guard judges every address the origin's name resolves
 * to, in the lookup of the connection itself (so DNS cannot answer one thing to a check and another
 * to the connection), and IP literals before connecting; a refusal is the real service's
 * "Error 1000: DNS points to prohibited IP" (403). Guarded connections have agents of their own, so a
 * kept-alive connection opened for the operator is never reused for another account's zone.
 */
import { request as httpRequest, Agent as HttpAgent, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, ProhibitedAddressError, systemResolve, type ResolveAll } from '../core/net/outbound-guard.ts';
import type { Logger } from '../core/log.ts';
import type { OriginGuard } from './origin-policy.ts';
import { connectionHeaderTokens } from '../core/http/connection-tokens.ts';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export type { ResolveAll };

export interface OriginProxyOptions {
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  /** Where origin failures are told in full (the origin's URL, address and error); the visitor's page never says them. */
  logger?: Logger;
  /** How guarded connections resolve origin names (default dns.lookup; tests answer their own). */
  resolve?: ResolveAll;
}

export interface ProxyOutcome {
  /** The origin's status, or 0 when it did not answer. */
  originStatus: number;
  /** The origin's response headers as received (Node rawHeaders shape). */
  originRawHeaders: string[];
  /** Ms from sending the request to the origin's response headers. */
  originTimeMs: number;
}

export interface ProxyContext {
  rayId: string;
  clientIp: string;
  /** Where the zone may connect; absent for the operator's zones. */
  guard?: OriginGuard | null;
}

export class OriginProxy {
  readonly #options: OriginProxyOptions;
  readonly #http = new HttpAgent({ keepAlive: true, maxSockets: 256 });
  readonly #https = new HttpsAgent({ keepAlive: true, maxSockets: 256 });
  /** For guarded zones only: their sockets were all connected through the guard. */
  readonly #guardedHttp = new HttpAgent({ keepAlive: true, maxSockets: 256 });
  readonly #guardedHttps = new HttpsAgent({ keepAlive: true, maxSockets: 256 });

  constructor(options: OriginProxyOptions) {
    this.#options = options;
  }

  /**
   * Forwards `req` to `origin` and streams the answer (or an origin error) into `res`. `outcome` is
   * filled in as soon as the origin's headers arrive (before the body ends, when the record is made).
   */
  forward(req: IncomingMessage, res: ServerResponse, origin: URL, context: ProxyContext, outcome: ProxyOutcome): Promise<void> {
    const secure = origin.protocol === 'https:';
    const hostname = origin.hostname.replace(/^\[|\]$/g, '');
    const port = Number(origin.port) || (secure ? 443 : 80);
    const { guard } = context;
    // An IP literal is connected to without a lookup: judge it here.
    const refused = guard && isIP(hostname) ? guard(hostname, port) : null;
    if (refused !== null) {
      this.#originError(res, 403, origin, context.rayId, new ProhibitedAddressError(refused));
      return Promise.resolve();
    }
    const base = origin.pathname.endsWith('/') ? origin.pathname.slice(0, -1) : origin.pathname;
    const headers = forwardHeaders(req.rawHeaders);
    const prior = req.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${context.clientIp}` : context.clientIp;
    headers['x-forwarded-proto'] = 'http';
    headers['edgeport-connecting-ip'] = context.clientIp;
    headers['edgeport-ray'] = context.rayId;
    const started = performance.now();
    return new Promise<void>((resolve) => {
      let settled = false;
      const finish = (): void => {
        if (!settled) {
          settled = true;
          resolve();
        }
      };
      const upstream = (secure ? httpsRequest : httpRequest)({
        protocol: origin.protocol,
        hostname,
        port,
        method: req.method,
        path: base + (req.url ?? '/'),
        headers,
        setHost: false,
        ...(guard
          ? { agent: secure ? this.#guardedHttps : this.#guardedHttp, lookup: guardedLookup(guard, port, this.#options.resolve ?? systemResolve) }
          : { agent: secure ? this.#https : this.#http }),
      });
      let connected = false;
      const connectTimer = setTimeout(() => upstream.destroy(new OriginError(522)), this.#options.connectTimeoutMs);
      const responseTimer = setTimeout(() => upstream.destroy(new OriginError(524)), this.#options.responseTimeoutMs);
      upstream.once('socket', (socket) => {
        if (!socket.connecting) {
          connected = true;
          clearTimeout(connectTimer);
        } else {
          socket.once('connect', () => {
            connected = true;
            clearTimeout(connectTimer);
          });
        }
      });
      upstream.once('response', (answer) => {
        clearTimeout(connectTimer);
        clearTimeout(responseTimer);
        outcome.originStatus = answer.statusCode ?? 0;
        outcome.originRawHeaders = answer.rawHeaders;
        outcome.originTimeMs = performance.now() - started;
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, responseHeaders(answer.rawHeaders, context.rayId));
        answer.pipe(res);
        answer.once('error', () => res.destroy());
        res.once('close', () => {
          if (!answer.complete) answer.destroy();
          finish();
        });
        answer.once('end', finish);
      });
      upstream.once('error', (error: Error & { code?: string }) => {
        clearTimeout(connectTimer);
        clearTimeout(responseTimer);
        const status =
          error instanceof OriginError
            ? error.status
            : error instanceof ProhibitedAddressError
              ? 403
              : error.code === 'ECONNREFUSED'
                ? 521
                : error.code === 'ENOTFOUND' || error.code === 'EHOSTUNREACH' || error.code === 'ENETUNREACH' || error.code === 'EAI_AGAIN'
                  ? 523
                  : connected
                    ? 502
                    : 521;
        outcome.originTimeMs = performance.now() - started;
        if (!res.headersSent) this.#originError(res, status, origin, context.rayId, error);
        else res.destroy();
        finish();
      });
      req.pipe(upstream);
      req.once('error', () => upstream.destroy());
    });
  }

  close(): void {
    for (const agent of [this.#http, this.#https, this.#guardedHttp, this.#guardedHttps]) agent.destroy();
  }

  /** Answers the visitor with the status alone and logs, under the same Ray ID, where the origin led and why it failed. */
  #originError(res: ServerResponse, status: number, origin: URL, rayId: string, error: Error): void {
    this.#options.logger?.warn({ rayId, status, origin: origin.origin, reason: error.message }, 'Origin request failed.');
    sendOriginError(res, status, rayId, error);
  }
}

class OriginError extends Error {
  constructor(readonly status: 522 | 524) {
    super(status === 522 ? 'connect timed out' : 'no response in time');
  }
}

const ORIGIN_ERRORS: Record<number, string> = {
  502: 'the origin answered with something that is not HTTP, or closed the connection',
  521: 'the origin refused the connection',
  522: 'the connection to the origin timed out',
  523: 'the origin is unreachable',
  524: 'the origin did not answer in time',
};

/**
 * The visitor's page: what failed, never the origin's URL, address or error (any visitor would
 * learn the zone's backend, or which addresses the edge may not reach); the operator finds them
 * in the server log under the Ray ID.
 */
function sendOriginError(res: ServerResponse, status: number, rayId: string, error: Error): void {
  // Like the real service, a prohibited origin is error 1000 with status 403.
  const body =
    error instanceof ProhibitedAddressError
      ? `error 1000: DNS points to prohibited IP: this zone's origin leads to an address it may not use. Point the origin at a public address; the server log says more under this Ray ID.\nRay ID: ${rayId}\n`
      : `error ${status}: ${ORIGIN_ERRORS[status] ?? 'origin error'}.\nRay ID: ${rayId}\n`;
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'edgeport-ray': rayId });
  res.end(body);
}

/** The end-to-end headers of a raw header list, joined per name (set-cookie kept as a list). */
function forwardHeaders(raw: readonly string[]): OutgoingHttpHeaders {
  const connectionTokens = connectionHeaderTokens(raw);
  const out: OutgoingHttpHeaders = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || connectionTokens.has(name)) continue;
    const value = raw[i + 1]!;
    const prior = out[name];
    if (prior === undefined) out[name] = value;
    else if (Array.isArray(prior)) prior.push(value);
    else out[name] = [String(prior), value];
  }
  return out;
}

/** Response headers for the client: the origin's end-to-end headers in order, plus edgeport-ray. */
function responseHeaders(raw: readonly string[], rayId: string): string[] {
  const connectionTokens = connectionHeaderTokens(raw);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || connectionTokens.has(name)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  out.push('edgeport-ray', rayId);
  return out;
}
