/**
 * The gateway's HTTP face: `POST /v1/<network>` with a JSON-RPC 2.0 body (SPEC §4.2), `GET
 * /metrics`, and CORS preflights, on raw node:http (the hot path is a small POST; hono's Request
 * and Response objects would cost about 20% of it, DESIGN.md's own measurement). Steps, in order:
 * route -> HTTP method -> content type -> network -> body (size limit) -> parse (batch size and
 * nesting depth refused before anything is built) -> rate limit (a token per member) -> retirement
 * -> run each member -> one response.
 *
 * Status policy (erpc's `determineResponseStatusCode`): 200 for every JSON-RPC outcome, errors
 * included (ethers cannot read an error behind a non-2xx status); 204 when only notifications
 * came; 404/405/413/415/429 for transport failures, still with a JSON-RPC error body.
 *
 * Gaps: no WebSocket (eth_subscribe is refused). By design: a batch is answered in member order;
 * `x-edgeport-cache` (HIT, MISS or BYPASS) is sent for single calls only. Client quirks: ethers
 * reads `Retry-After` as milliseconds; it is sent in seconds as RFC 9110 says.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/log.ts';
import type { RequestListener } from '../../core/service.ts';
import type { CallExecutor } from '../call-executor.ts';
import type { AnswerCache } from '../cache/answer-cache.ts';
import { CACHE_RULES } from '../cache/cache-policy.ts';
import { gatewayError, JsonRpcError } from '../errors.ts';
import { parseRequestBody, type RpcMember } from '../json-rpc/request.ts';
import { answerResponse, errorResponse, toErrorObject, type RpcAnswer } from '../json-rpc/response.ts';
import type { GatewayMetrics } from '../metrics.ts';
import { unknownNetworkError, type GatewayNetwork } from '../network.ts';
import type { RateLimiter } from '../rate-limiter.ts';
import { ClientGone, readBody } from './request-body.ts';

export interface GatewayHandlerDeps {
  networks: ReadonlyMap<string, GatewayNetwork>;
  executor: CallExecutor;
  rateLimiter: RateLimiter;
  metrics: GatewayMetrics;
  clock: Clock;
  logger: Logger;
  maxBodyBytes: number;
  maxBatchItems: number;
  /** Called before /metrics is rendered, to update gauges. */
  beforeMetrics: () => void;
  /**
   * Whole responses to single calls whose answer came from the cache (so it cannot change), by
   * network and exact body text: the same body again is answered without parsing it.
   */
  replays: AnswerCache<Replay>;
}

/** A response that can be sent again for the same body: the call's method (for metrics) and the text. */
export interface Replay {
  method: string;
  response: string;
}

/** Content types a JSON-RPC body may come with (geth's list, plus none and text/plain for browsers' simple requests). */
const ACCEPTED_MEDIA_TYPES = new Set(['', 'application/json', 'application/json-rpc', 'application/jsonrequest', 'text/plain']);
const PATH_PREFIX = '/v1/';
const JSON_HEADERS = { 'content-type': 'application/json', 'access-control-allow-origin': '*' } as const;
const HIT_HEADERS = { 'x-edgeport-cache': 'HIT' } as const;
/** Reads of final data are small calls; larger bodies (batches, raw transactions) are not worth hashing for a replay. */
const REPLAY_MAX_BODY = 2048;

export function createGatewayHandler(deps: GatewayHandlerDeps): RequestListener {
  return function gatewayHandler(req, res) {
    handle(deps, req, res).catch((error: unknown) => {
      deps.metrics.unmappedError();
      deps.logger.error({ err: error, url: req.url }, 'Unmapped error in the gateway handler.');
      if (!res.headersSent) send(deps, res, 500, errorResponse('null', toErrorObject(gatewayError('GATEWAY_INTERNAL'))));
      else res.destroy();
    });
  };
}

async function handle(deps: GatewayHandlerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (path === '/metrics') return serveMetrics(deps, req, res);
  const name = networkName(path);
  if (name === undefined) return sendError(deps, res, gatewayError('GATEWAY_NOT_FOUND', `Not found: ${JSON.stringify(path)} is not a gateway endpoint. Send JSON-RPC requests to POST /v1/<network>, e.g. /v1/sepolia.`));
  if (req.method === 'OPTIONS') return preflight(deps, req, res);
  if (req.method !== 'POST') {
    return sendError(deps, res, gatewayError('GATEWAY_HTTP_METHOD_NOT_ALLOWED', `HTTP method ${req.method} is not allowed on ${path}: send JSON-RPC requests with POST.`), { allow: 'POST, OPTIONS' });
  }
  const mediaType = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (!ACCEPTED_MEDIA_TYPES.has(mediaType)) {
    return sendError(deps, res, gatewayError('GATEWAY_UNSUPPORTED_MEDIA_TYPE', `Unsupported content type ${JSON.stringify(mediaType)}: send the JSON-RPC body with Content-Type: application/json.`));
  }
  const network = deps.networks.get(name);
  const now = deps.clock.now();
  if (network === undefined) return sendError(deps, res, unknownNetworkError(name, deps.networks.values(), now));
  let body: string;
  try {
    body = await readBody(req, deps.maxBodyBytes);
  } catch (error) {
    if (error instanceof ClientGone) return void res.destroy();
    if (!(error instanceof JsonRpcError)) throw error;
    // The rest of the body is not read: close the connection rather than drain it.
    return sendError(deps, res, error, { connection: 'close' });
  }
  const client = req.socket.remoteAddress ?? 'unknown';
  // The fast path of repeated reads of final data (a block by hash, say): no parse, no executor.
  const replayKey = network.retiredAtMs === undefined && body.length <= REPLAY_MAX_BODY ? `${name}\n${body}` : undefined;
  const replay = replayKey === undefined ? undefined : deps.replays.get(replayKey);
  let waitMs = replay === undefined ? undefined : deps.rateLimiter.take(client, 1);
  if (replay !== undefined && waitMs === 0) {
    network.countRequests(1);
    deps.metrics.call(name, replay.method, 'cache_hit');
    return send(deps, res, 200, replay.response, HIT_HEADERS);
  }
  const parsed = parseRequestBody(body, deps);
  if (parsed.kind === 'invalid') return sendError(deps, res, parsed.error);
  const members = parsed.kind === 'single' ? [parsed.member] : parsed.members;
  network.countRequests(members.length);
  waitMs ??= deps.rateLimiter.take(client, members.length);
  if (waitMs > 0) {
    deps.metrics.rateLimited();
    const limited = gatewayError('GATEWAY_RATE_LIMITED', `Rate limit exceeded: this client sent more requests than this gateway allows (every batch member counts). Retry in ${Math.ceil(waitMs / 1000)} s.`);
    return sendAnswers(deps, res, parsed.kind, members, members.map(() => limited), limited.status, { 'retry-after': String(Math.ceil(waitMs / 1000)) });
  }
  if (network.isRetired(now)) {
    const retired = network.retirementError();
    return sendAnswers(deps, res, parsed.kind, members, members.map(() => retired), 200, retirementHeaders(network));
  }
  const answers = await Promise.all(members.map((member) => runMember(deps, network, member)));
  if (replayKey !== undefined && parsed.kind === 'single') remember(deps, replayKey, parsed.member, answers[0]!);
  return sendAnswers(deps, res, parsed.kind, members, answers, 200, network.retiredAtMs === undefined ? undefined : retirementHeaders(network));
}

/** Keeps the response of a single call answered from the cache, for the same body next time. */
function remember(deps: GatewayHandlerDeps, key: string, member: RpcMember, answer: RpcAnswer | JsonRpcError): void {
  if (member.kind !== 'call' || member.id === undefined || answer instanceof JsonRpcError || answer.cached !== true) return;
  deps.replays.set(key, { method: member.method, response: answerResponse(member.id, answer) });
}

function runMember(deps: GatewayHandlerDeps, network: GatewayNetwork, member: RpcMember): Promise<RpcAnswer> | JsonRpcError {
  return member.kind === 'rejected' ? member.error : deps.executor.execute(network, member.method, member.params);
}

/** Writes one answer per member that has an id (notifications get none): one object, an array, or 204. */
function sendAnswers(deps: GatewayHandlerDeps, res: ServerResponse, shape: 'single' | 'batch', members: readonly RpcMember[],
  answers: ReadonlyArray<RpcAnswer | JsonRpcError>, status: number, headers?: Record<string, string>): void {
  const parts: string[] = [];
  for (let i = 0; i < members.length; i++) {
    const id = members[i]!.id;
    if (id === undefined) continue;
    const answer = answers[i]!;
    parts.push(answer instanceof JsonRpcError ? errorResponse(id, toErrorObject(answer)) : answerResponse(id, answer));
  }
  if (parts.length === 0) {
    deps.metrics.httpResponse(204);
    res.writeHead(204, { 'access-control-allow-origin': '*', ...headers });
    res.end();
    return;
  }
  if (shape === 'batch') return send(deps, res, status, `[${parts.join(',')}]`, headers);
  const member = members[0]!;
  const answer = answers[0]!;
  const cache = member.kind === 'call' && CACHE_RULES[member.method] !== undefined && !(answer instanceof JsonRpcError)
    ? (answer.cached ? 'HIT' : 'MISS') : 'BYPASS';
  return send(deps, res, status, parts[0]!, { 'x-edgeport-cache': cache, ...headers });
}

function sendError(deps: GatewayHandlerDeps, res: ServerResponse, error: JsonRpcError, headers?: Record<string, string>): void {
  if (error.kind === 'user') deps.logger.debug({ code: error.code }, error.message);
  send(deps, res, error.status, errorResponse('null', toErrorObject(error)), headers);
}

/** With Content-Length (not chunked): one write of head and body, nothing to frame. */
function send(deps: GatewayHandlerDeps, res: ServerResponse, status: number, body: string, headers?: Record<string, string>): void {
  deps.metrics.httpResponse(status);
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

/** `/v1/<name>` or `/v1/<name>/` gives `<name>`; anything else is not a gateway path. */
function networkName(path: string): string | undefined {
  if (!path.startsWith(PATH_PREFIX)) return undefined;
  const rest = path.endsWith('/') ? path.slice(PATH_PREFIX.length, -1) : path.slice(PATH_PREFIX.length);
  if (rest.length === 0 || rest.includes('/')) return undefined;
  try {
    return decodeURIComponent(rest);
  } catch {
    return undefined;
  }
}

/** RFC 8594 Sunset and a successor link (RFC 5829), on every answer of a network with a retirement date. */
function retirementHeaders(network: GatewayNetwork): Record<string, string> {
  const headers: Record<string, string> = { sunset: new Date(network.retiredAtMs!).toUTCString() };
  if (network.replacement !== undefined) headers.link = `</v1/${network.replacement}>; rel="successor-version"`;
  return headers;
}

function preflight(deps: GatewayHandlerDeps, req: IncomingMessage, res: ServerResponse): void {
  deps.metrics.httpResponse(204);
  res.writeHead(204, {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'POST, OPTIONS',
    'access-control-allow-headers': req.headers['access-control-request-headers'] ?? 'content-type',
    'access-control-max-age': '86400',
  });
  res.end();
}

async function serveMetrics(deps: GatewayHandlerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(deps, res, gatewayError('GATEWAY_HTTP_METHOD_NOT_ALLOWED', `HTTP method ${req.method} is not allowed on /metrics: use GET.`), { allow: 'GET' });
  }
  deps.beforeMetrics();
  const text = await deps.metrics.text();
  res.writeHead(200, { 'content-type': deps.metrics.contentType });
  res.end(req.method === 'HEAD' ? undefined : text);
}
