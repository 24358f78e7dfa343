/**
 * Runs a clean shutdown once on SIGTERM or SIGINT, then exits 0. A second signal a while later (a
 * user pressing Ctrl-C again) exits at once with 1. A repeat that arrives within REPEAT_MS is the
 * same Ctrl-C delivered twice: a terminal signals the whole process group, and `npm start` then
 * forwards the same SIGINT to its child again; it must not cut the clean shutdown short.
 */

const REPEAT_MS = 1_000;

export function onShutdownSignal(shutdown: (signal: NodeJS.Signals) => Promise<void>): void {
  let stoppingSince: number | undefined;
  const handle = (signal: NodeJS.Signals): void => {
    if (stoppingSince !== undefined) {
      if (performance.now() - stoppingSince < REPEAT_MS) return;
      process.exit(1);
    }
    stoppingSince = performance.now();
    shutdown(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`edgeport: shutdown failed: ${(error as Error).stack ?? String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
