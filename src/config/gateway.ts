/**
 * The `[gateway]` section of edgeport.toml: the networks the JSON-RPC gateway serves (chain id,
 * upstream node URLs or the embedded chain, retirement) and its limits. Networks named in the file
 * are merged by name over the defaults (sepolia, rinkeby), so `[[gateway.networks]] name =
 * "sepolia" upstreams = [...]` only swaps sepolia's backend.
 */
import { z } from 'zod';
import { GATEWAY_DEFAULTS, type DefaultGatewayNetwork } from './defaults.ts';

const NETWORK_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Method names, with an optional trailing `*` matching any suffix (`debug_*`). */
const METHOD_PATTERN = /^[A-Za-z0-9_.]+\*?$/;

const positiveInt = z.number().int().positive();

const networkSchema = z.strictObject({
  name: z.string().regex(NETWORK_NAME, 'a network name is lower case letters, digits, "-" and "_" (it is the last segment of /v1/<network>)'),
  chain_id: positiveInt.optional(),
  /** `"embedded"` (the in-process chain) or one or more node URLs, tried in order (failover). */
  upstreams: z.union([z.literal('embedded'), z.array(z.url({ protocol: /^https?$/, error: 'an upstream is an http:// or https:// URL' })).min(1)]).optional(),
  /** TOML date (`2023-01-30`) or the same as a string: from that day (UTC) on, the network is retired. */
  retired_on: z.union([z.string().regex(DATE, 'a date is YYYY-MM-DD'), z.date()]).optional(),
  /** The network clients move to once this one is retired. */
  replacement: z.string().regex(NETWORK_NAME).optional(),
  enabled: z.boolean().optional(),
});

export const gatewaySectionSchema = z
  .strictObject({
    max_body_bytes: positiveInt.optional(),
    max_batch_items: positiveInt.optional(),
    upstream_timeout_ms: positiveInt.optional(),
    upstream_cooldown_ms: z.number().int().min(0).optional(),
    cache_max_entries: z.number().int().min(0).optional(),
    cache_max_bytes: z.number().int().min(0).optional(),
    max_logs_block_range: positiveInt.optional(),
    max_fee_history_blocks: positiveInt.optional(),
    allow_methods: z.array(z.string().regex(METHOD_PATTERN, 'a method name, optionally ending in *')).optional(),
    deny_methods: z.array(z.string().regex(METHOD_PATTERN, 'a method name, optionally ending in *')).optional(),
    rate_limit: z
      .strictObject({
        /** Sustained requests per second per client IP (every batch member counts); 0 turns the limit off. */
        requests_per_second: z.number().min(0).optional(),
        /** Bucket size: how many requests a client may send at once after being idle. */
        burst: positiveInt.optional(),
      })
      .optional(),
    /** Gas for one EVM-executing call (eth_call, eth_estimateGas, ...); more is cut to this. */
    evm_gas_cap: z.number().int().min(21_000).optional(),
    /** Wall time one EVM-executing call may take before its answer is an error. */
    evm_timeout_ms: positiveInt.optional(),
    evm_time_per_client: z
      .strictObject({
        /** Chain milliseconds per second each client (IP) may spend on EVM calls, sustained. */
        ms_per_second: positiveInt.optional(),
        /** Chain milliseconds an idle client may spend at once. */
        burst_ms: positiveInt.optional(),
      })
      .optional(),
    max_queued_evm_calls_per_client: positiveInt.optional(),
    max_queued_evm_calls: positiveInt.optional(),
    /** Bytes of large bodies read and parsed at once; a large body over it gets 503. */
    max_body_bytes_in_flight: positiveInt.optional(),
    networks: z.array(networkSchema).optional(),
  })
  .superRefine((section, ctx) => {
    for (const issue of networkIssues(section.networks ?? [])) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });

export type GatewaySection = z.infer<typeof gatewaySectionSchema>;
type NetworkEntry = z.infer<typeof networkSchema>;

/** Where a network's answers come from. */
export type GatewayBackendConfig = { kind: 'embedded' } | { kind: 'upstreams'; urls: readonly string[] };

export interface GatewayNetworkConfig {
  /** The last path segment: `/v1/<name>`. */
  name: string;
  chainId: number;
  backend: GatewayBackendConfig;
  /** `YYYY-MM-DD`: from 00:00 UTC that day on, every request gets GATEWAY_NETWORK_RETIRED. */
  retiredOn: string | undefined;
  replacement: string | undefined;
}

export interface GatewayConfig {
  /** Enabled networks only, in configuration order. */
  networks: readonly GatewayNetworkConfig[];
  maxBodyBytes: number;
  maxBatchItems: number;
  upstreamTimeoutMs: number;
  /** How long an upstream that failed is skipped (unless every upstream is down). */
  upstreamCooldownMs: number;
  cacheMaxEntries: number;
  cacheMaxBytes: number;
  maxLogsBlockRange: number;
  maxFeeHistoryBlocks: number;
  /** Methods allowed beyond the default list (patterns may end in `*`). */
  allowMethods: readonly string[];
  /** Methods refused beyond the built-in refusals. */
  denyMethods: readonly string[];
  rateLimit: { requestsPerSecond: number; burst: number };
  /**
   * Gas for one EVM-executing call; more is cut to this (geth's rpc.gascap). `evm_gas_cap` sets
   * both; unset, the embedded chain (whose memory is edgeport's) and upstream nodes (which bound
   * their own) have defaults of their own.
   */
  evmGasCap: { embedded: number; upstream: number };
  /** Wall time of one EVM-executing call before it answers an error (geth's rpc.evmtimeout). */
  evmTimeoutMs: number;
  /** Chain time per client for EVM-executing calls: a bucket of `burstMs` refilled at `msPerSecond`. */
  evmTimePerClient: { msPerSecond: number; burstMs: number };
  maxQueuedEvmCallsPerClient: number;
  maxQueuedEvmCalls: number;
  maxBodyBytesInFlight: number;
}

/** Fills defaults into a validated `[gateway]` section (validation already ran). */
export function toGatewayConfig(section: GatewaySection | undefined): GatewayConfig {
  const d = GATEWAY_DEFAULTS;
  return {
    networks: mergeNetworks(section?.networks ?? [])
      .filter((n) => n.enabled !== false)
      .map(toNetworkConfig),
    maxBodyBytes: section?.max_body_bytes ?? d.maxBodyBytes,
    maxBatchItems: section?.max_batch_items ?? d.maxBatchItems,
    upstreamTimeoutMs: section?.upstream_timeout_ms ?? d.upstreamTimeoutMs,
    upstreamCooldownMs: section?.upstream_cooldown_ms ?? d.upstreamCooldownMs,
    cacheMaxEntries: section?.cache_max_entries ?? d.cacheMaxEntries,
    cacheMaxBytes: section?.cache_max_bytes ?? d.cacheMaxBytes,
    maxLogsBlockRange: section?.max_logs_block_range ?? d.maxLogsBlockRange,
    maxFeeHistoryBlocks: section?.max_fee_history_blocks ?? d.maxFeeHistoryBlocks,
    allowMethods: section?.allow_methods ?? [],
    denyMethods: section?.deny_methods ?? [],
    rateLimit: {
      requestsPerSecond: section?.rate_limit?.requests_per_second ?? d.rateLimit.requestsPerSecond,
      burst: section?.rate_limit?.burst ?? d.rateLimit.burst,
    },
    evmGasCap: {
      embedded: section?.evm_gas_cap ?? d.evmGasCap.embedded,
      upstream: section?.evm_gas_cap ?? d.evmGasCap.upstream,
    },
    evmTimeoutMs: section?.evm_timeout_ms ?? d.evmTimeoutMs,
    evmTimePerClient: {
      msPerSecond: section?.evm_time_per_client?.ms_per_second ?? d.evmTimePerClient.msPerSecond,
      burstMs: section?.evm_time_per_client?.burst_ms ?? d.evmTimePerClient.burstMs,
    },
    maxQueuedEvmCallsPerClient: section?.max_queued_evm_calls_per_client ?? d.maxQueuedEvmCallsPerClient,
    maxQueuedEvmCalls: section?.max_queued_evm_calls ?? d.maxQueuedEvmCalls,
    maxBodyBytesInFlight: section?.max_body_bytes_in_flight ?? d.maxBodyBytesInFlight,
  };
}

function defaultEntry(network: DefaultGatewayNetwork): NetworkEntry {
  return {
    name: network.name,
    chain_id: network.chainId,
    upstreams: 'embedded',
    ...(network.retiredOn ? { retired_on: network.retiredOn } : {}),
    ...(network.replacement ? { replacement: network.replacement } : {}),
  };
}

/** Defaults first, each overridden field by field by a file entry of the same name; new names appended. */
function mergeNetworks(entries: readonly NetworkEntry[]): NetworkEntry[] {
  const merged = new Map<string, NetworkEntry>(GATEWAY_DEFAULTS.networks.map((n) => [n.name, defaultEntry(n)]));
  for (const entry of entries) merged.set(entry.name, { ...merged.get(entry.name), ...entry });
  return [...merged.values()];
}

function toNetworkConfig(entry: NetworkEntry): GatewayNetworkConfig {
  const upstreams = entry.upstreams ?? 'embedded';
  return {
    name: entry.name,
    chainId: entry.chain_id!,
    backend: upstreams === 'embedded' ? { kind: 'embedded' } : { kind: 'upstreams', urls: upstreams },
    retiredOn: entry.retired_on === undefined ? undefined : toDateString(entry.retired_on),
    replacement: entry.replacement,
  };
}

/** `Date.parse` rolls 2023-02-30 over into March; a real date survives the round trip. */
function isCalendarDate(text: string): boolean {
  const time = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === text;
}

function toDateString(value: string | Date): string {
  return typeof value === 'string' ? value : value.toISOString().slice(0, 10);
}

/** Checks that need the merged list: chain ids, duplicate names, replacements that exist. */
function networkIssues(entries: readonly NetworkEntry[]): Array<{ path: PropertyKey[]; message: string }> {
  const issues: Array<{ path: PropertyKey[]; message: string }> = [];
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    if (seen.has(entry.name)) issues.push({ path: ['networks', i, 'name'], message: `network "${entry.name}" is listed twice` });
    seen.add(entry.name);
    if (typeof entry.retired_on === 'string' && !isCalendarDate(entry.retired_on)) {
      issues.push({ path: ['networks', i, 'retired_on'], message: `"${entry.retired_on}" is not a calendar date` });
    }
  });
  const merged = mergeNetworks(entries);
  const enabled = new Set(merged.filter((n) => n.enabled !== false).map((n) => n.name));
  for (const network of merged) {
    const i = entries.findIndex((e) => e.name === network.name);
    const at = (key: string): PropertyKey[] => ['networks', Math.max(i, 0), key];
    if (network.chain_id === undefined) issues.push({ path: at('chain_id'), message: `network "${network.name}" needs a chain_id` });
    if (network.enabled === false) continue;
    if (network.replacement !== undefined) {
      if (network.replacement === network.name) issues.push({ path: at('replacement'), message: `network "${network.name}" cannot replace itself` });
      else if (!enabled.has(network.replacement))
        issues.push({ path: at('replacement'), message: `replacement "${network.replacement}" is not an enabled network` });
    }
  }
  return issues;
}
