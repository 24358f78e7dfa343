/**
 * What a serving process (`edgeport start`, `edgeport dev`) does with a fault no request handler
 * caught: an unhandled promise rejection or an uncaught exception is logged at error level, with
 * its stack, and the process keeps serving. Node's default (exit 1) would let one bad request end
 * every service for every account. Keeping on is safe here because no request's state outlives
 * it in memory: what a request changes is committed in one database transaction (a put's blob is
 * written before the row that makes it visible), so a request that failed half-way leaves nothing
 * visible behind, and the other requests never shared its state. Each such fault is a bug: the log
 * line says so, and it is counted so a flood of them shows in the log as it happens.
 */
import type { Logger } from '../core/log.ts';

let installed = false;

/** Installs the handlers once per process (a second call does nothing). */
export function keepServingOnFaults(logger: Logger): void {
  if (installed) return;
  installed = true;
  let faults = 0;
  process.on('unhandledRejection', (reason: unknown) => {
    faults += 1;
    logger.error(
      { err: reason, event: 'UnhandledRejection', faults },
      'A promise was rejected and nothing handled it (a bug in edgeport); the process keeps serving.',
    );
  });
  process.on('uncaughtException', (error: Error, origin: string) => {
    faults += 1;
    logger.error(
      { err: error, event: 'UncaughtException', origin, faults },
      'An exception reached the top of the event loop (a bug in edgeport); the process keeps serving.',
    );
  });
}
