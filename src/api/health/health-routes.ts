/**
 * Probes on the management API's port, outside `/client/v4` and answered before the dashboard
 * (whose pages would otherwise answer any path with 200):
 * - `GET|HEAD /healthz`: the process is up and answering: 200 `ok`, nothing else checked (a
 *   liveness probe: restart the process when it fails).
 * - `GET|HEAD /readyz`: every dependency (the database, the blob store, the data dir's free space)
 *   answered its probe within READY_TIMEOUT_MS: 200, or 503 naming what failed (a readiness probe:
 *   send no traffic while it fails). The body is JSON:
 *   `{"status":"ready"|"not ready","checks":{"<name>":"ok"|"<why>"}}`. /metrics carries the same
 *   results (edgeport_ready, start.ts). Costly probes are rate-limited with cachedCheck.
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
  app.on(
    ['GET', 'HEAD'],
    '/healthz',
    (c) =>
      new Response(c.req.method === 'HEAD' ? null : 'ok\n', {
        headers: { ...NO_STORE, 'content-type': 'text/plain; charset=utf-8' },
      }),
  );
  app.on(['GET', 'HEAD'], '/readyz', async (c) => {
    const { ready, checks: results } = await runReadiness(checks, timeoutMs);
    const body = JSON.stringify({ status: ready ? 'ready' : 'not ready', checks: results });
    return new Response(c.req.method === 'HEAD' ? null : `${body}\n`, {
      status: ready ? 200 : 503,
      headers: { ...NO_STORE, 'content-type': 'application/json' },
    });
  });
}

/** Runs every check at once, each within `timeoutMs`: `ok` or why it failed, by name. */
export async function runReadiness(checks: ReadinessChecks, timeoutMs = READY_TIMEOUT_MS): Promise<{ ready: boolean; checks: Record<string, string> }> {
  const results = await Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await probe(check, timeoutMs)] as const));
  return { ready: results.every(([, outcome]) => outcome === 'ok'), checks: Object.fromEntries(results) };
}

/**
 * `check`, run at most once per `okMs` while it succeeds and once per `failMs` while it fails;
 * callers in between get its last outcome (a write-and-delete probe of the blob store costs two
 * requests; a load balancer probing every second need not pay them every time).
 */
export function cachedCheck(check: () => Promise<void>, options: { okMs: number; failMs: number }): () => Promise<void> {
  let last: { at: number; error: unknown; ok: boolean } | null = null;
  let running: Promise<void> | null = null;
  return async function cached(): Promise<void> {
    const now = Date.now();
    if (last && now - last.at < (last.ok ? options.okMs : options.failMs)) {
      if (last.ok) return;
      throw last.error;
    }
    running ??= check()
      .then(
        () => {
          last = { at: Date.now(), error: undefined, ok: true };
        },
        (error: unknown) => {
          last = { at: Date.now(), error, ok: false };
        },
      )
      .finally(() => {
        running = null;
      });
    await running;
    if (!last!.ok) throw last!.error;
  };
}

/** `ok`, or why the check failed (its error's message, or that it took too long). */
async function probe(check: () => Promise<void>, timeoutMs: number): Promise<string> {
  try {
    const outcome = await within(
      check().then(() => 'ok' as const),
      timeoutMs,
      'timeout' as const,
    );
    return outcome === 'ok' ? 'ok' : `no answer within ${timeoutMs} ms`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
