/**
 * Server log lines for requests answered with a backend fault (backend-fault.ts). An outage fails
 * every request: one warn line per surface, fault and backend at most every FAULT_LOG_INTERVAL_MS,
 * saying how many more were answered so since the previous line, instead of a line per request.
 */
import type { Logger } from '../log.ts';
import type { BackendFault } from './backend-fault.ts';

export const FAULT_LOG_INTERVAL_MS = 10_000;

const last = new Map<string, { at: number; unlogged: number }>();
/** Requests answered with a fault since the process started, by `<surface> <code> <backend>` (edgeport_backend_faults_total). */
export const faultTally = new Map<string, number>();

/** Logs `fault` as the answer of a request on `surface` (edge, api, s3, binding), rate-limited per kind. */
export function noteFault(logger: Logger, surface: string, fault: BackendFault, now = Date.now()): void {
  const key = `${surface} ${fault.code} ${fault.backend}`;
  faultTally.set(key, (faultTally.get(key) ?? 0) + 1);
  const seen = last.get(key);
  if (seen && now - seen.at < FAULT_LOG_INTERVAL_MS) {
    seen.unlogged += 1;
    return;
  }
  last.set(key, { at: now, unlogged: 0 });
  logger.warn(
    {
      surface,
      code: fault.code,
      backend: fault.backend,
      err: fault,
      ...(seen?.unlogged ? { sinceLastLine: seen.unlogged } : {}),
    },
    'Request answered with a backend fault: a backend is down, too slow or full; clients were told to retry.',
  );
}
