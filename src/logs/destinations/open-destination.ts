/** Builds the destination of a destination_conf (the schemes edgeport delivers to). */
import type { StoreEngine } from '../../store/engine/store-engine.ts';
import { DestinationError, type LogDestination } from './destination.ts';
import { fileDestination } from './file-destination.ts';
import { httpsDestination } from './https-destination.ts';
import { s3Destination } from './s3-destination.ts';
import { storeDestination } from './store-destination.ts';

export interface OpenedDestination {
  destination: LogDestination;
  /** The path inside the destination under which batches are named. */
  path: string;
}

export function openDestination(conf: string, engine: StoreEngine): OpenedDestination {
  let url: URL;
  try {
    url = new URL(conf);
  } catch {
    throw new DestinationError(`destination_conf ${JSON.stringify(conf)} is not a URL`);
  }
  switch (url.protocol) {
    case 'file:': {
      // The directory is the path up to the first segment holding {DATE}; the rest names batches.
      const segments = decodeURIComponent(url.pathname).split('/');
      const dated = segments.findIndex((segment) => segment.includes('{DATE}'));
      const directory = dated < 0 ? segments.join('/') : segments.slice(0, dated).join('/') || '/';
      return { destination: fileDestination(directory), path: dated < 0 ? '' : segments.slice(dated).join('/') };
    }
    case 'store:':
      return { destination: storeDestination(engine, url.hostname), path: decodeURIComponent(url.pathname) };
    case 's3:':
      return {
        destination: s3Destination({
          bucket: url.hostname,
          region: url.searchParams.get('region') ?? 'auto',
          endpoint: url.searchParams.get('endpoint') ?? undefined,
          accessKeyId: url.searchParams.get('access-key-id') ?? undefined,
          secretAccessKey: url.searchParams.get('secret-access-key') ?? undefined,
        }),
        path: decodeURIComponent(url.pathname),
      };
    case 'https:':
    case 'http:':
      return { destination: httpsDestination(url), path: '' };
    default:
      throw new DestinationError(`destination scheme ${url.protocol.replace(':', '')} is not supported: use file://, store://, s3://, https:// or http://`);
  }
}
