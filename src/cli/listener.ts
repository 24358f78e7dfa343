/**
 * One HTTP listener of the CLI: bound to a host and port, guarded against slow and flooding
 * clients, and closed with a drain, so requests in flight after SIGTERM get DRAIN_MS to finish
 * before their connections are cut.
 *
 * Expectations other than `100-continue` are ignored (the request is served as without its Expect),
 * and so is an upgrade to h2c (the request is served over HTTP/1.1, as without its Upgrade).
 *
 * Guards (`[limits]`, src/config/limits.ts), each bounding what a client can hold before the
 * service behind the listener sees anything:
 * - the whole request head must arrive within `headerTimeoutMs` (Node's `headersTimeout`, checked
 *   every 1/10 of it, at most every second); a connection idle between requests is closed after
 *   `keepAliveTimeoutMs`; one that moves no bytes mid-request after `idleTimeoutMs`. A request
 *   has no overall time limit: a 5 GiB upload over a slow link must finish.
 * - a connection over its client's cap (`maxConnectionsPerClient`, shrinking to a fair share as
 *   the listener fills: connection-limiter.ts) is answered with a prepared 503 and closed before
 *   an HTTP parser is attached to it; when the listener holds `maxConnections`, a lighter client's
 *   connection takes the place of the heaviest client's oldest idle one, else it is refused so.
 * - while the event loop runs more than `maxEventLoopDelayMs` behind, new requests are answered
 *   503 at once (load shedding), except the paths in `unshedPaths` (a metrics scrape) and up to
 *   UNSHED_ARRIVALS after each sample of the loop's delay, shared out by client: at most
 *   UNSHED_PER_CLIENT of them to one client address, so a flood from a few addresses cannot take
 *   every place a client with one request needs. Since shedding stops a loop turn from serving more
 *   once it runs that far behind, a waiting request waits about two such turns.
 */
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { DEFAULTS } from '../config/defaults.ts';
import type { ListenerLimits } from '../config/limits.ts';
import { asksOnlyForH2c, serveUpgradeAsHttp1 } from '../core/http/h2c.ts';
import type { Logger } from '../core/log.ts';
import type { RequestListener } from '../core/service.ts';
import { CliError } from './cli-errors.ts';
import { ConnectionLimiter, clientKey } from './connection-limiter.ts';
import { EventLoopDelayMonitor, type LoopDelay } from './event-loop-delay.ts';
import { prepareRefusal, RETRY_AFTER_S, type ListenerErrorCode, type Refusal, type Surface } from './listener-errors.ts';

/** How long requests in flight may take to finish after SIGTERM before connections are cut. */
const DRAIN_MS = 2_000;
/** How long a refused connection may stay open to read what its client sent (so closing does not reset the answer away). */
const REFUSAL_LINGER_MS = 1_000;
/** Refused connections allowed to linger at once; beyond, they are closed as soon as the answer is written. */
const MAX_LINGERING = 1_024;
/**
 * Requests a listener serves after each sample of the event loop's delay however far behind it
 * runs: a few requests arriving behind a pause of the loop's own (a garbage collection, the
 * machine's other work) are no flood, and shedding them would only fail their clients; a flood
 * brings far more within one loop turn.
 */
const UNSHED_ARRIVALS = 16;
/** Of those, the most one client address gets per sample: a flooding client leaves the other places to everyone else. */
const UNSHED_PER_CLIENT = 4;
/** At most one log line per this many ms about refused connections, with the counts since the last. */
const REFUSAL_LOG_MS = 10_000;

export interface Listener {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Whose error shape refusals use: plain text unless given. */
  surface?: Surface;
  /** Overrides of DEFAULTS.limits (edgeport start passes the whole `[limits]`). */
  limits?: Partial<ListenerLimits>;
  /** Paths (without query) that are never shed, such as `/metrics`. */
  unshedPaths?: readonly string[];
  /** Where refusals and load shedding are reported (warn level, rate-limited). */
  logger?: Logger;
  /** How the user picks another port, named when this one cannot be had (e.g. `--api-port N (or [ports] api ...)`). */
  portHint?: string;
  /**
   * The handler answers `Expect: 100-continue` itself (res.writeContinue once it accepts the
   * request), so a request it refuses is never told to send its body. Otherwise Node answers
   * 100 Continue before the handler runs.
   */
  handlesExpectContinue?: boolean;
  /** WebSocket upgrades (tail sessions on the API's port); without it, Node closes upgrade requests. */
  onUpgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /**
   * How far behind the loop runs, for load shedding (default: an EventLoopDelayMonitor sampling at
   * sampleMsFor(maxEventLoopDelayMs)); the listener closes it. Tests give one they set.
   */
  loopDelay?: LoopDelay;
}

/** Listens on host:port (0 picks a free port); rejects with CLI_PORT_IN_USE (or CLI_PORT_UNAVAILABLE), naming the port and `portHint`, when it cannot have it. */
export async function listen(handler: RequestListener, host: string, port: number, label: string, options: ListenOptions = {}): Promise<Listener> {
  const limits: ListenerLimits = { ...DEFAULTS.limits, ...options.limits };
  const guard = new ListenerGuard(handler, label, limits, options);
  const onUpgrade = options.onUpgrade;
  const serverOptions: ServerOptions & { shouldUpgradeCallback?: (req: IncomingMessage) => boolean } = {
    // No limit on a whole request; the head alone is limited, checked promptly (Node checks every 30 s by default).
    requestTimeout: 0,
    headersTimeout: limits.headerTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.max(10, Math.floor(limits.headerTimeoutMs / 10))),
    // An h2c upgrade (curl --http2) is served as the HTTP/1.1 request it also is, never switched
    // (core/http/h2c.ts); other upgrades go to `onUpgrade`. Node 22.21 / 24.9 and later ask this;
    // older ones hand every upgrade to the 'upgrade' event, which serves h2c itself below.
    shouldUpgradeCallback: (req) => onUpgrade !== undefined && !asksOnlyForH2c(req.headers),
  };
  const server = createServer(serverOptions, guard.onRequest);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Node emits 'checkContinue' (instead of answering 100 Continue itself) only when it has a listener.
  if (options.handlesExpectContinue) server.on('checkContinue', guard.onRequest);
  // An expectation other than 100-continue (`Expect: 200`, an empty Expect) is ignored and the
  // request served as without it (RFC 9110 §10.1.1 lets a server do either): without this
  // listener Node answers 417 itself, in no service's error shape and before any handler sees it.
  server.on('checkExpectation', guard.onRequest);
  // Upgraded sockets (tail WebSockets) are no longer the HTTP server's to close: they are tracked here, so a drain can cut them.
  const upgraded = new Set<Duplex>();
  if (onUpgrade) {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      upgraded.add(socket);
      socket.once('close', () => upgraded.delete(socket));
      if (asksOnlyForH2c(req.headers)) serveUpgradeAsHttp1(req, socket, guard.onRequest);
      else onUpgrade(req, socket, head);
    });
  }
  // With no 'timeout' listener, Node destroys the idle socket.
  server.setTimeout(limits.idleTimeoutMs);
  guard.takeConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port, label, options.portHint)));
    server.listen(port, host, () => resolve());
  });
  // An accept that fails later (out of file descriptors) must not end the process; the listener goes on.
  server.on('error', (error) => options.logger?.warn({ err: error, listener: label }, 'Listener failed to accept a connection.'));
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    url: `http://${host}:${bound}`,
    async close() {
      guard.close();
      await drain(server, upgraded);
    },
  };
}

/** A failed bind as the user's to fix: what holds the port or why it cannot be had, and how to pick another. */
function listenError(error: NodeJS.ErrnoException, host: string, port: number, label: string, hint: string | undefined): Error {
  const another = `pick another port${hint === undefined ? '' : ` with ${hint}`}; 0 picks a free one`;
  if (error.code === 'EADDRINUSE') {
    return new CliError('CLI_PORT_IN_USE', `Port ${port} on ${host} (${label}) is already in use. Stop what holds it, or ${another}.`, { cause: error });
  }
  if (error.code === 'EACCES') {
    return new CliError(
      'CLI_PORT_UNAVAILABLE',
      `Port ${port} on ${host} (${label}) cannot be used: this user may not listen on it (ports below 1024 need privileges). Pick another port${hint === undefined ? '' : ` with ${hint}`}.`,
      { cause: error },
    );
  }
  if (error.code === 'EADDRNOTAVAIL') {
    return new CliError(
      'CLI_PORT_UNAVAILABLE',
      `Cannot listen on ${host} (${label}): this machine has no such address. Set host in edgeport.toml (or EDGEPORT_HOST) to one of its addresses.`,
      { cause: error },
    );
  }
  return error;
}

/** The per-listener state behind the guards: connection counts, prepared refusals, the delay monitor. */
class ListenerGuard {
  readonly #handler: RequestListener;
  readonly #label: string;
  readonly #limits: ListenerLimits;
  readonly #logger: Logger | undefined;
  readonly #unshed: ReadonlySet<string>;
  readonly #limiter: ConnectionLimiter<Socket>;
  readonly #refusals: Record<ListenerErrorCode, Refusal>;
  readonly #monitor: LoopDelay | undefined;
  readonly #lingering = new Set<Socket>();
  readonly #refused: Record<ListenerErrorCode, number> = { LISTENER_OVERLOADED: 0, LISTENER_CLIENT_CONNECTION_LIMIT: 0, LISTENER_CONNECTION_LIMIT: 0 };
  /** Idle connections closed to make room for another client's, since the last report. */
  #evicted = 0;
  #lastReportAt = -Infinity;
  #shedding = false;
  /** Requests served since the monitor's sample number `#arrivalsSample`, in all and by client address. */
  #arrivals = 0;
  readonly #arrivalsByClient = new Map<string, number>();
  #arrivalsSample = -1;

  constructor(handler: RequestListener, label: string, limits: ListenerLimits, options: ListenOptions) {
    this.#handler = handler;
    this.#label = label;
    this.#limits = limits;
    this.#logger = options.logger;
    this.#unshed = new Set(options.unshedPaths ?? []);
    this.#limiter = new ConnectionLimiter(limits);
    const surface = options.surface ?? 'edge';
    this.#refusals = {
      LISTENER_OVERLOADED: prepareRefusal(surface, 'LISTENER_OVERLOADED', limits.maxEventLoopDelayMs),
      LISTENER_CLIENT_CONNECTION_LIMIT: prepareRefusal(surface, 'LISTENER_CLIENT_CONNECTION_LIMIT', limits.maxConnectionsPerClient),
      LISTENER_CONNECTION_LIMIT: prepareRefusal(surface, 'LISTENER_CONNECTION_LIMIT', limits.maxConnections),
    };
    this.#monitor =
      limits.maxEventLoopDelayMs > 0
        ? (options.loopDelay ?? new EventLoopDelayMonitor(EventLoopDelayMonitor.sampleMsFor(limits.maxEventLoopDelayMs)))
        : undefined;
    if (this.#monitor === undefined) options.loopDelay?.close();
  }

  /**
   * Puts the admission check in front of Node's own connection handling: the HTTP server's
   * 'connection' listeners (which attach the parser) run only for admitted connections.
   */
  takeConnections(server: Server): void {
    const httpListeners = server.listeners('connection') as Array<(this: Server, socket: Socket) => void>;
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      const admission = this.#limiter.admit(clientKey(socket.remoteAddress), socket);
      if (admission.refused !== undefined) {
        this.#refuse(socket, this.#refusals[admission.refused]);
        return;
      }
      if (admission.evict !== undefined) {
        // The heaviest client's oldest idle connection (a partial head, or kept alive between requests): closed like a timed-out one.
        admission.evict.destroy();
        this.#evicted += 1;
        this.#report();
      }
      socket.once('close', () => this.#limiter.release(socket));
      for (const listener of httpListeners) listener.call(server, socket);
    });
  }

  readonly onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    // A connection with a request being handled is never evicted; once answered it is idle again.
    const socket = req.socket;
    this.#limiter.busy(socket);
    res.once('close', () => this.#limiter.idle(socket));
    if (req.headers.upgrade !== undefined && upgradeAsHttp(req, res)) return;
    if (this.#monitor !== undefined) {
      if (this.#arrivalsSample !== this.#monitor.samples) {
        this.#arrivalsSample = this.#monitor.samples;
        this.#arrivals = 0;
        this.#arrivalsByClient.clear();
      }
      // Counted only while places are left, so the map holds at most UNSHED_ARRIVALS clients.
      const client = clientKey(socket.remoteAddress);
      const byClient = this.#arrivalsByClient.get(client) ?? 0;
      const placed = this.#arrivals < UNSHED_ARRIVALS && byClient < UNSHED_PER_CLIENT;
      if (placed) {
        this.#arrivals += 1;
        this.#arrivalsByClient.set(client, byClient + 1);
      }
      const behindMs = this.#monitor.behindMs();
      if (behindMs > this.#limits.maxEventLoopDelayMs && !placed && !this.#unshed.has(pathOf(req.url))) {
        this.#shed(req, res, behindMs);
        return;
      }
      if (this.#shedding) {
        this.#shedding = false;
        this.#logger?.warn({ listener: this.#label, behindMs: Math.round(behindMs) }, 'Load shedding stopped: the event loop caught up.');
      }
    }
    this.#handler(req, res);
  };

  close(): void {
    this.#monitor?.close();
  }

  #shed(req: IncomingMessage, res: ServerResponse, behindMs: number): void {
    if (!this.#shedding) {
      this.#shedding = true;
      this.#logger?.warn(
        { listener: this.#label, behindMs: Math.round(behindMs), maxEventLoopDelayMs: this.#limits.maxEventLoopDelayMs },
        'Load shedding started: new requests get 503 until the event loop catches up.',
      );
    }
    this.#count('LISTENER_OVERLOADED');
    const refusal = this.#refusals.LISTENER_OVERLOADED;
    // A body would have to be read (or dumped) to keep the connection; closing it is cheaper.
    const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
    res.writeHead(503, {
      'content-type': refusal.contentType,
      'content-length': refusal.body.length,
      'retry-after': String(RETRY_AFTER_S),
      ...(hasBody ? { connection: 'close' } : {}),
    });
    res.end(refusal.body);
  }

  /** Answers and closes a connection that no HTTP parser will see; what the client sends meanwhile is read and dropped. */
  #refuse(socket: Socket, refusal: Refusal): void {
    this.#count(refusal.code);
    socket.on('error', () => socket.destroy());
    if (this.#lingering.size >= MAX_LINGERING) {
      socket.end(refusal.raw, () => socket.destroy());
      return;
    }
    this.#lingering.add(socket);
    socket.once('close', () => this.#lingering.delete(socket));
    socket.setTimeout(REFUSAL_LINGER_MS, () => socket.destroy());
    socket.once('end', () => socket.destroy());
    socket.resume();
    socket.end(refusal.raw);
  }

  #count(code: ListenerErrorCode): void {
    this.#refused[code] += 1;
    this.#report();
  }

  #report(): void {
    const now = performance.now();
    if (now - this.#lastReportAt < REFUSAL_LOG_MS) return;
    this.#lastReportAt = now;
    this.#logger?.warn(
      { listener: this.#label, refused: { ...this.#refused }, evicted: this.#evicted, openConnections: this.#limiter.total },
      'Listener refused connections or requests over its limits, or closed idle connections to make room (counts since the last report).',
    );
    for (const key of Object.keys(this.#refused) as ListenerErrorCode[]) this.#refused[key] = 0;
    this.#evicted = 0;
  }
}

/**
 * An Upgrade request Node serves as plain HTTP (the listener has no 'upgrade' handler, or the
 * upgrade is to h2c, so Node passes it on as a request): Node's parser stops at the end of such a
 * request, so the connection can serve no other (it is closed after the answer), and it swallows
 * the parse errors of its body, so a malformed one (a bad chunk size) would hold the request until
 * the idle timeout. A body there is refused at once with 400 (a handshake has none: RFC 6455 §4.1,
 * RFC 9110 §7.8 switches protocols after the request); true when answered so. But an h2c upgrade is
 * an ordinary request that also offers HTTP/2 (curl --http2 sends it with a POST's body too): it is
 * served with its body, as a server without h2c must (core/http/h2c.ts), when that body has a
 * Content-Length; a chunked one is still refused, since its malformed chunks would go unnoticed.
 */
function upgradeAsHttp(req: IncomingMessage, res: ServerResponse): boolean {
  res.shouldKeepAlive = false;
  // An h2c offer with a Content-Length body is served; a chunked one keeps the 400 (a bad chunk would wait out the idle timeout).
  if (asksOnlyForH2c(req.headers) && req.headers['transfer-encoding'] === undefined) return false;
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (!hasBody) return false;
  const body = 'error 400: an Upgrade request may not carry a body: send the request without Upgrade, or without a body.\n';
  res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
  return true;
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Closes `server`: idle connections at once, the rest (upgraded sockets too, which would hold server.close for ever) after DRAIN_MS. */
async function drain(server: Server, upgraded: Set<Duplex>): Promise<void> {
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeIdleConnections();
  const timer = setTimeout(() => {
    server.closeAllConnections();
    for (const socket of upgraded) socket.destroy();
  }, DRAIN_MS);
  await closed;
  clearTimeout(timer);
}
