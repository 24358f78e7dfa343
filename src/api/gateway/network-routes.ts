/**
 * The JSON-RPC gateway's networks (an edgeport extension for the dashboard), under
 * `/accounts/:account_id/gateway/networks`: each network's chain id, state (served, or retired
 * from its date with its replacement), full endpoint URL, and the JSON-RPC calls it has received
 * since start (a client computes a rate from two readings and their `sampled_at`).
 *
 * By design: the gateway is not partitioned by account, so every account sees every network. A
 * management API running without a gateway (in-process tests) lists none.
 */
import { z } from 'zod';
import type { GatewayNetworkStatus } from '../../gateway/index.ts';
import { requireOwnAccount } from '../accounts/account-routes.ts';
import { successResponse } from '../envelope.ts';
import { defineRoute, type ApiRoute } from '../route.ts';

/** What the networks route needs from the gateway service. */
export interface GatewayStatus {
  networks(): readonly GatewayNetworkStatus[];
  /** The gateway listener's URL, e.g. `http://127.0.0.1:8545`; undefined until it listens. */
  url(): string | undefined;
}

const networkResult = z.object({
  name: z.string(),
  chain_id: z.number().int(),
  state: z.enum(['served', 'retired']),
  retired_on: z.string().nullable().describe('YYYY-MM-DD: from 00:00 UTC that day on, every request gets -32002'),
  replacement: z.string().nullable(),
  backend: z.enum(['embedded', 'upstreams']),
  endpoint: z.string().nullable().describe("POST JSON-RPC here (the gateway answers browsers' CORS preflights)"),
  requests_total: z.number().int(),
  sampled_at: z.string(),
});

export const GATEWAY_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/accounts/:account_id/gateway/networks',
    operationId: 'gateway-networks-list',
    tag: 'Gateway',
    summary: "The JSON-RPC gateway's networks: state, endpoint and calls received",
    result: z.array(networkResult),
    resultInfo: 'page',
    async handler(ctx) {
      requireOwnAccount(ctx);
      const gateway = ctx.deps.gateway;
      const base = gateway ? publicUrl(gateway.url(), ctx.request) : undefined;
      const sampledAt = new Date(ctx.deps.clock.now()).toISOString();
      const networks = (gateway?.networks() ?? []).map((n) => ({
        name: n.name,
        chain_id: n.chainId,
        state: n.retired ? ('retired' as const) : ('served' as const),
        retired_on: n.retiredOn ?? null,
        replacement: n.replacement ?? null,
        backend: n.backend,
        endpoint: base === undefined ? null : `${base}/v1/${encodeURIComponent(n.name)}`,
        requests_total: n.requests,
        sampled_at: sampledAt,
      }));
      return successResponse(networks, {
        resultInfo: { page: 1, per_page: networks.length, count: networks.length, total_count: networks.length, total_pages: 1 },
      });
    },
  }),
];

/**
 * The gateway URL as a browser reaching this API can use it: a wildcard listen address (0.0.0.0,
 * ::) is replaced by the host name the request came to.
 */
export function publicUrl(url: string | undefined, request: Request): string | undefined {
  if (url === undefined) return undefined;
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0' || parsed.hostname === '[::]') parsed.hostname = new URL(request.url).hostname;
  return parsed.origin;
}
