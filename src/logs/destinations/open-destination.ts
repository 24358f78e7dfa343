/** Builds the destination of a destination_conf (parsed by destination-conf.ts, the API's parser too). */
import type { OutboundGuard } from '../../core/net/outbound-guard.ts';
import type { StoreEngine } from '../../store/engine/store-engine.ts';
import { DestinationError, type LogDestination } from './destination.ts';
import { fixedPath, parseDestination } from './destination-conf.ts';
import { fileDestination } from './file-destination.ts';
import type { FileRoots } from './file-roots.ts';
import { httpsDestination } from './https-destination.ts';
import { s3Destination } from './s3-destination.ts';
import { storeDestination } from './store-destination.ts';

/** An s3:// batch not answered within this fails and is retried (as an https:// POST's, https-destination.ts). */
const S3_TIMEOUT_MS = 30_000;

export interface OpenedDestination {
  destination: LogDestination;
  /** The path inside the destination under which batches are named (may hold `{DATE}`). */
  path: string;
}

/**
 * `roots` bounds where file:// destinations write (checked on every write); `guard` where s3:// and
 * http(s):// destinations connect (null: anywhere, for the operator's jobs).
 */
export function openDestination(conf: string, engine: StoreEngine, roots: FileRoots, guard: OutboundGuard | null = null): OpenedDestination {
  const parsed = parseDestination(conf);
  if (!parsed.ok) throw new DestinationError(`destination_conf is not usable: ${parsed.reason}`);
  const destination = parsed.destination;
  switch (destination.scheme) {
    case 'file': {
      // Files go below the fixed part of the path; from the first {DATE} segment on, it names batches.
      const directory = fixedPath(destination.directory) || '/';
      return { destination: fileDestination(directory, roots), path: destination.directory.slice(directory.length) };
    }
    case 'store':
      return { destination: storeDestination(engine, destination.bucket), path: destination.prefix };
    case 's3':
      return {
        destination: s3Destination({
          bucket: destination.bucket,
          region: destination.region,
          endpoint: destination.endpoint ?? undefined,
          accessKeyId: destination.accessKeyId,
          secretAccessKey: destination.secretAccessKey,
          guard,
          timeoutMs: S3_TIMEOUT_MS,
        }),
        path: destination.prefix,
      };
    case 'http':
    case 'https':
      return { destination: httpsDestination(destination.url, destination.headers, guard), path: '' };
  }
}
