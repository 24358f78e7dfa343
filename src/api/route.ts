/**
 * The route table's types: every route of the API is one `ApiRoute` value (method, path, schemas,
 * handler), so the router, the request pipeline and the OpenAPI document all read the same data.
 */
import type { z } from 'zod';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';
import type { ApiTokenRecord } from '../db/api-tokens/api-token-store.ts';
import type { BucketDomains } from '../db/public-buckets/bucket-domains.ts';
import type { AccountRecord, ControlStore } from '../db/control-store.ts';
import type { OriginPolicy } from '../edge/index.ts';
import type { StoreEngine } from '../store/engine/store-engine.ts';
import type { AccessKeys } from '../store/s3/access-keys.ts';
import type { S3ListenerStatus } from './access-keys/access-key-routes.ts';
import type { Authenticator } from './auth.ts';
import type { RoutePermission } from './authorize.ts';
import type { ApiErrorCode } from './errors.ts';
import type { GatewayStatus } from './gateway/network-routes.ts';
import type { DestinationIo } from './logshipping/destination-io.ts';
import type { ReadinessChecks } from './health/health-routes.ts';
import type { Metrics } from '../core/metrics.ts';
import type { Session, SessionStore } from './sessions/session-store.ts';
import type { WorkersDeps } from './workers/workers-common.ts';

/** What handlers use: the stores, the clock, and the destination I/O of ownership challenges. */
export interface ApiDeps {
  control: ControlStore;
  accessKeys: AccessKeys;
  clock: Clock;
  logger: Logger;
  auth: Authenticator;
  /** Dashboard sign-ins (cookie sessions with a CSRF token). */
  sessions: SessionStore;
  destinations: DestinationIo;
  /** The object store, for the bucket and object routes; they answer 404 / 10006 without it. */
  store?: StoreEngine;
  /** The JSON-RPC gateway's networks, for the networks route; an empty list without it. */
  gateway?: GatewayStatus;
  /** The S3-compatible API's listener, for the S3 endpoint route; its endpoint is null without it. */
  s3?: S3ListenerStatus;
  /** Where zones' origins may lead (the edge's policy): IP-literal origins are judged when they are set. */
  origins: OriginPolicy;
  maxBodyBytes: number;
  /** The probes of `GET /readyz` (health/health-routes.ts); none: ready as soon as it answers. */
  readiness?: ReadinessChecks;
  /** The process's metrics: served at `GET /metrics`, with the API's requests counted by operation. */
  metrics?: Metrics;
  /** Scripts deployed through the API; their routes refuse without it. */
  workers?: WorkersDeps;
  /** Where buckets are public (managed URLs, custom domains); the domains routes refuse without it. */
  publicBuckets?: { domains: BucketDomains; publicDomain: string | null };
  /** API tokens an account may hold (default DEFAULT_MAX_TOKENS_PER_ACCOUNT). */
  maxTokensPerAccount?: number;
}

export interface RouteContext<Body> {
  request: Request;
  /** The authenticated account. */
  account: AccountRecord;
  /** The dashboard session the request was authenticated by (absent for X-Auth-Email/X-Auth-Key). */
  session?: Session;
  /** The API token the request was authenticated by (absent for the global key and sessions); see authorize.ts. */
  token?: ApiTokenRecord;
  /** Decoded path parameters. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** The validated body (undefined for routes without one). */
  body: Body;
  /** The request path below `/client/v4`, as the real API quotes it in 7003 errors. */
  path: string;
  deps: ApiDeps;
  /** The client's socket address (undefined for in-process calls): what failed sign-ins are counted under. */
  clientAddress: string | undefined;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiRoute<Body = unknown> {
  method: HttpMethod;
  /** Below `/client/v4`, with `:name` parameters. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /**
   * The request body: validated by `schema`; problems not tagged otherwise get `invalid`'s code.
   * `optional`: a request without a body (no Content-Type, no bytes) counts as `{}`.
   * `anyMediaType`: the body is JSON whatever its Content-Type says (wrangler sends R2 bodies as `text/plain`).
   */
  body?: { schema: z.ZodType<Body>; invalid: ApiErrorCode; optional?: true; anyMediaType?: true };
  /**
   * `none`: the route needs no credentials (sign-in); `session`: the handler checks the session
   * cookie itself (the current session). Either way the pipeline authenticates nothing and
   * handlers get no account.
   */
  auth?: 'none' | 'session';
  /**
   * What an API token needs to call the route (authorize.ts): default, the row of its path in
   * authorize.ts's table; `none`: any token; `any-status`: any token, even a disabled, expired or
   * not yet valid one (`/user/tokens/verify`, which reports that status).
   */
  permission?: RoutePermission | 'none' | 'any-status';
  /**
   * A body that is not JSON (object bytes): the pipeline leaves it unread for the handler, which
   * streams it; `contentType` and `description` are for the OpenAPI document.
   */
  rawBody?: { contentType: string; description: string };
  /** A success answer that is not the envelope (an object's bytes), for the OpenAPI document. */
  rawResult?: { contentType: string; description: string };
  /** Query parameters, for the OpenAPI document (handlers validate them with validateQuery). */
  query?: z.ZodObject;
  /** The envelope's `result`, for the OpenAPI document. */
  result?: z.ZodType;
  /** `result_info` shape of list routes. */
  resultInfo?: 'page' | 'cursor';
  /** 204 without a body. */
  noContent?: true;
  handler: (ctx: RouteContext<Body>) => Promise<Response>;
}

/** Declares a route with a typed body; the table holds them type-erased. */
export function defineRoute<Body = undefined>(route: ApiRoute<Body>): ApiRoute {
  return route as unknown as ApiRoute;
}
