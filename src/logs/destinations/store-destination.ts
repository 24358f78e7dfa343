/** `store://<bucket>/<path>`: batches become objects in this server's own object store. */
import type { StoreEngine } from '../../store/engine/store-engine.ts';
import { DestinationError, type DeliveredBatch, type LogDestination } from './destination.ts';

export function storeDestination(engine: StoreEngine, bucket: string): LogDestination {
  return {
    async write(batch: DeliveredBatch): Promise<void> {
      try {
        await engine.put(bucket, batch.name, batch.gzipped, { httpMetadata: { contentType: batch.contentType, contentEncoding: 'gzip' } });
      } catch (error) {
        throw new DestinationError(`could not write to store bucket ${JSON.stringify(bucket)}: ${(error as Error).message}`);
      }
    },
  };
}
