/**
 * `edgeport start`: loads edgeport.toml (+ env + flags), opens the store on the data dir (after
 * crash recovery), creates the bootstrap credentials on first start (printed once), puts every
 * service behind its port and prints one line per listener. SIGTERM or SIGINT drains the
 * listeners, then closes the services and the store.
 */
import { systemClock } from '../core/clock.ts';
import { createLogger } from '../core/log.ts';
import type { ServiceHandle } from '../core/service.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { openStoreEngine } from '../store/engine/open-store-engine.ts';
import { AccessKeys, createS3Handler } from '../store/s3/index.ts';
import type { StartArgs } from './args.ts';
import { listen, type Listener } from './listener.ts';
import { onShutdownSignal } from './shutdown.ts';

interface PlannedService {
  label: string;
  port: number;
  /** Path appended to the listener's URL in the banner. */
  path: string;
  handle: ServiceHandle;
}

export async function runStart(args: StartArgs): Promise<void> {
  const config = loadConfig({ file: args.config, flags: args.flags });
  refuseUnbuiltBackends(config);
  const logger = createLogger(config.logLevel);
  const clock = systemClock;
  const engine = await openStoreEngine({
    dataDir: config.dataDir, clock, logger, recover: true, maintenance: true, backgroundCheckpoints: true,
  });
  const closers: Array<() => Promise<void>> = [() => engine.close()];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  try {
    const accessKeys = new AccessKeys(engine.metadata, clock);
    const newS3Key = await accessKeys.ensureBootstrap(process.env);
    const services: PlannedService[] = [
      {
        label: 'S3-compatible API', port: config.ports.s3, path: '',
        handle: { handler: createS3Handler({ engine, secrets: (id) => accessKeys.secretFor(id), clock, logger }), close: async () => {} },
      },
    ];
    const banner: string[] = [];
    for (const service of services) {
      closers.push(() => service.handle.close());
      const listener: Listener = await listen(service.handle.handler, config.host, service.port, service.label);
      closers.push(() => listener.close());
      banner.push(`edgeport: ${service.label} at ${listener.url}${service.path}`);
    }
    if (newS3Key) {
      banner.push('edgeport: created the S3 access key (shown once; set EDGEPORT_S3_ACCESS_KEY_ID / EDGEPORT_S3_SECRET_ACCESS_KEY to choose it):');
      banner.push(`  access key id:     ${newS3Key.accessKeyId}`);
      banner.push(`  secret access key: ${newS3Key.secretAccessKey}`);
    }
    banner.push(`edgeport: data in ${config.dataDir}; ready`);
    process.stdout.write(`${banner.join('\n')}\n`);
  } catch (error) {
    await closeAll();
    throw error;
  }
  onShutdownSignal(async () => {
    logger.info('Shutting down');
    await closeAll();
  });
}

/** Scale-out backends (issue 7) are configured but not built yet: say so rather than ignore them. */
function refuseUnbuiltBackends(config: Readonly<Config>): void {
  const given = [config.dbUrl && '[db] url (EDGEPORT_DB_URL)', config.blobsUrl && '[blobs] url (EDGEPORT_BLOBS_URL)'].filter(Boolean);
  if (given.length > 0) {
    throw new ConfigError(`${given.join(' and ')} ${given.length > 1 ? 'are' : 'is'} not supported yet: edgeport runs on SQLite and local disk in the data dir. Remove ${given.length > 1 ? 'them' : 'it'} to start.`);
  }
}
