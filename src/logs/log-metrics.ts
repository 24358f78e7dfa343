/**
 * The log pipeline's Prometheus metrics, read from its counts at scrape time (nothing on the
 * request or delivery path): per job, the lines it took into its spool, the lines delivered, the
 * lines of failed deliveries (to be retried) and the lines dropped, and the bytes its spool files
 * hold; and the bytes all spools hold. Spooled minus shipped is what this process has yet to deliver.
 * The `log_job` label is the log job's id: jobs are few per zone, and a deleted job's series go with it.
 * (Not `job`: Prometheus gives every target a `job` label of its own and renames a clashing one
 * to `exported_job`, so a query for `{job="1"}` would find nothing.)
 */
import { Counter, Gauge } from 'prom-client';
import type { Metrics } from '../core/metrics.ts';
import type { LogJobDeliveryStats } from './log-pipeline.ts';

export interface LogMetricsSource {
  deliveryStats(): LogJobDeliveryStats[];
  readonly spooledBytes: number;
}

export function registerLogMetrics(metrics: Metrics, pipeline: LogMetricsSource): void {
  const registers = [metrics.registry];
  const spooled = new Counter({
    name: 'edgeport_logs_spooled_lines_total',
    help: 'Log lines the job took into its spool (past its filter and sampling) in this process; those not yet shipped are its backlog.',
    labelNames: ['log_job'],
    registers,
  });
  const shipped = new Counter({
    name: 'edgeport_logs_shipped_lines_total',
    help: "Log lines delivered to the job's destination by this process.",
    labelNames: ['log_job'],
    registers,
  });
  const failed = new Counter({
    name: 'edgeport_logs_failed_lines_total',
    help: 'Log lines in batches whose delivery failed (each failed attempt counts; they are retried).',
    labelNames: ['log_job'],
    registers,
  });
  const dropped = new Counter({
    name: 'edgeport_logs_dropped_lines_total',
    help: 'Log lines dropped: the job was paused or its spool full.',
    labelNames: ['log_job'],
    registers,
  });
  const jobSpool = new Gauge({
    name: 'edgeport_logs_job_spool_bytes',
    help: "Bytes of the job's spool files on disk (delivered lines stay until their segment file is removed).",
    labelNames: ['log_job'],
    registers,
  });
  const spool = new Gauge({ name: 'edgeport_logs_spool_bytes', help: 'Bytes of undelivered log lines in all spools.', registers });
  metrics.beforeScrape(() => {
    for (const metric of [spooled, shipped, failed, dropped, jobSpool]) metric.reset();
    for (const stats of pipeline.deliveryStats()) {
      const job = String(stats.jobId);
      spooled.labels(job).inc(stats.spooledLines);
      shipped.labels(job).inc(stats.shippedLines);
      failed.labels(job).inc(stats.failedLines);
      dropped.labels(job).inc(stats.droppedLines);
      jobSpool.labels(job).set(stats.spooledBytes);
    }
    spool.set(pipeline.spooledBytes);
  });
}
