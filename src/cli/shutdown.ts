/** Runs a clean shutdown once on SIGTERM or SIGINT; a second signal exits at once. */

export function onShutdownSignal(shutdown: (signal: NodeJS.Signals) => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1);
    stopping = true;
    shutdown(signal).then(() => process.exit(0), (error: unknown) => {
      console.error(`edgeport: shutdown failed: ${(error as Error).stack ?? String(error)}`);
      process.exit(1);
    });
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
