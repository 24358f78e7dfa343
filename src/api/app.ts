/**
 * The management API as one Hono app under `/client/v4`. Pipeline of a request, in order: route
 * (a platform path edgeport does not have 403 / 10015 naming it, an unknown path 400 / 7000, naming
 * the gateway's port for a gateway path or a JSON-RPC body; a known
 * path with another method 405) -> authenticate -> read and
 * validate the body (JSON only, size-limited) -> handler -> envelope. Every answer but a ruleset
 * DELETE (204) is the envelope, errors included; a refused request writes nothing.
 *
 * Dashboard: sign-in sessions (cookie + CSRF token) authenticate like X-Auth-Email/X-Auth-Key;
 * bucket, object, upload and gateway-network routes are edgeport extensions the dashboard uses;
 * outside `/client/`, GET serves the dashboard's files, except the probes `/healthz` and `/readyz`
 * (health/health-routes.ts).
 *
 * API tokens (`Authorization: Bearer`, made under /user/tokens) authenticate like the global key;
 * what a token may do is checked before the handler runs (authorize.ts).
 *
 * Gaps: what the platform has and edgeport does not is answered by name (not-provided.ts: 403 /
 * 10015), never 7000, which stays for paths the platform does not have either. By design:
 * `/client/v4/openapi.json` needs no credentials. Client quirks: the official SDK names the
 * segment `/logpush/` (the real API's); every `logshipping` route answers there too
 * (LOGPUSH_ALIASES), while the OpenAPI document and the docs name `logshipping` only.
 */
import { Hono } from 'hono';
import { ACCESS_KEY_ROUTES } from './access-keys/access-key-routes.ts';
import { ACCOUNT_ROUTES } from './accounts/account-routes.ts';
import { MEMBER_ROUTES } from './accounts/member-routes.ts';
import { USAGE_ROUTES } from './accounts/usage-routes.ts';
import { USER_ROUTES } from './accounts/user-routes.ts';
import type { AccountRecord } from '../db/control-store.ts';
import { failureResponse } from './envelope.ts';
import { API_ERRORS, ApiError } from './errors.ts';
import { toErrorResponse } from './error-map.ts';
import { checkRoutePermission } from './authorize.ts';
import { GATEWAY_ROUTES } from './gateway/network-routes.ts';
import { GRAPHQL_ROUTES } from './graphql/graphql-routes.ts';
import { mountHealthRoutes } from './health/health-routes.ts';
import { mountMetricsRoute } from './health/metrics-route.ts';
import { Counter } from 'prom-client';
import { isJsonRpcText, listenerOrigin, mayBeJsonRpc } from '../core/http/wrong-port.ts';
import { statusClass, type Metrics } from '../core/metrics.ts';
import { JOB_ROUTES } from './logshipping/job-routes.ts';
import { VALIDATE_ROUTES } from './logshipping/validate-routes.ts';
import { EMPTY_LIST_ROUTES } from './not-provided/empty-list-routes.ts';
import { notProvidedFor, notProvidedMessage } from './not-provided/not-provided.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { readJsonBody } from './request-body.ts';
import type { ApiDeps, ApiRoute } from './route.ts';
import { R2_ABSENT_FEATURE_ROUTES } from './r2/r2-absent-features-routes.ts';
import { R2_BUCKET_ROUTES } from './r2/r2-bucket-routes.ts';
import { R2_DOMAIN_ROUTES } from './r2/r2-domain-routes.ts';
import { R2_CORS_ROUTES } from './r2/r2-cors-routes.ts';
import { R2_LIFECYCLE_ROUTES } from './r2/r2-lifecycle-routes.ts';
import { R2_OBJECT_ROUTES } from './r2/r2-object-routes.ts';
import { RULESET_ROUTES } from './rulesets/ruleset-routes.ts';
import { RULESET_RULE_ROUTES } from './rulesets/ruleset-rule-routes.ts';
import { authenticateRequest, type Authenticated } from './sessions/request-auth.ts';
import { SESSION_ROUTES } from './sessions/session-routes.ts';
import { BUCKET_ROUTES } from './store/bucket-routes.ts';
import { requireActiveToken } from './tokens/bearer-auth.ts';
import { TOKEN_ROUTES } from './tokens/token-routes.ts';
import { CORS_ROUTES } from './store/cors-routes.ts';
import { OBJECT_ROUTES } from './store/object-routes.ts';
import { UPLOAD_ROUTES } from './store/upload-routes.ts';
import { validateBody } from './validation.ts';
import { WORKER_ROUTE_ROUTES } from './workers/worker-route-routes.ts';
import { WORKER_SCRIPT_ROUTES } from './workers/worker-script-routes.ts';
import { WORKER_SECRET_ROUTES } from './workers/worker-secret-routes.ts';
import { WORKER_SERVICE_ROUTES } from './workers/worker-service-routes.ts';
import { WORKER_DOMAIN_ROUTES } from './workers/worker-domain-routes.ts';
import { WORKER_BETA_ROUTES } from './workers/worker-beta-routes.ts';
import { WORKER_SETTINGS_ROUTES } from './workers/worker-settings-routes.ts';
import { WORKER_TAIL_ROUTES } from './workers/worker-tail-routes.ts';
import { ZONE_ROUTES } from './zones/zone-routes.ts';

export const API_PREFIX = '/client/v4';

export const API_ROUTES: readonly ApiRoute[] = [
  ...SESSION_ROUTES,
  ...ACCOUNT_ROUTES,
  ...MEMBER_ROUTES,
  ...USAGE_ROUTES,
  ...ZONE_ROUTES,
  ...RULESET_ROUTES,
  ...RULESET_RULE_ROUTES,
  ...JOB_ROUTES,
  ...VALIDATE_ROUTES,
  ...ACCESS_KEY_ROUTES,
  ...BUCKET_ROUTES,
  ...CORS_ROUTES,
  ...OBJECT_ROUTES,
  ...UPLOAD_ROUTES,
  ...GATEWAY_ROUTES,
  ...TOKEN_ROUTES,
  ...USER_ROUTES,
  ...R2_BUCKET_ROUTES,
  ...R2_CORS_ROUTES,
  ...R2_LIFECYCLE_ROUTES,
  ...R2_OBJECT_ROUTES,
  ...R2_ABSENT_FEATURE_ROUTES,
  ...R2_DOMAIN_ROUTES,
  ...GRAPHQL_ROUTES,
  ...WORKER_SCRIPT_ROUTES,
  ...WORKER_SECRET_ROUTES,
  ...WORKER_SERVICE_ROUTES,
  ...WORKER_DOMAIN_ROUTES,
  ...WORKER_BETA_ROUTES,
  ...WORKER_SETTINGS_ROUTES,
  ...WORKER_ROUTE_ROUTES,
  ...WORKER_TAIL_ROUTES,
  ...EMPTY_LIST_ROUTES,
];

/** Each `/logshipping/` route again under `/logpush/`, the real API's name that its SDKs use: the same handler. */
export const LOGPUSH_ALIASES: readonly ApiRoute[] = API_ROUTES.filter((route) => route.path.includes('/logshipping/')).map((route) => ({
  ...route,
  path: route.path.replace('/logshipping/', '/logpush/'),
}));

/** The gateway's path: a request for it came to the wrong port. */
const GATEWAY_PATH = /^\/v1\/[^/]+\/?$/;

/** Counts the API's answers by operation (the route's operationId: a fixed set) and status class. */
function operationCounter(metrics: Metrics): (operation: string, status: number) => void {
  const counter = new Counter({
    name: 'edgeport_api_requests_total',
    help: 'Management API answers by operation (the OpenAPI operationId) and status class.',
    labelNames: ['operation', 'status_class'],
    registers: [metrics.registry],
  });
  return (operation, status) => counter.labels(operation, statusClass(status)).inc();
}

/**
 * The app. `dashboard`, when given, answers GET requests outside `/client/` (the web dashboard's
 * pages and files); without it they get the API's 400 / 7000 like any unknown path.
 */
export function createApiApp(deps: ApiDeps, dashboard?: (request: Request) => Promise<Response>): Hono {
  const app = new Hono();
  mountHealthRoutes(app, deps.readiness ?? {});
  if (deps.metrics) mountMetricsRoute(app, deps.metrics);
  // Made on the first request for it, not at every start (it is most of the API's start-up CPU).
  let openapi: string | undefined;
  app.get(`${API_PREFIX}/openapi.json`, () => {
    openapi ??= JSON.stringify(buildOpenApiDocument(API_ROUTES, API_PREFIX));
    return new Response(openapi, { headers: { 'content-type': 'application/json' } });
  });
  const served = [...API_ROUTES, ...LOGPUSH_ALIASES];
  const count = deps.metrics ? operationCounter(deps.metrics) : undefined;
  for (const route of served) {
    app.on(route.method, API_PREFIX + route.path, async (c) => {
      const response = await runRoute(route, c.req.raw, c.req.param() as Record<string, string>, deps, socketAddress(c.env));
      count?.(route.operationId, response.status);
      return response;
    });
  }
  const patterns = served.map((route) => ({
    method: route.method,
    regex: new RegExp(`^${API_PREFIX}${route.path.replace(/:\w+\{\.\+\}/g, '.+').replace(/:\w+/g, '[^/]+')}$`),
  }));
  app.notFound(async (c) => {
    const path = new URL(c.req.url).pathname;
    const below = path.startsWith(`${API_PREFIX}/`) ? path.slice(API_PREFIX.length) : null;
    const missing = below === null ? undefined : notProvidedFor(c.req.method, below);
    if (missing) return failureResponse(API_ERRORS.API_NOT_PROVIDED.status, [{ code: API_ERRORS.API_NOT_PROVIDED.code, message: notProvidedMessage(missing) }]);
    const allowed = [...new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.method))];
    if (allowed.length === 0 && (GATEWAY_PATH.test(path) || (mayBeJsonRpc(c.req.method, c.req.raw.headers) && isJsonRpcText(await c.req.raw.text())))) {
      const url = deps.gateway?.url();
      const gateway = url === undefined ? 'http://<host>:8545' : listenerOrigin(url, c.req.header('host'));
      const port = url === undefined ? '8545' : new URL(url).port;
      return failureResponse(400, [
        {
          code: API_ERRORS.API_NO_ROUTE.code,
          message: `${API_ERRORS.API_NO_ROUTE.message}: this port is edgeport's management API; JSON-RPC goes to the gateway, which listens on port ${port}: POST it to ${gateway}/v1/<network>, such as ${gateway}/v1/sepolia`,
        },
      ]);
    }
    if (allowed.length === 0) return failureResponse(400, [{ code: API_ERRORS.API_NO_ROUTE.code, message: API_ERRORS.API_NO_ROUTE.message }]);
    const response = failureResponse(405, [
      { code: API_ERRORS.API_METHOD_NOT_ALLOWED.code, message: `Method ${c.req.method} not allowed for this URI: use ${allowed.join(', ')}` },
    ]);
    response.headers.set('allow', allowed.join(', '));
    return response;
  });
  if (dashboard) {
    app.get('/*', (c) => {
      const path = new URL(c.req.url).pathname;
      // Everything under /client/ (other API versions included) keeps the API's answers; a gateway path is told where the gateway is.
      return path === '/client' || path.startsWith('/client/') || GATEWAY_PATH.test(path) ? c.notFound() : dashboard(c.req.raw);
    });
  }
  app.onError((error, c) => (clientGone(c.req.raw, error) ? disconnected(error, deps) : toErrorResponse(error, deps.logger)));
  return app;
}

/**
 * The client closed its connection before its answer (mid-body, or while the route ran): whatever
 * failed after that is the client's leaving, not a fault of the server, so it is no error-level
 * line (a busy API saw dozens per 4,000 requests). Node aborts the request's signal on close; a
 * body read can fail with the socket's reset a moment before that.
 */
function clientGone(request: Request, error: unknown): boolean {
  if (request.signal.aborted) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (error instanceof Error && error.message === 'aborted');
}

function disconnected(error: unknown, deps: ApiDeps): Response {
  deps.logger.debug({ err: error }, 'Management API client disconnected before its answer.');
  // Nobody reads it; the connection is gone.
  return new Response(null, { status: 499 });
}

/** The client's socket address: @hono/node-server passes the IncomingMessage; in-process calls have none. */
function socketAddress(env: unknown): string | undefined {
  return (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
}

async function runRoute(
  route: ApiRoute,
  request: Request,
  params: Record<string, string>,
  deps: ApiDeps,
  clientAddress: string | undefined,
): Promise<Response> {
  try {
    const url = new URL(request.url);
    const auth: Authenticated | undefined = route.auth === undefined ? await authenticate(route, request, deps, clientAddress) : undefined;
    if (auth?.token) {
      if (route.permission !== 'any-status') requireActiveToken(auth.token, deps.clock.now());
      checkRoutePermission(
        { token: auth.token, account: auth.account, params, request },
        route.permission === 'any-status' ? 'none' : route.permission,
        route.path,
      );
    }
    let body: unknown;
    if (route.body) {
      const raw =
        route.body.optional && !hasBody(request) ? {} : await readJsonBody(request, deps.maxBodyBytes, { anyMediaType: route.body.anyMediaType === true });
      body = validateBody(route.body.schema, raw, route.body.invalid);
    }
    return await route.handler({
      request,
      // Routes without authentication (sign-in) never read the account.
      account: auth?.account as AccountRecord,
      ...(auth?.session ? { session: auth.session } : {}),
      ...(auth?.token ? { token: auth.token } : {}),
      params,
      query: url.searchParams,
      body,
      path: url.pathname.slice(API_PREFIX.length),
      deps,
      clientAddress,
    });
  } catch (error) {
    return clientGone(request, error) ? disconnected(error, deps) : toErrorResponse(error, deps.logger);
  }
}

/** The request's credentials; `/user/tokens/verify` answers a token nobody has with the platform's 1000 "Invalid API Token". */
async function authenticate(route: ApiRoute, request: Request, deps: ApiDeps, clientAddress: string | undefined): Promise<Authenticated> {
  try {
    return await authenticateRequest(request, deps, clientAddress);
  } catch (error) {
    if (route.permission === 'any-status' && error instanceof ApiError && error.code === 'API_TOKEN_UNKNOWN') throw new ApiError('API_TOKEN_INVALID');
    throw error;
  }
}

function hasBody(request: Request): boolean {
  const length = request.headers.get('content-length');
  return request.headers.has('content-type') || request.headers.has('transfer-encoding') || (length !== null && length !== '0');
}
