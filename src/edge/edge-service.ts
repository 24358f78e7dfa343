/**
 * The edge: a host of the dev domain goes to the deployed script its name serves, and a host of the
 * public buckets' domain to the bucket whose managed URL it is, before and apart from any zone
 * (platform-hosts.ts). A custom domain of a public bucket serves the bucket (read-only) on its zone,
 * logged like any request of the zone. Any other request goes to the zone its Host names (the zone or
 * a parent domain of it), then to a script whose route matches (a deployed route only on a zone of
 * its own account), else to the zone's origin. Every request for a zone's host becomes one
 * `http_requests` record carrying the zone's custom fields (from the original request headers and
 * the response as sent), which the zone's enabled log jobs filter, sample, format and spool before
 * the response completes. Unknown hosts, zones without an origin, origins the zone's account may
 * not reach (origin-policy.ts) and failing origins get clear error responses and still produce records.
 * A request for no zone that was meant for another of edgeport's services (a management API path,
 * a JSON-RPC body) is told which port serves it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Clock } from '../core/clock.ts';
import { backendFaultOf, type BackendFault } from '../core/errors/backend-fault.ts';
import { noteFault } from '../core/errors/fault-log.ts';
import { listenerOrigin, mayBeJsonRpc, readJsonRpcBody } from '../core/http/wrong-port.ts';
import type { Logger } from '../core/log.ts';
import type { ServiceHandle } from '../core/service.ts';
import type { CustomFieldNames, ZoneRecord } from '../db/control-store.ts';
import { extractCustomFields } from '../logs/custom-fields.ts';
import type { HttpRequestRecord } from '../logs/http-request-record.ts';
import type { ActiveLogJob, LogPipeline } from '../logs/log-pipeline.ts';
import type { ScriptHost } from '../runtime/index.ts';
import { OriginPolicy } from './origin-policy.ts';
import { parseHostHeader } from './host-header.ts';
import { requestFramingProblem } from './request-framing.ts';
import { OriginProxy, type OriginProxyOptions, type ProxyOutcome } from './origin-proxy.ts';
import { newRayId } from './ray-id.ts';
import { tapResponse, type ResponseTap } from './response-tap.ts';
import type { DeployedMatch } from './deployed-scripts.ts';
import { isPlatformHost } from './platform-hosts.ts';
import { ScriptRouter } from './script-routes.ts';
import { HELD_RECORDS_FILE } from './held-records-file.ts';
import { PendingRecords } from './pending-records.ts';
import type { Metrics } from '../core/metrics.ts';
import { Counter, Gauge } from 'prom-client';
import { ZoneConfigCache, type ZoneConfig } from './zone-config-cache.ts';
import type { ZoneDirectory } from './zone-lookup.ts';

export interface EdgeScript {
  name: string;
  routes: readonly string[];
  host: ScriptHost;
  /** The account the script runs for: requests it serves reach the log jobs of a zone of that account only (default: any zone's). */
  accountId?: string;
}

/** The scripts accounts deploy (deployed-scripts.ts), as the edge asks for them. */
export interface DeployedRoutes {
  /** Its hosts and those under it are the platform's (platform-hosts.ts); null: none. */
  readonly devDomain: string | null;
  /** The script a route of an account sends host and path to (never for a host of the dev domain). */
  match(host: string, path: string): DeployedMatch | undefined;
  /** The script `<script>.<account subdomain>.<dev domain>` serves. */
  devMatch(host: string): DeployedMatch | undefined;
}

/** A public bucket a host serves (src/store/public: the edge only asks and hands the request over). */
export interface PublicBucketServe {
  accountId: string;
  /** The zone a custom domain was attached on; null for a managed URL. */
  zoneId: string | null;
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** Public buckets: managed URLs under `publicDomain` (the platform's hosts) and custom domains on zones. */
export interface PublicBuckets {
  readonly publicDomain: string | null;
  managed(host: string): Promise<PublicBucketServe | undefined>;
  custom(host: string): Promise<PublicBucketServe | undefined>;
}

export interface EdgeServiceOptions {
  zones: ZoneDirectory;
  pipeline: LogPipeline;
  scripts?: readonly EdgeScript[];
  /** Scripts deployed through the API (deployed-scripts.ts): their dev hosts before anything, their routes after the configured ones. */
  deployed?: DeployedRoutes;
  /** Public buckets: their managed URLs before any zone, a custom domain before its zone's scripts and origin. */
  publicBuckets?: PublicBuckets;
  clock: Clock;
  logger: Logger;
  origin?: Partial<OriginProxyOptions>;
  /**
   * Where zones' origins may lead (the API shares it). Default: only the operator's zones may use
   * non-public origins, and no listener of edgeport's own is known.
   */
  originPolicy?: OriginPolicy;
  /** The URLs of edgeport's other listeners once bound (`http://host:port`), named to a request that came to the wrong port. */
  listeners?: { api(): string | undefined; gateway(): string | undefined };
  /** Where the held log records are counted (`/metrics`). */
  metrics?: Metrics;
}

const ORIGIN_DEFAULTS: OriginProxyOptions = { connectTimeoutMs: 15_000, responseTimeoutMs: 100_000 };

export function createEdgeService(options: EdgeServiceOptions): ServiceHandle {
  const { zones, pipeline, clock, logger } = options;
  const proxy = new OriginProxy({ ...ORIGIN_DEFAULTS, logger, ...options.origin });
  const policy =
    options.originPolicy ?? new OriginPolicy({ allowPrivateOrigins: false, operatorAccountId: async () => (await zones.firstAccount())?.id ?? null });
  const cache = new ZoneConfigCache(zones, pipeline, clock);
  // Records of requests answered while their zone could not be read: logged once the database is
  // back; kept beside the job spools meanwhile, so a killed process loses none of them.
  const pending = new PendingRecords({
    resolve: (host) => cache.lookup(host),
    emit: (jobs, record, written) => pipeline.emit(jobs, record, written),
    logger,
    clock,
    path: join(pipeline.logsDir, HELD_RECORDS_FILE),
  });
  if (options.metrics) registerHeldRecordMetrics(options.metrics, pending);
  const router = new ScriptRouter((options.scripts ?? []).flatMap((script) => script.routes.map((pattern) => ({ pattern, target: script }))));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const start = clock.now();
    const rayId = newRayId();
    // Two Host headers, none, or an invalid one: the client's mistake, said plainly (no zone, so no record).
    const hostHeader = parseHostHeader(req.rawHeaders);
    if ('problem' in hostHeader) return sendEdgeError(res, 400, 400, hostHeader.problem, rayId);
    // Framing no origin should see (an unsupported transfer coding, an Upgrade with a body): refused before any of the body is read.
    const framing = requestFramingProblem(req.headers);
    if (framing !== null) return sendEdgeError(res, 400, 400, framing, rayId, { close: true });
    const host = hostHeader.host;
    // The dev domain's hosts are the platform's, resolved before any zone: no zone, route or log job of any account sees them.
    if (options.deployed && isPlatformHost(host, options.deployed.devDomain)) return serveDevHost(req, res, options.deployed, host, rayId);
    const publicBuckets = options.publicBuckets;
    if (publicBuckets && isPlatformHost(host, publicBuckets.publicDomain)) return serveManagedBucket(req, res, publicBuckets, host, rayId);
    const requestRawHeaders = req.rawHeaders.slice();
    const clientIp = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    const path = pathOf(req.url ?? '/');

    let config: ZoneConfig | null;
    try {
      config = await cache.lookup(host);
    } catch (error) {
      const fault = backendFaultOf(error);
      if (!fault) throw error;
      return answerUnresolved(req, res, fault, { rayId, start, host, path, clientIp, requestRawHeaders });
    }
    const zone = config?.zone ?? null;
    // A custom domain of a public bucket takes its host's whole traffic, only on the zone it was attached on.
    const attached = zone !== null && publicBuckets ? await publicBuckets.custom(host) : undefined;
    const bucket = attached && attached.zoneId === zone!.id && attached.accountId === zone!.accountId ? attached : undefined;
    // A configured script runs for its account, a deployed route for the account that made it; only
    // a zone of that account serves (and logs) it: a route left by a deleted zone, or a configured
    // route on another account's zone, never hands that zone's visitors or log jobs to another account.
    const configured = bucket ? undefined : router.match(host, path);
    const routed = configured || bucket ? undefined : options.deployed?.match(host, path);
    const deployed = routed && zone?.accountId === routed.accountId ? routed : undefined;
    const servedFor = bucket ? bucket.accountId : configured ? configured.accountId : deployed?.accountId;
    const logged = zone !== null && (servedFor === undefined || servedFor === zone.accountId);
    const jobs: readonly ActiveLogJob[] = logged ? (config?.jobs ?? []) : [];
    const fields = config?.fields ?? null;

    const origin: ProxyOutcome = { originStatus: 0, originRawHeaders: [], originTimeMs: 0 };
    let recorded = false;
    const record = (tap: ResponseTap, proceed?: () => void): void => {
      if (recorded || jobs.length === 0) {
        recorded = true;
        proceed?.();
        return;
      }
      recorded = true;
      pipeline.emit(
        jobs,
        buildRecord({
          req,
          res,
          tap,
          zone,
          fields,
          rayId,
          start,
          end: clock.now(),
          host,
          path,
          clientIp,
          requestRawHeaders,
          requestBytes: requestBytes(req),
          origin,
        }),
        proceed,
      );
    };
    const tap = tapResponse(res, record);
    res.once('close', () => record(tap));

    if (bucket) {
      res.setHeader('edgeport-ray', rayId);
      await bucket.serve(req, res);
      return;
    }
    const script = configured?.host.handle ?? deployed?.handle;
    if (script) {
      res.setHeader('edgeport-ray', rayId);
      setConnectingIp(req, clientIp);
      script(req, res);
      return;
    }
    if (zone === null) {
      const elsewhere = await wrongPort(req, path, options.listeners);
      return sendEdgeError(
        res,
        530,
        1001,
        `no zone on this edgeport serves the host "${host}". ${elsewhere ?? 'Create the zone (POST /client/v4/zones) or fix the Host header.'}`,
        rayId,
      );
    }
    // Any visitor sees this page: it names the host asked for, not the zone's name or id (the owner finds those in the API).
    if (zone.origin === null)
      return sendEdgeError(
        res,
        530,
        1016,
        `the zone serving "${host}" has no origin. Its owner sets one with PATCH /client/v4/zones/<zone id> {"origin": "http://..."} or routes a script to it.`,
        rayId,
      );
    await proxy.forward(req, res, new URL(zone.origin), { rayId, clientIp, guard: await policy.guardFor(zone.accountId) }, origin);
  }

  /**
   * The database is away and this host's zone was never read: 503 with Retry-After, and the
   * request's record held (in `<data dir>/logs/held-records` before the response completes) until
   * the zone can be read (pending-records.ts).
   */
  function answerUnresolved(
    req: IncomingMessage,
    res: ServerResponse,
    fault: BackendFault,
    at: { rayId: string; start: number; host: string; path: string; clientIp: string; requestRawHeaders: string[] },
  ): void {
    noteFault(logger, 'edge', fault);
    const origin: ProxyOutcome = { originStatus: 0, originRawHeaders: [], originTimeMs: 0 };
    let recorded = false;
    const hold = (tap: ResponseTap, proceed?: () => void): void => {
      if (!recorded) {
        recorded = true;
        pending.add({
          host: at.host,
          requestRawHeaders: at.requestRawHeaders,
          responseRawHeaders: tap.rawHeaders(),
          record: buildRecord({ req, res, tap, zone: null, fields: null, ...at, end: clock.now(), requestBytes: requestBytes(req), origin }),
        });
      }
      proceed?.();
    };
    const tap = tapResponse(res, hold);
    res.once('close', () => hold(tap));
    sendEdgeError(res, 503, 503, `edgeport is temporarily unavailable: ${lowerFirst(fault.message)}. Retry after ${fault.retryAfterS} s.`, at.rayId, {
      retryAfterS: fault.retryAfterS,
    });
  }

  return {
    handler(req, res) {
      handle(req, res).catch((error: unknown) => {
        const fault = backendFaultOf(error);
        if (fault) noteFault(logger, 'edge', fault);
        else logger.error({ err: error }, 'Edge request failed unexpectedly');
        if (res.headersSent) res.destroy();
        // A backend down, slow or full is an outage to retry, not a failure of the request's own.
        else if (fault)
          sendEdgeError(res, 503, 503, `edgeport is temporarily unavailable: ${lowerFirst(fault.message)}. Retry after ${fault.retryAfterS} s.`, '', {
            retryAfterS: fault.retryAfterS,
          });
        else sendEdgeError(res, 500, 500, 'edgeport failed to serve the request; see the server log.', '');
      });
    },
    async close() {
      proxy.close();
      await pending.close();
    },
  };
}

/**
 * A host at or under the dev domain: the script `<script>.<account subdomain>.<dev domain>` names,
 * else 404. Such requests belong to no zone, so no log job gets them (`wrangler tail` shows them
 * to the script's owner).
 */
function serveDevHost(req: IncomingMessage, res: ServerResponse, deployed: DeployedRoutes, host: string, rayId: string): void {
  const script = deployed.devMatch(host);
  if (!script) {
    return sendEdgeError(
      res,
      404,
      404,
      `nothing is served at "${host}": under ${deployed.devDomain}, only <script>.<account subdomain>.${deployed.devDomain} serves, for each deployed script whose dev subdomain is on.`,
      rayId,
    );
  }
  res.setHeader('edgeport-ray', rayId);
  setConnectingIp(req, (req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''));
  script.handle(req, res);
}

/**
 * A host at or under the public buckets' domain: the bucket whose managed URL it is, else 404. Such
 * requests belong to no zone, so no log job gets them.
 */
async function serveManagedBucket(req: IncomingMessage, res: ServerResponse, buckets: PublicBuckets, host: string, rayId: string): Promise<void> {
  const bucket = await buckets.managed(host);
  if (!bucket) {
    return sendEdgeError(
      res,
      404,
      404,
      `nothing is served at "${host}": under ${buckets.publicDomain}, only the managed public URL of a bucket that has it on serves.`,
      rayId,
    );
  }
  res.setHeader('edgeport-ray', rayId);
  await bucket.serve(req, res);
}

/**
 * As the platform does for a script's request: `CF-Connecting-IP` is the client's address, whatever
 * the client sent under that name (its own is dropped). Set after the request's record took its
 * copy of the headers, so log lines keep what the client sent.
 */
function setConnectingIp(req: IncomingMessage, clientIp: string): void {
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i]!.toLowerCase() === 'cf-connecting-ip') raw.splice(i, 2);
  raw.push('CF-Connecting-IP', clientIp);
  req.headers['cf-connecting-ip'] = clientIp;
}

/**
 * For a request no zone serves: which other listener it was meant for, said as what to do, or
 * null. A path below `/client/v4` is the management API's; a small JSON POST that is JSON-RPC is the
 * gateway's (its body is read for this, at most SNIFF_MAX_BYTES).
 */
async function wrongPort(req: IncomingMessage, path: string, listeners: EdgeServiceOptions['listeners']): Promise<string | null> {
  const where = (url: string | undefined, fallback: string): { port: string; origin: string } =>
    url === undefined ? { port: fallback, origin: `http://<host>:${fallback}` } : { port: new URL(url).port, origin: listenerOrigin(url, req.headers.host) };
  if (path === '/client/v4' || path.startsWith('/client/v4/')) {
    const api = where(listeners?.api(), '8081');
    return `This port is edgeport's edge, which serves zones' traffic: the management API listens on port ${api.port}. Send the request to ${api.origin}${req.url ?? path}.`;
  }
  if (mayBeJsonRpc(req.method, req.headers) && (await readJsonRpcBody(req))) {
    const gateway = where(listeners?.gateway(), '8545');
    return `This port is edgeport's edge, which serves zones' traffic: JSON-RPC goes to the gateway, which listens on port ${gateway.port}. POST it to ${gateway.origin}/v1/<network>, such as ${gateway.origin}/v1/sepolia.`;
  }
  return null;
}

interface RecordInput {
  req: IncomingMessage;
  res: ServerResponse;
  tap: ResponseTap;
  zone: ZoneRecord | null;
  fields: CustomFieldNames | null;
  rayId: string;
  start: number;
  end: number;
  host: string;
  path: string;
  clientIp: string;
  requestRawHeaders: string[];
  requestBytes: number;
  origin: ProxyOutcome;
}

function buildRecord(input: RecordInput): HttpRequestRecord {
  const { req, res, tap, fields } = input;
  const responseRaw = input.origin.originRawHeaders.length > 0 ? input.origin.originRawHeaders : tap.rawHeaders();
  const custom = fields ? extractCustomFields(fields, input.requestRawHeaders, responseRaw) : { RequestHeaders: {}, ResponseHeaders: {}, Cookies: {} };
  const contentType = res.getHeader('content-type') ?? headerIn(responseRaw, 'content-type') ?? '';
  return {
    RayID: input.rayId,
    ZoneName: input.zone?.name ?? '',
    EdgeStartTimestamp: input.start,
    EdgeEndTimestamp: input.end,
    ClientIP: input.clientIp,
    ClientRequestHost: input.host,
    ClientRequestMethod: req.method ?? '',
    ClientRequestURI: req.url ?? '',
    ClientRequestPath: input.path,
    ClientRequestProtocol: `HTTP/${req.httpVersion}`,
    ClientRequestScheme: 'http',
    ClientRequestUserAgent: req.headers['user-agent'] ?? '',
    ClientRequestReferer: req.headers.referer ?? '',
    ClientRequestBytes: input.requestBytes,
    EdgeResponseStatus: res.statusCode,
    EdgeResponseBytes: tap.bodyBytes,
    EdgeResponseContentType: String(contentType).split(';')[0]!.trim(),
    OriginResponseStatus: input.origin.originStatus,
    OriginResponseTime: Math.round(input.origin.originTimeMs),
    WorkerSubrequest: false,
    ...custom,
  };
}

function headerIn(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) return raw[i + 1];
  return undefined;
}

/** Where the previous request on a keep-alive connection ended, in bytes read from its socket. */
const socketMarks = new WeakMap<object, number>();

/** Bytes of this request as received (request line, headers and body): the socket's reads since the previous one. */
function requestBytes(req: IncomingMessage): number {
  const read = req.socket.bytesRead;
  const bytes = read - (socketMarks.get(req.socket) ?? 0);
  socketMarks.set(req.socket, read);
  return bytes;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** `close`: the request's body is not read, so the connection cannot carry another request. */
function sendEdgeError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  rayId: string,
  options: { close?: boolean; retryAfterS?: number } = {},
): void {
  const body = `error ${code}: ${message}\n${rayId ? `Ray ID: ${rayId}\n` : ''}`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...(rayId ? { 'edgeport-ray': rayId } : {}),
    ...(options.close ? { connection: 'close' } : {}),
    ...(options.retryAfterS === undefined ? {} : { 'retry-after': String(options.retryAfterS) }),
  });
  res.end(body);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** The held log records at /metrics: how many wait for the database, and how many were dropped for room. */
function registerHeldRecordMetrics(metrics: Metrics, pending: PendingRecords): void {
  const held = new Gauge({
    name: 'edgeport_edge_held_log_records',
    help: 'Log records of edge requests answered while the database could not tell their zone, held (on disk) until it can.',
    registers: [metrics.registry],
  });
  const dropped = new Counter({
    name: 'edgeport_edge_held_log_records_dropped_total',
    help: 'Held log records dropped for room (the oldest, past 10,000 records or their byte bound).',
    registers: [metrics.registry],
  });
  let seen = 0;
  metrics.beforeScrape(() => {
    held.set(pending.size);
    dropped.inc(pending.droppedTotal - seen);
    seen = pending.droppedTotal;
  });
}
