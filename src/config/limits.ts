/**
 * The `[limits]` section of edgeport.toml: what every listener (edge, management API, gateway, S3
 * API, `edgeport dev`) allows a client before it refuses, times out or sheds: the header timeout,
 * the keep-alive and idle timeouts, connection limits, and the event-loop delay that starts load
 * shedding. Defaults and their reasons are in DEFAULTS.limits (src/config/defaults.ts).
 */
import { z } from 'zod';
import { DEFAULTS } from './defaults.ts';

const ms = (min: number, max: number) => z.number().int().min(min).max(max);
/** A count where 0 means "no limit". */
const countOrOff = z.number().int().min(0).max(1_000_000);

export const limitsSectionSchema = z.strictObject({
  header_timeout_ms: ms(100, 600_000).optional(),
  keep_alive_timeout_ms: ms(100, 600_000).optional(),
  idle_timeout_ms: ms(1_000, 3_600_000).optional(),
  max_connections: countOrOff.optional(),
  max_connections_per_client: countOrOff.optional(),
  max_event_loop_delay_ms: ms(0, 600_000)
    .refine((value) => value === 0 || value >= 20, 'is 0 (never shed) or 20 to 600000 ms')
    .optional(),
});

export type LimitsSection = z.infer<typeof limitsSectionSchema>;

/** What each listener enforces; a count of 0 means no limit, a delay of 0 never sheds. */
export interface ListenerLimits {
  headerTimeoutMs: number;
  keepAliveTimeoutMs: number;
  idleTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerClient: number;
  maxEventLoopDelayMs: number;
}

/** Fills defaults into a validated `[limits]` section. */
export function toListenerLimits(section: LimitsSection | undefined): ListenerLimits {
  const d = DEFAULTS.limits;
  return {
    headerTimeoutMs: section?.header_timeout_ms ?? d.headerTimeoutMs,
    keepAliveTimeoutMs: section?.keep_alive_timeout_ms ?? d.keepAliveTimeoutMs,
    idleTimeoutMs: section?.idle_timeout_ms ?? d.idleTimeoutMs,
    maxConnections: section?.max_connections ?? d.maxConnections,
    maxConnectionsPerClient: section?.max_connections_per_client ?? d.maxConnectionsPerClient,
    maxEventLoopDelayMs: section?.max_event_loop_delay_ms ?? d.maxEventLoopDelayMs,
  };
}
