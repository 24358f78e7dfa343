/** Reading what log jobs delivered, for end-to-end tests: gzipped NDJSON batches in a directory tree. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';

/** Every NDJSON line of every gzipped batch. */
export function gunzipLines<Line>(buffers: readonly Buffer[]): Line[] {
  return buffers.flatMap((b) =>
    gunzipSync(b)
      .toString()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Line),
  );
}

/** Every line of every `*.log.gz` below `directory` (none when it does not exist yet). */
export function fileLines<Line>(directory: string): Line[] {
  const buffers: Buffer[] = [];
  const walk = (at: string): void => {
    if (!existsSync(at)) return;
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(at, entry.name));
      else if (entry.name.endsWith('.log.gz')) buffers.push(readFileSync(join(at, entry.name)));
    }
  };
  walk(directory);
  return gunzipLines(buffers);
}

/** Polls `read` every 100 ms until `done` holds, or fails naming `what`. */
export async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
