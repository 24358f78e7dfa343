/**
 * Tails of a script (`wrangler tail`): open one (`POST .../tails`, answered with the WebSocket URL
 * the client connects to with subprotocol `trace-v1`; the body's `filters` choose which events it
 * gets: edge/tail-filters.ts), list and close them. A session is this
 * instance's: the WebSocket URL leads back to the instance that answered. Another account's tail
 * id answers exactly like a missing one.
 */
import { z } from 'zod';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { acceptWebSocket, handshakeProblem, refuseUpgrade } from '../../core/http/websocket.ts';
import { tailFiltersBody } from '../../edge/tail-filters.ts';
import type { TailSession, TailSessions } from '../../edge/tail-sessions.ts';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { requireScript, SCRIPT } from './workers-common.ts';

const TAG = 'Workers';
const anyResult = z.unknown();
/** Where a session's WebSocket is served, below /client/v4. */
const SOCKET_PATH = '/tail-sockets/';

function tailsOf(ctx: RouteContext<unknown>, tails: TailSessions | undefined): TailSessions {
  if (!tails) throw new ApiError('API_WORKER_INVALID', { message: 'Tails cannot be opened on this server.' });
  return tails;
}

function tailJson(session: TailSession, origin: string): Record<string, unknown> {
  const ws = origin.replace(/^http/, 'ws');
  return { id: session.id, url: `${ws}/client/v4${SOCKET_PATH}${session.id}/${session.secret}`, expires_at: new Date(session.expiresAt).toISOString() };
}

function originOf(ctx: RouteContext<unknown>): string {
  const url = new URL(ctx.request.url);
  const forwarded = ctx.request.headers.get('x-forwarded-proto');
  return `${forwarded === 'https' ? 'https:' : url.protocol}//${url.host}`;
}

export const WORKER_TAIL_ROUTES: ApiRoute[] = [
  defineRoute<z.infer<typeof tailFiltersBody>>({
    method: 'POST',
    path: `${SCRIPT}/tails`,
    operationId: 'workers-tails-create',
    summary: "Open a tail: the WebSocket (trace-v1) that receives an event per request the script serves that meets the body's filters",
    tag: TAG,
    body: { schema: tailFiltersBody, invalid: 'API_WORKER_INVALID', optional: true, anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const tails = tailsOf(ctx, workers.tails);
      const session = tails.open(ctx.account.id, script.name, {
        filters: ctx.body.filters,
        ...(ctx.clientAddress === undefined ? {} : { openerIp: ctx.clientAddress }),
      });
      if ('limit' in session) {
        throw new ApiError('API_WORKER_TAIL_LIMIT', {
          message:
            session.limit === 'script'
              ? `The script already has ${session.max} tails open, the most a script may have: close one first`
              : `Your account already has ${session.max} tails open, the most an account may have: close one first`,
        });
      }
      return successResponse(tailJson(session, originOf(ctx)));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/tails`,
    operationId: 'workers-tails-list',
    summary: "The script's open tails",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const tails = tailsOf(ctx, workers.tails);
      return successResponse(tails.list(ctx.account.id, script.name).map((session) => tailJson(session, originOf(ctx))));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${SCRIPT}/tails/:tail_id`,
    operationId: 'workers-tails-delete',
    summary: 'Close a tail',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const tails = tailsOf(ctx, workers.tails);
      const id = ctx.params.tail_id ?? '';
      const session = tails.get(ctx.account.id, script.name, id);
      if (!session) throw new ApiError('API_WORKER_TAIL_NOT_FOUND', { message: `The script has no tail ${JSON.stringify(id.slice(0, 64))}` });
      tails.close(session);
      return successResponse(null);
    },
  }),
];

/**
 * The API listener's `upgrade` handler: a tail session's WebSocket (its id and secret in the path).
 * Any other upgrade request is answered and closed at once: 400 when it is no WebSocket handshake
 * (another protocol, a body: see handshakeProblem), else 404.
 */
export function tailUpgradeHandler(tails: TailSessions): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    const problem = handshakeProblem(req);
    if (problem !== null) {
      refuseUpgrade(socket, ...problem);
      return;
    }
    const match = /^\/client\/v4\/tail-sockets\/([0-9a-f]{32})\/([A-Za-z0-9_-]{32})$/.exec((req.url ?? '').split('?')[0]!);
    const session = match ? tails.forSocket(match[1]!, match[2]!) : undefined;
    if (!session) {
      refuseUpgrade(socket, '404 Not Found', 'No such tail: open one with POST /client/v4/accounts/<account>/workers/scripts/<script>/tails.');
      return;
    }
    if (head.length > 0) socket.unshift(head);
    (socket as { setTimeout?: (ms: number) => void }).setTimeout?.(0);
    const ws = acceptWebSocket(
      req,
      socket,
      'trace-v1',
      { maxMessageBytes: tails.limits.maxMessageBytes, maxBufferedBytes: tails.limits.maxBufferedBytes },
      tails.sockets,
    );
    if (ws) tails.attach(session, ws);
  };
}
