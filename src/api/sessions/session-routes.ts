/**
 * Dashboard sign-in (an edgeport extension): `POST /sessions` with the account's e-mail and API key
 * (verified exactly as `X-Auth-Email` / `X-Auth-Key` are) sets the session cookie and answers the
 * CSRF token; `GET /sessions/current` reads the session back (the page asks it after a reload);
 * `DELETE /sessions/current` signs out, ending the session on the server. These two read the
 * cookie only (401 / 10000 without a live session; the DELETE needs X-CSRF-Token too).
 *
 * By design: the token is answered to a GET too; only a page of this origin can read it, since the
 * API sends no CORS headers. The cookie has no `Secure` attribute: edgeport listens on plain HTTP;
 * put TLS in front and the browser still keeps the cookie to this host and port.
 */
import { z } from 'zod';
import { isValidApiKey, isValidEmail } from '../credentials.ts';
import { successResponse } from '../envelope.ts';
import { refuseValue } from '../refinements.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { requireSession, sessionCookie } from './request-auth.ts';
import type { ControlStore } from '../../db/control-store.ts';
import type { Session } from './session-store.ts';

const TAG = 'Dashboard sessions';

const signInBody = z
  .strictObject({
    email: z.string().describe("The account's e-mail (as in X-Auth-Email)"),
    key: z.string().describe("The account's API key (as in X-Auth-Key)"),
  })
  .superRefine((body, ctx) => {
    if (!isValidEmail(body.email)) refuseValue(ctx, ['email'], body.email, 'it is not an e-mail address');
    if (!isValidApiKey(body.key)) refuseValue(ctx, ['key'], '(hidden)', 'an API key is 1 to 256 printable ASCII characters without spaces');
  });
type SignInBody = z.infer<typeof signInBody>;

const sessionResult = z.object({
  account: z.object({ id: z.string(), name: z.string() }),
  email: z.string(),
  operator: z.boolean().describe('Whether this account is the operator: the one EDGEPORT_ADMIN_EMAIL / EDGEPORT_ADMIN_KEY sign in (an edgeport extension)'),
  csrf_token: z.string().describe('Send it as X-CSRF-Token on every request but GET that the cookie authenticates'),
  created_on: z.string(),
  expires_on: z.string(),
});

async function toSessionJson(session: Session, control: ControlStore): Promise<z.infer<typeof sessionResult>> {
  return {
    account: { id: session.account.id, name: session.account.name },
    email: session.account.email,
    operator: (await control.firstAccount())?.id === session.account.id,
    csrf_token: session.csrfToken,
    created_on: new Date(session.created).toISOString(),
    expires_on: new Date(session.expires).toISOString(),
  };
}

export const SESSION_ROUTES: ApiRoute[] = [
  defineRoute<SignInBody>({
    method: 'POST',
    path: '/sessions',
    operationId: 'sessions-create',
    tag: TAG,
    auth: 'none',
    summary: 'Sign in with e-mail and API key: sets the httpOnly session cookie and answers the CSRF token',
    body: { schema: signInBody, invalid: 'API_SIGN_IN_INVALID' },
    result: sessionResult,
    async handler(ctx) {
      // Limited like X-Auth-* checks: per client address and per e-mail (429 / 971 past the limit).
      const account = await ctx.deps.auth.authenticate(new Headers({ 'x-auth-email': ctx.body.email, 'x-auth-key': ctx.body.key }), ctx.clientAddress);
      const { token, session } = await ctx.deps.sessions.create(account);
      const response = successResponse(await toSessionJson(session, ctx.deps.control));
      response.headers.set('set-cookie', sessionCookie(token, ctx.deps.sessions.ttlMs));
      response.headers.set('cache-control', 'no-store');
      return response;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/sessions/current',
    operationId: 'sessions-get',
    tag: TAG,
    auth: 'session',
    summary: 'The session of the cookie, with its CSRF token (401 / 10000 when signed out)',
    result: sessionResult,
    async handler(ctx) {
      const response = successResponse(await toSessionJson(await requireSession(ctx.request, ctx.deps), ctx.deps.control));
      response.headers.set('cache-control', 'no-store');
      return response;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/sessions/current',
    operationId: 'sessions-delete',
    tag: TAG,
    auth: 'session',
    summary: 'Sign out: ends the session on the server and clears the cookie',
    result: z.object({ signed_out: z.literal(true) }),
    async handler(ctx) {
      await ctx.deps.sessions.end(await requireSession(ctx.request, ctx.deps));
      const response = successResponse({ signed_out: true as const });
      response.headers.set('set-cookie', sessionCookie(null));
      return response;
    },
  }),
];
