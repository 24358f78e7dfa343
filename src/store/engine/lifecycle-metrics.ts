/**
 * The lifecycle sweeper's Prometheus metrics, read from its counts at scrape time: what this
 * instance expired, moved and aborted, its finished cycles and failed passes, when it last
 * finished a cycle, and whether it holds the lease (one instance of a deployment does at a time).
 */
import { Counter, Gauge } from 'prom-client';
import type { Metrics } from '../../core/metrics.ts';
import type { LifecycleStats } from './lifecycle-sweeper.ts';

export function registerLifecycleMetrics(metrics: Metrics, sweeper: { readonly stats: LifecycleStats }): void {
  const registers = [metrics.registry];
  const counters: Array<[Counter, () => number]> = [
    [
      new Counter({
        name: 'edgeport_store_lifecycle_expired_objects_total',
        help: 'Objects deleted by lifecycle rules (each once) on this instance.',
        registers,
      }),
      () => sweeper.stats.expiredObjects,
    ],
    [
      new Counter({
        name: 'edgeport_store_lifecycle_transitioned_objects_total',
        help: 'Objects moved to InfrequentAccess by lifecycle rules on this instance.',
        registers,
      }),
      () => sweeper.stats.transitionedObjects,
    ],
    [
      new Counter({
        name: 'edgeport_store_lifecycle_aborted_uploads_total',
        help: 'Incomplete multipart uploads aborted by lifecycle rules on this instance.',
        registers,
      }),
      () => sweeper.stats.abortedUploads,
    ],
    [
      new Counter({ name: 'edgeport_store_lifecycle_cycles_total', help: 'Lifecycle sweeps of every bucket with rules finished on this instance.', registers }),
      () => sweeper.stats.cycles,
    ],
    [
      new Counter({ name: 'edgeport_store_lifecycle_failures_total', help: 'Lifecycle sweep passes that failed (retried at the next interval).', registers }),
      () => sweeper.stats.failures,
    ],
  ];
  const lastCycle = new Gauge({
    name: 'edgeport_store_lifecycle_last_cycle_timestamp_seconds',
    help: 'When this instance last finished a lifecycle sweep (0: never).',
    registers,
  });
  const holds = new Gauge({
    name: 'edgeport_store_lifecycle_lease_held',
    help: '1 when this instance held the lifecycle lease at its last pass (one instance does the sweeping).',
    registers,
  });
  metrics.beforeScrape(() => {
    for (const [counter, value] of counters) {
      counter.reset();
      counter.inc(value());
    }
    lastCycle.set(sweeper.stats.lastCycleAt / 1000);
    holds.set(sweeper.stats.holdsLease ? 1 : 0);
  });
}
