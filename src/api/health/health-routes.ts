/**
 * Probes on the management API's port, outside `/client/v4` and answered before the dashboard
 * (whose pages would otherwise answer any path with 200):
 * - `GET|HEAD /healthz`: the process is up and answering: 200 `ok`, nothing else checked (a
 *   liveness probe: restart the process when it fails).
 * - `GET|HEAD /readyz`: every dependency (the database, the blob store) answered a cheap probe
 *   within READY_TIMEOUT_MS: 200, or 503 naming what failed (a readiness probe: send no traffic
 *   while it fails). The body is JSON: `{"status":"ready"|"not ready","checks":{"<name>":"ok"|"<why>"}}`.
 * Neither needs credentials nor tells anything of any account.
 */
import type { Hono } from 'hono';
import { within } from '../../core/within.ts';

/** Named probes: each resolves when its dependency answers, or throws saying why. */
export type ReadinessChecks = Readonly<Record<string, () => Promise<void>>>;

/** How long each readiness probe may take before it counts as failed. */
export const READY_TIMEOUT_MS = 2_000;

const NO_STORE = { 'cache-control': 'no-store' };

export function mountHealthRoutes(app: Hono, checks: ReadinessChecks, timeoutMs = READY_TIMEOUT_MS): void {
  app.on(['GET', 'HEAD'], '/healthz', (c) => new Response(c.req.method === 'HEAD' ? null : 'ok\n', {
    headers: { ...NO_STORE, 'content-type': 'text/plain; charset=utf-8' },
  }));
  app.on(['GET', 'HEAD'], '/readyz', async (c) => {
    const results = await Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await probe(check, timeoutMs)] as const));
    const ready = results.every(([, outcome]) => outcome === 'ok');
    const body = JSON.stringify({ status: ready ? 'ready' : 'not ready', checks: Object.fromEntries(results) });
    return new Response(c.req.method === 'HEAD' ? null : `${body}\n`, {
      status: ready ? 200 : 503,
      headers: { ...NO_STORE, 'content-type': 'application/json' },
    });
  });
}

/** `ok`, or why the check failed (its error's message, or that it took too long). */
async function probe(check: () => Promise<void>, timeoutMs: number): Promise<string> {
  try {
    const outcome = await within(check().then(() => 'ok' as const), timeoutMs, 'timeout' as const);
    return outcome === 'ok' ? 'ok' : `no answer within ${timeoutMs} ms`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
