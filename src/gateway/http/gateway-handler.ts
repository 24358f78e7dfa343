/**
 * The gateway's HTTP face: `POST /v1/<network>` with a JSON-RPC 2.0 body (docs/gateway.md), `GET
 * /metrics`, and CORS preflights, on raw node:http (the hot path is a small POST; hono's Request
 * and Response objects would cost about 20% of it: a 1 KiB POST measured that much slower through hono than on bare node:http). Steps, in order:
 * route -> HTTP method -> content type -> network -> body (size limit; large bodies within the
 * budget of bytes held at once, else 503 before reading) -> replay of a cached
 * answer to the same body -> parse (batch size and nesting depth refused before anything is built)
 * -> rate limit (a token per member) -> retirement -> run each member -> one response.
 *
 * The hot path answers without a promise or a per-request closure: the network comes from a map
 * of exact endpoint paths, the body of a request that arrived with its head is taken whole once
 * node:http has parsed the read that brought it (readBody waits for the others), and a replay is
 * written as it was kept: flat headers and the response bytes.
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
import { clientKey } from '../../core/auth/client-address.ts';
import type { Logger } from '../../core/log.ts';
import type { RequestListener } from '../../core/service.ts';
import type { CallExecutor } from '../call-executor.ts';
import { isCachedMethod } from '../cache/cache-policy.ts';
import { gatewayError, JsonRpcError } from '../errors.ts';
import { parseRequestBody, type RpcMember } from '../json-rpc/request.ts';
import { answerResponse, errorResponse, RESPONSE_HEAD, resultTail, toErrorObject, type RpcAnswer } from '../json-rpc/response.ts';
import type { GatewayMetrics } from '../metrics.ts';
import { unknownNetworkError, type GatewayNetwork } from '../network.ts';
import type { RateLimiter } from '../rate-limiter.ts';
import type { BodyBudget } from './body-budget.ts';
import { REPLAY_MAX_BODY, replayKey, type Replay, type ReplayKey, type Replays } from './replays.ts';
import { ClientGone, readBody, receivedBody, tooLargeDeclared } from './request-body.ts';

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
  replays: Replays;
  /** Bytes of large bodies held at once. */
  bodies: BodyBudget;
}

interface Handler extends GatewayHandlerDeps {
  /** Each network by its exact endpoint paths, `/v1/<name>` and `/v1/<name>/`. */
  endpoints: ReadonlyMap<string, GatewayNetwork>;
}

/** Content types a JSON-RPC body may come with (geth's list, plus none and text/plain for browsers' simple requests). */
const ACCEPTED_MEDIA_TYPES = new Set(['', 'application/json', 'application/json-rpc', 'application/jsonrequest', 'text/plain']);
const PATH_PREFIX = '/v1/';
const JSON_HEADERS = ['content-type', 'application/json', 'access-control-allow-origin', '*'] as const;
const CLOSE = ['connection', 'close'];

export function createGatewayHandler(deps: GatewayHandlerDeps): RequestListener {
  const endpoints = new Map<string, GatewayNetwork>();
  for (const network of deps.networks.values()) {
    endpoints.set(`${PATH_PREFIX}${network.name}`, network);
    endpoints.set(`${PATH_PREFIX}${network.name}/`, network);
  }
  const handler: Handler = { ...deps, endpoints };
  return function gatewayHandler(req, res) {
    try {
      route(handler, req, res);
    } catch (error) {
      unmapped(handler, req, res, error);
    }
  };
}

function unmapped(deps: Handler, req: IncomingMessage, res: ServerResponse, error: unknown): void {
  deps.metrics.unmappedError();
  deps.logger.error({ err: error, url: req.url }, 'Unmapped error in the gateway handler.');
  if (!res.headersSent) send(deps, res, 500, errorResponse('null', toErrorObject(gatewayError('GATEWAY_INTERNAL'))));
  else res.destroy();
}

function route(deps: Handler, req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  let network = deps.endpoints.get(url);
  let path = url;
  let name: string | undefined;
  if (network === undefined) {
    const query = url.indexOf('?');
    path = query === -1 ? url : url.slice(0, query);
    if (path === '/metrics') return void serveMetrics(deps, req, res).catch((error: unknown) => unmapped(deps, req, res, error));
    name = networkName(path);
    if (name === undefined)
      return sendError(
        deps,
        res,
        gatewayError(
          'GATEWAY_NOT_FOUND',
          `Not found: ${JSON.stringify(path)} is not a gateway endpoint. Send JSON-RPC requests to POST /v1/<network>, e.g. /v1/sepolia.`,
        ),
      );
  }
  if (req.method !== 'POST') {
    if (req.method === 'OPTIONS') return preflight(deps, req, res);
    return sendError(
      deps,
      res,
      gatewayError('GATEWAY_HTTP_METHOD_NOT_ALLOWED', `HTTP method ${req.method} is not allowed on ${path}: send JSON-RPC requests with POST.`),
      ['allow', 'POST, OPTIONS'],
    );
  }
  const contentType = req.headers['content-type'];
  if (contentType !== undefined && contentType !== 'application/json') {
    const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
    if (!ACCEPTED_MEDIA_TYPES.has(mediaType)) {
      return sendError(
        deps,
        res,
        gatewayError(
          'GATEWAY_UNSUPPORTED_MEDIA_TYPE',
          `Unsupported content type ${JSON.stringify(mediaType)}: send the JSON-RPC body with Content-Type: application/json.`,
        ),
      );
    }
  }
  network ??= deps.networks.get(name!);
  if (network === undefined) return sendError(deps, res, unknownNetworkError(name!, deps.networks.values(), deps.clock.now()));
  const declaredTooLarge = tooLargeDeclared(req, deps.maxBodyBytes);
  // The rest of the body is not read: close the connection rather than drain it.
  if (declaredTooLarge !== undefined) return sendError(deps, res, declaredTooLarge, CLOSE);
  // A body without a declared length (chunked) may grow to the limit: it is counted as that.
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  const reserved = deps.bodies.reserve(Number.isFinite(declared) ? declared : deps.maxBodyBytes);
  if (reserved === undefined) {
    deps.metrics.overloaded();
    return sendError(
      deps,
      res,
      gatewayError(
        'GATEWAY_OVERLOADED',
        `The gateway is overloaded: it is already reading ${deps.bodies.inFlight} bytes of large request bodies. Retry in a second, or send smaller requests.`,
      ),
      ['retry-after', '1', ...CLOSE],
    );
  }
  if (reserved > 0) res.once('close', () => deps.bodies.release(reserved));
  // node:http calls this as soon as the head is parsed, and the body that came in the same read
  // is parsed after it returns (ticks too early); setImmediate runs once the whole read is.
  setImmediate(afterBody, deps, network, req, res);
}

/** Runs once the read that brought the request's head has been parsed, body included if it came along. */
function afterBody(deps: Handler, network: GatewayNetwork, req: IncomingMessage, res: ServerResponse): void {
  try {
    const body = receivedBody(req, deps.maxBodyBytes);
    if (body === undefined) {
      readBody(req, deps.maxBodyBytes)
        .then(
          (text) => answer(deps, network, req, res, text),
          (error: unknown) => {
            if (error instanceof ClientGone) return void res.destroy();
            if (!(error instanceof JsonRpcError)) throw error;
            sendError(deps, res, error, CLOSE);
          },
        )
        .catch((error: unknown) => unmapped(deps, req, res, error));
    } else if (typeof body === 'string') {
      answer(deps, network, req, res, body);
    } else {
      sendError(deps, res, body, CLOSE);
    }
  } catch (error) {
    unmapped(deps, req, res, error);
  }
}

/** Answers from a replay when one holds for this body (the fast path of repeated reads), else runs the calls. */
function answer(deps: Handler, network: GatewayNetwork, req: IncomingMessage, res: ServerResponse, body: string): void {
  let waitMs: number | undefined;
  let key: ReplayKey | undefined;
  if (replayable(network, body)) {
    key = replayKey(body);
    const replay = deps.replays.get(network, key.key);
    if (replay !== undefined) {
      waitMs = deps.rateLimiter.enabled ? deps.rateLimiter.take(clientOf(req), 1) : 0;
      if (waitMs === 0) {
        network.countRequests(1);
        replay.calls.pending += 1;
        return sendReplay(deps, res, replay, key.id);
      }
    }
  }
  run(deps, network, req, res, body, key, waitMs).catch((error: unknown) => unmapped(deps, req, res, error));
}

/** Whether a body's answer may be kept and replayed: small, on a network still served. */
function replayable(network: GatewayNetwork, body: string): boolean {
  return network.retiredAtMs === undefined && body.length <= REPLAY_MAX_BODY;
}

function clientOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/**
 * Parses the body and runs its calls; `key` is its replay key when it may have a replay, `waitMs`
 * the rate limit's answer when a replay already asked it.
 */
async function run(
  deps: Handler,
  network: GatewayNetwork,
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  key: ReplayKey | undefined,
  waitMs: number | undefined,
): Promise<void> {
  const parsed = parseRequestBody(body, deps);
  if (parsed.kind === 'invalid') return sendError(deps, res, parsed.error);
  const members = parsed.kind === 'single' ? [parsed.member] : parsed.members;
  network.countRequests(members.length);
  waitMs ??= deps.rateLimiter.enabled ? deps.rateLimiter.take(clientOf(req), members.length) : 0;
  if (waitMs > 0) {
    deps.metrics.rateLimited();
    const limited = gatewayError(
      'GATEWAY_RATE_LIMITED',
      `Rate limit exceeded: this client sent more requests than this gateway allows (every batch member counts). Retry in ${Math.ceil(waitMs / 1000)} s.`,
    );
    return sendAnswers(
      deps,
      res,
      parsed.kind,
      members,
      members.map(() => limited),
      limited.status,
      ['retry-after', String(Math.ceil(waitMs / 1000))],
    );
  }
  if (network.retiredAtMs !== undefined && network.isRetired(deps.clock.now())) {
    const retired = network.retirementError();
    return sendAnswers(
      deps,
      res,
      parsed.kind,
      members,
      members.map(() => retired),
      200,
      retirementHeaders(network),
    );
  }
  const client = clientKey(req.socket.remoteAddress);
  const answers =
    parsed.kind === 'single'
      ? [await runMember(deps, network, parsed.member, client)]
      : await Promise.all(members.map((member) => runMember(deps, network, member, client)));
  if (parsed.kind === 'single' && key !== undefined && deps.replays.seenBefore(key.key)) {
    const replay = toReplay(deps, network, parsed.member, answers[0]!, key.id);
    if (replay !== undefined) {
      deps.replays.set(key.key, replay);
      return sendReplay(deps, res, replay, key.id);
    }
  }
  return sendAnswers(deps, res, parsed.kind, members, answers, 200, network.retiredAtMs === undefined ? undefined : retirementHeaders(network));
}

/**
 * The response of a single call answered from the cache, kept for the next body of the same key
 * (and sent now): around the id when the key has none (`keyId`, the id as the body has it, which
 * the response echoes), else whole.
 */
function toReplay(deps: Handler, network: GatewayNetwork, member: RpcMember, answer: RpcAnswer | JsonRpcError, keyId: string): Replay | undefined {
  if (member.kind !== 'call' || member.id === undefined || answer instanceof JsonRpcError || answer.cached !== true) return undefined;
  const calls = deps.metrics.callTally(network.name, member.method, 'cache_hit');
  if (keyId !== '') {
    if (member.id !== keyId) return undefined;
    return {
      network,
      epoch: answer.epoch,
      calls,
      headers: [...JSON_HEADERS, 'x-edgeport-cache', 'HIT'],
      body: Buffer.from(RESPONSE_HEAD),
      tail: Buffer.from(resultTail(answer.result)),
    };
  }
  const bytes = Buffer.from(answerResponse(member.id, answer));
  return {
    network,
    epoch: answer.epoch,
    calls,
    headers: [...JSON_HEADERS, 'x-edgeport-cache', 'HIT', 'content-length', String(bytes.length)],
    body: bytes,
    tail: undefined,
  };
}

/** Writes a replay; `id` goes between its parts when it was made for any id (ids in keys are ASCII). */
function sendReplay(deps: Handler, res: ServerResponse, replay: Replay, id: string): void {
  deps.metrics.httpResponse(200);
  if (replay.tail === undefined) {
    res.writeHead(200, replay.headers);
    res.end(replay.body);
    return;
  }
  const length = replay.body.length + id.length + replay.tail.length;
  res.writeHead(200, [...replay.headers, 'content-length', String(length)]);
  const bytes = Buffer.allocUnsafe(length);
  replay.body.copy(bytes, 0);
  bytes.write(id, replay.body.length, 'latin1');
  replay.tail.copy(bytes, length - replay.tail.length);
  res.end(bytes);
}

function runMember(deps: Handler, network: GatewayNetwork, member: RpcMember, client: string): Promise<RpcAnswer> | JsonRpcError {
  return member.kind === 'rejected' ? member.error : deps.executor.execute(network, member.method, member.params, client);
}

/** Writes one answer per member that has an id (notifications get none): one object, an array, or 204. */
function sendAnswers(
  deps: Handler,
  res: ServerResponse,
  shape: 'single' | 'batch',
  members: readonly RpcMember[],
  answers: ReadonlyArray<RpcAnswer | JsonRpcError>,
  status: number,
  headers?: readonly string[],
): void {
  const parts: string[] = [];
  for (let i = 0; i < members.length; i++) {
    const id = members[i]!.id;
    if (id === undefined) continue;
    const answer = answers[i]!;
    parts.push(answer instanceof JsonRpcError ? errorResponse(id, toErrorObject(answer)) : answerResponse(id, answer));
  }
  if (parts.length === 0) {
    deps.metrics.httpResponse(204);
    res.writeHead(204, ['access-control-allow-origin', '*', ...(headers ?? [])]);
    res.end();
    return;
  }
  if (shape === 'batch') return send(deps, res, status, `[${parts.join(',')}]`, headers);
  const member = members[0]!;
  const answer = answers[0]!;
  const cache = member.kind === 'call' && isCachedMethod(member.method) && !(answer instanceof JsonRpcError) ? (answer.cached ? 'HIT' : 'MISS') : 'BYPASS';
  return send(deps, res, status, parts[0]!, headers === undefined ? ['x-edgeport-cache', cache] : ['x-edgeport-cache', cache, ...headers]);
}

function sendError(deps: Handler, res: ServerResponse, error: JsonRpcError, headers?: readonly string[]): void {
  if (error.kind === 'user') deps.logger.debug({ code: error.code }, error.message);
  send(deps, res, error.status, errorResponse('null', toErrorObject(error)), headers);
}

/** With Content-Length (not chunked): one write of head and body, nothing to frame. Headers are flat name/value pairs. */
function send(deps: Handler, res: ServerResponse, status: number, body: string, headers?: readonly string[]): void {
  deps.metrics.httpResponse(status);
  const head = [...JSON_HEADERS, 'content-length', String(Buffer.byteLength(body))];
  if (headers !== undefined) head.push(...headers);
  res.writeHead(status, head);
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
function retirementHeaders(network: GatewayNetwork): string[] {
  const headers = ['sunset', new Date(network.retiredAtMs!).toUTCString()];
  if (network.replacement !== undefined) headers.push('link', `</v1/${network.replacement}>; rel="successor-version"`);
  return headers;
}

function preflight(deps: Handler, req: IncomingMessage, res: ServerResponse): void {
  deps.metrics.httpResponse(204);
  res.writeHead(204, {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'POST, OPTIONS',
    'access-control-allow-headers': req.headers['access-control-request-headers'] ?? 'content-type',
    'access-control-max-age': '86400',
  });
  res.end();
}

async function serveMetrics(deps: Handler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(deps, res, gatewayError('GATEWAY_HTTP_METHOD_NOT_ALLOWED', `HTTP method ${req.method} is not allowed on /metrics: use GET.`), [
      'allow',
      'GET',
    ]);
  }
  deps.beforeMetrics();
  const text = await deps.metrics.text();
  res.writeHead(200, { 'content-type': deps.metrics.contentType });
  res.end(req.method === 'HEAD' ? undefined : text);
}
