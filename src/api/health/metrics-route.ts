/**
 * `GET|HEAD /metrics` on the management API's port: the process's Prometheus metrics
 * (core/metrics.ts), every service's. Like the gateway's /metrics it needs no credentials: its
 * labels hold no account's names, ids or keys (log job ids aside); see docs/security.md for
 * keeping it off a public port.
 */
import type { Hono } from 'hono';
import type { Metrics } from '../../core/metrics.ts';

export function mountMetricsRoute(app: Hono, metrics: Metrics): void {
  app.on(['GET', 'HEAD'], '/metrics', async (c) => {
    const text = await metrics.text();
    return new Response(c.req.method === 'HEAD' ? null : text, { headers: { 'content-type': metrics.contentType, 'cache-control': 'no-store' } });
  });
}
