/**
 * HTTP POSTs of log batches (and the test upload a new http(s):// destination must accept), made
 * only where the job's account may connect: with an OutboundGuard (every account but the
 * operator's), an IP-literal or `localhost` URL is refused before connecting and every name is
 * judged in the connection's own lookup, so a log job cannot reach edgeport's own listeners or
 * the machine's private network.
 */
import type * as Undici from 'undici';
import type { Agent, Response } from 'undici';
import { guardedLookup, literalRefusal, ProhibitedAddressError, urlPort, type OutboundGuard } from '../../core/net/outbound-guard.ts';

export interface GuardedPoster {
  post(init: { headers: Record<string, string>; body: Uint8Array; timeoutMs: number }): Promise<Response>;
  close(): Promise<void>;
}

/** undici is loaded by the first POST: a server without http(s):// destinations never pays for it. */
let undici: Promise<typeof Undici> | undefined;

/** A poster to `url`; `guard` null connects anywhere (the operator's jobs). */
export function guardedPoster(url: URL, guard: OutboundGuard | null): GuardedPoster {
  let dispatcher: Agent | undefined;
  return {
    async post({ headers, body, timeoutMs }) {
      const refused = guard && literalRefusal(guard, url);
      if (refused) throw new ProhibitedAddressError(refused);
      const { Agent, fetch } = await (undici ??= import('undici'));
      dispatcher ??= new Agent(guard ? { connect: { lookup: guardedLookup(guard, urlPort(url)) } } : {});
      return fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs), dispatcher });
    },
    close: async () => {
      await dispatcher?.close();
    },
  };
}

/** The reason a failed POST gives: the guard's refusal, or the network error under fetch's "fetch failed". */
export function postFailure(error: unknown): string {
  if (error instanceof ProhibitedAddressError) return `the destination leads where this account may not connect: ${error.message}`;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof ProhibitedAddressError) return `the destination leads where this account may not connect: ${cause.message}`;
  return (cause as { message?: string } | undefined)?.message ?? (error as Error).message;
}
