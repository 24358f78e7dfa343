/** `file:///dir/path`: batches become files under the directory (written to a temp name, then renamed). */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DestinationError, type DeliveredBatch, type LogDestination } from './destination.ts';

export function fileDestination(directory: string): LogDestination {
  return {
    async write(batch: DeliveredBatch): Promise<void> {
      const target = join(directory, batch.name);
      const tmp = `${target}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        await mkdir(dirname(target), { recursive: true });
        await writeFile(tmp, batch.gzipped);
        await rename(tmp, target);
      } catch (error) {
        throw new DestinationError(`could not write ${target}: ${(error as Error).message}`);
      }
    },
  };
}
