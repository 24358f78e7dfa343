/**
 * The tail sessions' Prometheus metrics, read at scrape time: the bytes their sockets hold (events
 * not yet read by their clients, input being read), bounded per socket by TAIL_LIMITS; and the
 * sockets ended since start, by why (`slow_reader`: closed for leaving too many events unread).
 */
import { Counter, Gauge } from 'prom-client';
import { CLOSE_CAUSES, type CloseCause } from '../core/http/websocket.ts';
import type { Metrics } from '../core/metrics.ts';

export interface TailMetricsSource {
  readonly bufferedBytes: number;
  readonly socketsClosed: Readonly<Record<CloseCause, number>>;
}

export function registerTailMetrics(metrics: Metrics, tails: TailMetricsSource): void {
  const registers = [metrics.registry];
  const buffered = new Gauge({
    name: 'edgeport_workers_tail_buffered_bytes',
    help: 'Bytes the tail sockets hold: events their clients have not read yet, and input being read.',
    registers,
  });
  const closed = new Counter({
    name: 'edgeport_workers_tail_sockets_closed_total',
    help: 'Tail sockets ended, by reason (slow_reader: closed with 1008 for leaving too much unread; protocol_error: 1002/1007; message_too_big: 1009).',
    labelNames: ['reason'],
    registers,
  });
  metrics.beforeScrape(() => {
    buffered.set(tails.bufferedBytes);
    closed.reset();
    for (const cause of CLOSE_CAUSES) closed.labels(cause).inc(tails.socketsClosed[cause]);
  });
}
