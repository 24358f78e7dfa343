/**
 * The management API as a service for `edgeport start`: a Node request listener (Hono behind
 * @hono/node-server, which leaves the global Request/Response alone) for the `/client/v4` port,
 * which also serves the web dashboard's files outside `/client/`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { AuthConfig } from '../config/schema.ts';
import { AUTH_DEFAULTS } from '../config/defaults.ts';
import type { Clock } from '../core/clock.ts';
import { ScryptThread } from '../core/crypto/scrypt-thread.ts';
import type { Logger } from '../core/log.ts';
import type { ServiceHandle } from '../core/service.ts';
import type { ControlStore } from '../db/control-store.ts';
import { OriginPolicy } from '../edge/index.ts';
import { parseHostHeader } from '../edge/host-header.ts';
import { API_ERRORS } from './errors.ts';
import type { FileRoots } from '../logs/index.ts';
import type { StoreEngine } from '../store/engine/store-engine.ts';
import type { AccessKeys } from '../store/s3/access-keys.ts';
import type { S3ListenerStatus } from './access-keys/access-key-routes.ts';
import { createApiApp } from './app.ts';
import { Authenticator } from './auth.ts';
import { createDashboardFiles, DEFAULT_DASHBOARD_DIR } from './dashboard/dashboard-files.ts';
import { publicUrl, type GatewayStatus } from './gateway/network-routes.ts';
import { createDestinationIo } from './logshipping/destination-io.ts';
import { DEFAULT_MAX_BODY_BYTES } from './request-body.ts';
import type { ReadinessChecks } from './health/health-routes.ts';
import type { Metrics } from '../core/metrics.ts';
import { SessionStore } from './sessions/session-store.ts';
import { guardedListener } from '../core/http/guarded-listener.ts';
import type { ApiDeps } from './route.ts';
import type { WorkersDeps } from './workers/workers-common.ts';

export interface ApiServiceOptions {
  control: ControlStore;
  /** S3 access keys of the object store (made and revoked under /accounts/:id/store/access-keys). */
  accessKeys: AccessKeys;
  clock: Clock;
  logger: Logger;
  /**
   * The object store: the dashboard's bucket and object routes, store:// ownership challenge files,
   * and the delivered lines of store:// log jobs.
   */
  store?: StoreEngine;
  /** The JSON-RPC gateway's networks and URL, for the dashboard's gateway page. */
  gateway?: GatewayStatus;
  /** The S3-compatible API's listener, whose URL the dashboard's access keys page shows. */
  s3?: S3ListenerStatus;
  /** Where file:// log destinations may point (`[logs] file_roots`); without it they are refused. */
  fileRoots?: FileRoots;
  /** The built web dashboard served outside /client/ (default web/dist); `false` serves none. */
  dashboardDir?: string | false;
  /** Lifetime of a dashboard session from sign-in (default 12 hours). */
  sessionTtlMs?: number;
  /** Largest accepted request body (default 1 MiB); larger ones get 413 before they are read whole. */
  maxBodyBytes?: number;
  /** How long the test upload to an http(s):// log destination may take (default 10 s). */
  probeTimeoutMs?: number;
  /**
   * Where zones' origins may lead, shared with the edge. Default: only the operator's zones (the
   * first account's) may use non-public origins.
   */
  originPolicy?: OriginPolicy;
  /** `[auth]`: failed-credential limits, the key-hash queue, sessions per account (default DEFAULTS.auth). */
  auth?: AuthConfig;
  /**
   * Where API-key hashes run. Given: its owner closes it. Absent: the service starts its own (with
   * `auth.maxQueuedHashes`) and closes it in close().
   */
  scrypt?: ScryptThread;
  /** The probes of `GET /readyz` (the database, the blob store). */
  readiness?: ReadinessChecks;
  /** The process's metrics, served at `GET /metrics` (core/metrics.ts). */
  metrics?: Metrics;
  /** Scripts accounts deploy (the Workers routes); without it those routes refuse. */
  workers?: WorkersDeps;
  /** Where buckets are public (the R2 domains routes); without it those routes refuse. */
  publicBuckets?: ApiDeps['publicBuckets'];
}

export interface ApiService extends ServiceHandle {
  /** The same app as a fetch function (Web Request in, Response out), for in-process callers. */
  readonly fetch: (request: Request) => Promise<Response>;
}

export async function createApiService(options: ApiServiceOptions): Promise<ApiService> {
  const { gateway } = options;
  const auth = options.auth ?? AUTH_DEFAULTS;
  const ownScrypt = options.scrypt === undefined ? new ScryptThread({ maxQueued: auth.maxQueuedHashes }) : undefined;
  const scrypt = options.scrypt ?? ownScrypt!;
  const dashboard =
    options.dashboardDir === false
      ? undefined
      : createDashboardFiles({
          dir: options.dashboardDir ?? DEFAULT_DASHBOARD_DIR,
          connectOrigins: (request) => {
            const url = gateway ? publicUrl(gateway.url(), request) : undefined;
            return url === undefined ? [] : [url];
          },
        });
  const app = createApiApp(
    {
      control: options.control,
      accessKeys: options.accessKeys,
      clock: options.clock,
      logger: options.logger,
      auth: new Authenticator(options.control, options.clock, {
        scrypt,
        limits: { windowMs: auth.failureWindowMs, maxPerAddress: auth.maxFailuresPerAddress, maxPerIdentity: auth.maxFailuresPerIdentity },
      }),
      sessions: new SessionStore(options.control, options.clock, options.sessionTtlMs, auth.maxSessionsPerAccount),
      destinations: createDestinationIo({
        ...(options.store ? { store: options.store } : {}),
        ...(options.fileRoots ? { fileRoots: options.fileRoots } : {}),
        ...(options.probeTimeoutMs === undefined ? {} : { probeTimeoutMs: options.probeTimeoutMs }),
      }),
      ...(options.store ? { store: options.store } : {}),
      ...(gateway ? { gateway } : {}),
      ...(options.s3 ? { s3: options.s3 } : {}),
      ...(options.workers ? { workers: options.workers } : {}),
      ...(options.publicBuckets ? { publicBuckets: options.publicBuckets } : {}),
      origins:
        options.originPolicy ??
        new OriginPolicy({
          allowPrivateOrigins: false,
          operatorAccountId: async () => (await options.control.firstAccount())?.id ?? null,
        }),
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      ...(options.readiness ? { readiness: options.readiness } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      maxTokensPerAccount: auth.maxTokensPerAccount,
    },
    dashboard,
  );
  const fetch = async (request: Request) => app.fetch(request);
  // The node request (its socket's address) reaches the routes as the app's env.
  const listener = getRequestListener((request, env) => app.fetch(request, env), { overrideGlobalObjects: false });
  return {
    // hono answers the app's own errors; should answering itself fail, the request is logged and cut, never an unhandled rejection.
    handler: guardedListener(withValidHost(listener), 'management API', options.logger),
    fetch,
    // The control store is opened and closed by its owner; the scrypt thread too, when given.
    close: async () => {
      await ownScrypt?.close();
    },
  };
}

/**
 * node:http takes any Host header, and the request's URL is made from it: one that names no host
 * (`127.t.0.1`, `a b`, two of them) is the client's mistake, answered 400 / 6003 in the envelope
 * before anything parses it. A request without one (HTTP/1.0) goes on.
 */
function withValidHost(listener: (req: IncomingMessage, res: ServerResponse) => unknown): (req: IncomingMessage, res: ServerResponse) => unknown {
  return (req, res) => {
    if (req.headers.host === undefined) return listener(req, res);
    const host = parseHostHeader(req.rawHeaders);
    if (!('problem' in host)) return listener(req, res);
    const { status, code, message } = API_ERRORS.API_INVALID_REQUEST_HEADERS;
    const body = JSON.stringify({ result: null, success: false, errors: [{ code, message: `${message}: ${host.problem}` }], messages: [] });
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body);
    return undefined;
  };
}
