/**
 * What /readyz checks, on /metrics too: `edgeport_ready{check}` (1 ok, 0 failing; the same probes,
 * run at each scrape, the blob store's rate-limited), the data dir's free space and floor, the
 * reserve held, whether writes are refused for a full disk, and the requests answered with a
 * backend fault (core/errors/fault-log.ts), by surface, backend and code.
 */
import { Counter, Gauge } from 'prom-client';
import { faultTally } from '../../core/errors/fault-log.ts';
import type { DiskGuard } from '../../core/fs/disk-guard.ts';
import type { Metrics } from '../../core/metrics.ts';
import { runReadiness, type ReadinessChecks } from './health-routes.ts';

export function registerHealthMetrics(metrics: Metrics, checks: ReadinessChecks, disk: DiskGuard): void {
  const registers = [metrics.registry];
  const ready = new Gauge({
    name: 'edgeport_ready',
    help: 'Each /readyz check: 1 when it passed at this scrape, 0 when it failed.',
    labelNames: ['check'],
    registers,
  });
  const free = new Gauge({ name: 'edgeport_disk_free_bytes', help: 'Free bytes of the file system under the data dir (for unprivileged users).', registers });
  const floor = new Gauge({
    name: 'edgeport_disk_min_free_bytes',
    help: 'The free-space floor ([disk] min_free_bytes): below it writes are refused and /readyz fails.',
    registers,
  });
  const reserve = new Gauge({
    name: 'edgeport_disk_reserve_bytes',
    help: "Bytes held in the data dir's disk reserve (0 once released on a full disk).",
    registers,
  });
  const refused = new Gauge({
    name: 'edgeport_disk_writes_refused',
    help: "1 while writes are refused because the data dir's disk is full, else 0.",
    registers,
  });
  const faults = new Counter({
    name: 'edgeport_backend_faults_total',
    help: 'Requests answered with a backend fault (the database, the blob store or the disk down, too slow or full), by surface, backend and code.',
    labelNames: ['surface', 'backend', 'code'],
    registers,
  });
  const counted = new Map<string, number>();
  metrics.beforeScrape(async () => {
    const [readiness, state] = await Promise.all([runReadiness(checks), disk.state()]);
    for (const [name, outcome] of Object.entries(readiness.checks)) ready.labels(name).set(outcome === 'ok' ? 1 : 0);
    free.set(state.freeBytes);
    floor.set(state.minFreeBytes);
    reserve.set(state.reserveBytes);
    refused.set(state.full ? 1 : 0);
    for (const [key, total] of faultTally) {
      const [surface, code, ...backend] = key.split(' ');
      const added = total - (counted.get(key) ?? 0);
      if (added > 0) faults.labels(surface!, backend.join(' '), code!).inc(added);
      counted.set(key, total);
    }
  });
}
