/**
 * `edgeport start`: loads edgeport.toml (+ env + flags), opens the store and the control plane on
 * the data dir (after crash recovery), creates the bootstrap credentials on first start (printed
 * once), starts the scripts of `[[scripts]]`, puts every service behind its port and prints one
 * line per listener, then `; ready`. SIGTERM or SIGINT drains the listeners, delivers spooled log
 * lines (bounded), then closes the services and the stores.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createApiService, ensureBootstrapAccount } from '../api/index.ts';
import { systemClock } from '../core/clock.ts';
import { ScryptThread } from '../core/crypto/scrypt-thread.ts';
import { createLogger } from '../core/log.ts';
import type { ServiceHandle } from '../core/service.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { openControlStore } from '../db/open-control-store.ts';
import { PgDatabase, redact } from '../db/postgres/pg-database.ts';
import { createEdgeService, parseRoutePattern, type EdgeScript } from '../edge/index.ts';
import { createGatewayService } from '../gateway/index.ts';
import { LogPipeline } from '../logs/log-pipeline.ts';
import { parseScriptConfig, loadScriptConfig, startScriptHost, type ScriptConfig } from '../runtime/index.ts';
import type { ObjectEngine } from '../store/engine/object-engine.ts';
import { openStoreEngine } from '../store/engine/open-store-engine.ts';
import { AccessKeys, createS3Handler } from '../store/s3/index.ts';
import type { StartArgs } from './args.ts';
import { listen } from './listener.ts';
import { onShutdownSignal } from './shutdown.ts';

interface PlannedListener {
  label: string;
  port: number;
  /** Path appended to the listener's URL in the banner. */
  path: string;
  handle: ServiceHandle;
}

export async function runStart(args: StartArgs): Promise<void> {
  const configFile = args.config ?? (existsSync('edgeport.toml') ? 'edgeport.toml' : undefined);
  const config = loadConfig({ file: configFile, flags: args.flags });
  const scripts = loadScripts(config, configFile);
  const logger = createLogger(config.logLevel);
  const clock = systemClock;
  // `[db] url`: every instance's metadata and control plane in one PostgreSQL database.
  const database = config.dbUrl === undefined ? undefined : await openDatabase(config.dbUrl, clock.now());
  // Closed in reverse order of opening.
  const closers: Array<() => Promise<void>> = database ? [() => database.close()] : [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.splice(0).reverse()) {
      await close().catch((error: unknown) => logger.error({ err: error }, 'Shutdown step failed'));
    }
  };
  let engine: ObjectEngine;
  try {
    engine = await openStoreEngine({
      dataDir: config.dataDir, clock, logger, recover: true, maintenance: true, backgroundCheckpoints: true,
      blobsUrl: config.blobsUrl, ...(database ? { database } : {}),
    });
  } catch (error) {
    await closeAll();
    throw error;
  }
  closers.push(() => engine.close());
  try {
    const control = await openControlStore({ dataDir: config.dataDir, clock, autoCheckpoint: false, ...(database ? { database } : {}) });
    closers.push(() => control.close());
    // API-key hashes (bootstrap, authentication) run on their own thread, never on libuv's pool.
    const scrypt = new ScryptThread({ maxQueued: config.auth.maxQueuedHashes });
    closers.push(() => scrypt.close());
    const newAccount = await ensureBootstrapAccount(control, process.env, { scrypt, clock });
    const accessKeys = new AccessKeys(engine.metadata, clock);
    const newS3Key = await accessKeys.ensureBootstrap(process.env);

    const pipeline = new LogPipeline({
      dataDir: config.dataDir, jobs: control, engine, clock, logger,
      maxIntervalMs: config.logs.maxBatchIntervalMs, shutdownDeadlineMs: config.logs.shutdownDeliveryMs,
    });
    closers.push(() => pipeline.close());
    pipeline.start();
    const edgeScripts = await startScripts(scripts, config, engine, logger, closers);
    const gateway = await createGatewayService({ networks: config.gateway, clock, logger, dataDir: config.dataDir });
    const listenerUrls: Record<string, string> = {};
    const listeners: PlannedListener[] = [
      { label: 'edge', port: config.ports.edge, path: '', handle: createEdgeService({ zones: control, pipeline, scripts: edgeScripts, clock, logger }) },
      {
        label: 'management API', port: config.ports.api, path: '/client/v4',
        handle: await createApiService({
          control, accessKeys, clock, logger, store: engine, auth: config.auth, scrypt,
          gateway: { networks: () => gateway.networks(), url: () => listenerUrls.gateway },
        }),
      },
      { label: 'gateway', port: config.ports.gateway, path: '/v1/<network>', handle: gateway },
      {
        label: 'S3-compatible API', port: config.ports.s3, path: '',
        handle: {
          handler: createS3Handler({
            engine, secrets: (id) => accessKeys.secretFor(id), clock, logger,
            failureLimits: { windowMs: config.auth.failureWindowMs, maxPerAddress: config.auth.maxFailuresPerAddress, maxPerIdentity: config.auth.maxFailuresPerIdentity },
          }),
          close: async () => {},
        },
      },
    ];
    const banner: string[] = [];
    for (const planned of listeners) {
      closers.push(() => planned.handle.close());
      const listener = await listen(planned.handle.handler, config.host, planned.port, planned.label);
      // Listeners close first on shutdown (drain), before the services behind them.
      closers.push(() => listener.close());
      listenerUrls[planned.label] = listener.url;
      banner.push(`edgeport: ${planned.label} at ${listener.url}${planned.path}`);
    }
    banner.push(`edgeport: dashboard at ${listenerUrls['management API']}/`);
    for (const script of edgeScripts) banner.push(`edgeport: script ${JSON.stringify(script.name)} on ${script.routes.join(', ')}`);
    banner.push(...gateway.banner);
    if (newAccount) {
      banner.push('edgeport: created the first account (key shown once; set EDGEPORT_ADMIN_EMAIL / EDGEPORT_ADMIN_KEY to choose it):');
      banner.push(`  X-Auth-Email: ${newAccount.email}`);
      banner.push(`  X-Auth-Key:   ${newAccount.key}`);
    }
    if (newS3Key) {
      banner.push('edgeport: created the S3 access key (shown once; set EDGEPORT_S3_ACCESS_KEY_ID / EDGEPORT_S3_SECRET_ACCESS_KEY to choose it):');
      banner.push(`  access key id:     ${newS3Key.accessKeyId}`);
      banner.push(`  secret access key: ${newS3Key.secretAccessKey}`);
    }
    if (database) banner.push(`edgeport: metadata in PostgreSQL at ${redact(config.dbUrl!)} (schema ${database.schema})`);
    if (config.blobsUrl !== undefined) banner.push(`edgeport: object bodies in ${config.blobsUrl.replace(/(secret-access-key=)[^&]*/, '$1***')}`);
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

/** The PostgreSQL database of `[db] url`; a failure names the URL without its password. */
async function openDatabase(url: string, now: number): Promise<PgDatabase> {
  try {
    return await PgDatabase.open({ url, now });
  } catch (error) {
    throw new ConfigError(`[db] url (EDGEPORT_DB_URL): ${(error as Error).message}`, { cause: error });
  }
}

/** `[[scripts]]`: inline script configs or `{ path }` references, relative to edgeport.toml; routes checked. */
function loadScripts(config: Readonly<Config>, configFile: string | undefined): ScriptConfig[] {
  const baseDir = configFile ? dirname(resolve(configFile)) : process.cwd();
  return config.scripts.map((entry, index) => {
    const script = typeof entry.path === 'string' && Object.keys(entry).length === 1
      ? loadScriptConfig(resolve(baseDir, entry.path))
      : parseScriptConfig(entry, { baseDir, source: `scripts[${index}] of ${configFile ?? 'the config'}` });
    if (script.routes.length === 0) throw new ConfigError(`Script ${JSON.stringify(script.name)} has no routes: add routes such as ["example.test/api/*"] so the edge can reach it.`);
    for (const route of script.routes) {
      try {
        parseRoutePattern(route);
      } catch (error) {
        throw new ConfigError(`Script ${JSON.stringify(script.name)}: ${(error as Error).message}`);
      }
    }
    return script as ScriptConfig;
  });
}

async function startScripts(scripts: readonly ScriptConfig[], config: Readonly<Config>, engine: ObjectEngine,
  logger: ReturnType<typeof createLogger>, closers: Array<() => Promise<void>>): Promise<EdgeScript[]> {
  const started: EdgeScript[] = [];
  for (const script of scripts) {
    // Workers open their own connections to the same store: the data dir, or `[db]` and `[blobs]`.
    const host = await startScriptHost({ script, dataDir: config.dataDir, blobsUrl: config.blobsUrl, dbUrl: config.dbUrl, logger, engine });
    closers.push(() => host.close());
    started.push({ name: script.name, routes: script.routes, host });
  }
  return started;
}
