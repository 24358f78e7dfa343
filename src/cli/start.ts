/**
 * `edgeport start`: loads edgeport.toml (+ env + flags), locks the data dir (one process per dir:
 * a second start refuses before touching anything), loads the secrets key and seals or checks the
 * database's secrets with it (secrets-key.ts), opens the store and the control plane on it
 * (after crash recovery), creates the bootstrap credentials on first start (printed once), starts
 * the scripts of `[[scripts]]`, puts every service behind its port and prints the banner
 * (banner.ts). SIGTERM or SIGINT drains the listeners, delivers spooled log lines (bounded), then
 * closes the services and the stores, and releases the lock.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createApiService, ensureBootstrapAccount, type BootstrapOutcome } from '../api/index.ts';
import { Counter, Gauge } from 'prom-client';
import { systemClock } from '../core/clock.ts';
import type { SecretBox } from '../core/crypto/secret-box.ts';
import { ScryptThread } from '../core/crypto/scrypt-thread.ts';
import { createLogger } from '../core/log.ts';
import { Metrics } from '../core/metrics.ts';
import type { ServiceHandle } from '../core/service.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import type { ControlStore } from '../db/control-store.ts';
import { openControlStore } from '../db/open-control-store.ts';
import { BucketDomains } from '../db/public-buckets/bucket-domains.ts';
import { openRegistryDriver, openScriptRegistry } from '../db/scripts/script-registry-drivers.ts';
import { DeployedScripts } from '../edge/deployed-scripts.ts';
import { registerTailMetrics } from '../edge/tail-metrics.ts';
import { TailSessions } from '../edge/tail-sessions.ts';
import { tailUpgradeHandler } from '../api/workers/worker-tail-routes.ts';
import { startUploadedHost, trialStarter } from '../runtime/uploaded-script.ts';
import { TrialQueue } from '../runtime/trial-queue.ts';
import { IsolatePool } from '../runtime/workerd/isolate-pool.ts';
import type { PgDatabase } from '../db/postgres/pg-database.ts';
import { createEdgeService, OriginPolicy, parseRoutePattern, type EdgeScript, type ListenerAddress } from '../edge/index.ts';
import { isAtOrUnder, routeReachesPlatform } from '../edge/platform-hosts.ts';
import { createGatewayService } from '../gateway/index.ts';
import { FileRoots, registerLogMetrics } from '../logs/index.ts';
import { LogPipeline } from '../logs/log-pipeline.ts';
import { parseScriptConfig, loadScriptConfig, startScriptHost, type ScriptConfig } from '../runtime/index.ts';
import { adoptUnowned } from '../store/engine/adopt-unowned.ts';
import { registerLifecycleMetrics } from '../store/engine/lifecycle-metrics.ts';
import { LifecycleSweeper } from '../store/engine/lifecycle-sweeper.ts';
import type { ObjectEngine } from '../store/engine/object-engine.ts';
import { openStoreEngine } from '../store/engine/open-store-engine.ts';
import { publicBucketHosts } from '../store/public/public-bucket-hosts.ts';
import { AccessKeys, createS3Listener, type BootstrapKey } from '../store/s3/index.ts';
import type { StartArgs } from './args.ts';
import { formatBanner, type S3KeyNote, type SignIn } from './banner.ts';
import { optionHint } from './commands.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { recoverInterruptedRestore } from './restore-swap.ts';
import { logSecretsEvents, openSecrets } from './secrets-key.ts';
import type { Surface } from './listener-errors.ts';
import { listen } from './listener.ts';
import { onShutdownSignal } from './shutdown.ts';
import { VERSION } from './version.ts';
import { DiskGuard } from '../core/fs/disk-guard.ts';
import { cachedCheck, type ReadinessChecks } from '../api/health/health-routes.ts';
import { registerHealthMetrics } from '../api/health/health-metrics.ts';
import { guardDiskWrites } from '../store/engine/disk-guarded-writes.ts';
import { removeStaleScratchDirs } from '../runtime/workerd/scratch-dirs.ts';

interface PlannedListener {
  label: string;
  /** The flag that sets its port, named when the port is taken. */
  flag: 'edge-port' | 'api-port' | 'gateway-port' | 's3-port';
  port: number;
  /** Path appended to the listener's URL in the banner. */
  path: string;
  handle: ServiceHandle;
  /** Whose error shape the listener's own refusals (limits, load shedding) use. */
  surface: Surface;
  /** Paths never shed under load. */
  unshedPaths?: readonly string[];
  /** The handler answers `Expect: 100-continue` itself (ListenOptions.handlesExpectContinue). */
  handlesExpectContinue?: boolean;
}

export async function runStart(args: StartArgs): Promise<void> {
  const configFile = args.config ?? (existsSync('edgeport.toml') ? 'edgeport.toml' : undefined);
  const config = loadConfig({ file: configFile, flags: args.flags });
  const scripts = loadScripts(config, configFile);
  // Before anything reads or writes the data dir (or migrates a database): a second process refuses here.
  const lock = lockDataDir(config.dataDir, { flagHint: optionHint('start', 'data-dir') });
  const logger = createLogger(config.logLevel);
  // Scratch dirs of workerd hosts a killed process left (operations.md): gone at start, not at the first script's.
  const staleScratch = await removeStaleScratchDirs();
  if (staleScratch.length > 0) logger.info({ removed: staleScratch.length }, 'Removed the workerd scratch dirs of processes that are gone.');
  const clock = systemClock;
  // Closed in reverse order of opening; the lock is released last.
  const closers: Array<() => Promise<void>> = [async () => lock.release()];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.splice(0).reverse()) {
      await close().catch((error: unknown) => logger.error({ err: error }, 'Shutdown step failed'));
    }
  };
  let engine: ObjectEngine;
  let database: PgDatabase | undefined;
  let secrets: SecretBox;
  try {
    // A restore killed while swapping its data in: the previous data goes back before anything reads it.
    if (await recoverInterruptedRestore(config.dataDir))
      logger.warn({ dataDir: config.dataDir }, 'A restore was cut short while swapping its data in; the previous data is back in place.');
    // `[db] url`: every instance's metadata and control plane in one PostgreSQL database.
    database = config.dbUrl === undefined ? undefined : await openDatabase(config.dbUrl, clock.now(), config.backends.dbTimeoutMs);
    if (database) closers.push(() => database!.close());
    // Before any store opens: the database's secrets are sealed with this key (secrets-key.ts), and another key is refused here.
    const opened = await openSecrets(config, database, clock.now());
    logSecretsEvents(logger, opened.events);
    secrets = opened.box;
    engine = await openStoreEngine({
      dataDir: config.dataDir,
      clock,
      logger,
      recover: true,
      maintenance: true,
      backgroundCheckpoints: true,
      blobsUrl: config.blobsUrl,
      blobsTimeoutMs: config.backends.blobsTimeoutMs,
      quotas: config.quotas,
      secrets,
      ...(database ? { database } : {}),
    });
  } catch (error) {
    await closeAll();
    throw error;
  }
  closers.push(() => engine.close());
  try {
    // The data dir's free space: writes refused below the floor, deletes let through with the reserve
    // (only where the store keeps data there: SQLite or blob files); /readyz and /metrics report it.
    const holdsStore = config.dbUrl === undefined || config.blobsUrl === undefined;
    const disk = await DiskGuard.open({
      dir: config.dataDir,
      minFreeBytes: config.backends.disk.minFreeBytes,
      reserveBytes: holdsStore ? config.backends.disk.reserveBytes : 0,
      logger,
    });
    closers.push(async () => disk.close());
    if (holdsStore) guardDiskWrites(engine, disk);
    const control = await openControlStore({ dataDir: config.dataDir, clock, autoCheckpoint: false, secrets, ...(database ? { database } : {}) });
    closers.push(() => control.close());
    // API-key hashes (bootstrap, authentication) run on their own thread, never on libuv's pool.
    const scrypt = new ScryptThread({ maxQueued: config.auth.maxQueuedHashes });
    closers.push(() => scrypt.close());
    const signIn = await ensureBootstrapAccount(control, process.env, { scrypt, clock });
    const operator = (await control.firstAccount())!;
    await adoptForOperator(engine, operator.id, logger);
    const accessKeys = new AccessKeys(engine.metadata, clock);
    const s3Key = await accessKeys.ensureBootstrap(process.env, operator.id);

    // edgeport's own listeners, never another account's origin or log destination: the configured
    // ports at once, the ports picked for port 0 as each listener binds.
    const ownListeners: ListenerAddress[] = Object.values(config.ports)
      .filter((port) => port !== 0)
      .map((port) => ({ host: config.host, port }));
    const originPolicy = new OriginPolicy({
      allowPrivateOrigins: config.edge.allowPrivateOrigins,
      operatorAccountId: async () => (await control.firstAccount())?.id ?? null,
      ownListeners: () => ownListeners,
    });
    // file:// log destinations: below [logs] file_roots only, never in the data dir.
    const fileRoots = new FileRoots({ roots: config.logs.fileRoots, dataDir: config.dataDir, rootsClaimable: config.logs.fileRootsClaimable });
    const pipeline = new LogPipeline({
      dataDir: config.dataDir,
      jobs: control,
      engine,
      clock,
      logger,
      fileRoots,
      outboundGuard: (accountId) => originPolicy.guardFor(accountId),
      maxIntervalMs: config.logs.maxBatchIntervalMs,
      shutdownDeadlineMs: config.logs.shutdownDeliveryMs,
      maxJobSpoolBytes: config.logs.maxJobSpoolBytes,
      maxTotalSpoolBytes: config.logs.maxTotalSpoolBytes,
      pauseAfterFailingMs: config.logs.pauseAfterFailingMs,
    });
    closers.push(() => pipeline.close());
    pipeline.start();
    // One set of Prometheus metrics for every service, at /metrics on the API's port.
    const metrics = new Metrics();
    registerLogMetrics(metrics, pipeline);
    // What /readyz and /metrics check: the database answers, the blob store takes a write and its
    // delete (an s3:// store at most every 10 s, every 2 s while failing; local files every second),
    // the data dir has room.
    const readiness: ReadinessChecks = {
      database: async () => {
        await control.countAccounts();
      },
      blobs: cachedCheck(() => engine.checkBlobStore(), config.blobsUrl?.startsWith('s3:') ? { okMs: 10_000, failMs: 2_000 } : { okMs: 1_000, failMs: 0 }),
      disk: async () => {
        const state = await disk.state();
        if (state.full)
          throw new Error(
            `disk space: ${mib(state.freeBytes)} free under the data dir, writes refused below [disk] min_free_bytes (${mib(state.minFreeBytes)})`,
          );
      },
    };
    registerHealthMetrics(metrics, readiness, disk);
    // Every script runs as an isolate in its account's workerd process (the configured ones in one of their own).
    const pool = new IsolatePool({ logger, limits: poolLimits(config) });
    closers.push(() => pool.close());
    registerPoolMetrics(metrics, pool);
    // Buckets' lifecycle rules: one instance of a deployment sweeps at a time (a lease in the metadata store).
    const lifecycle = new LifecycleSweeper({ meta: engine.metadata, clock, logger });
    lifecycle.start(config.store.lifecycleIntervalMs);
    closers.push(() => lifecycle.stop());
    registerLifecycleMetrics(metrics, lifecycle);
    const edgeScripts = await startScripts(scripts, await scriptAccounts(scripts, control, operator.id), config, engine, logger, closers, pool);
    // Scripts accounts deploy through the API: served once started, and reloaded when any instance changes them.
    const registry = openScriptRegistry({ dataDir: config.dataDir, clock, quotas: config.quotas, secrets, ...(database ? { database } : {}) });
    closers.push(() => registry.close());
    const hostDeps = { engine, dataDir: config.dataDir, logger, limits: { cpuMs: config.workers.scriptCpuMs, memoryMb: config.workers.scriptMemoryMb } };
    // `wrangler tail` sessions: this instance's requests, sent to the sockets opened on this instance's API.
    const tails = new TailSessions();
    const deployed = new DeployedScripts({
      registry,
      devDomain: config.workers.devDomain,
      logger,
      maxRunning: config.workers.maxRunning,
      idleStopMs: config.workers.idleStopMs,
      now: () => clock.now(),
      start: (runnable, tailed) =>
        startUploadedHost(runnable, {
          ...hostDeps,
          pool,
          ...(tailed ? { tail: tails.target(runnable.version.accountId, runnable.version.script, runnable.version.id) } : {}),
        }),
      tailed: (accountId, script) => tails.watching(accountId, script),
    });
    tails.onChange(() => deployed.tailsChanged());
    registerTailMetrics(metrics, tails);
    const runningScripts = new Gauge({
      name: 'edgeport_workers_running_scripts',
      help: 'Deployed scripts running in workerd on this instance (each started by its first request, stopped when idle).',
      registers: [metrics.registry],
    });
    metrics.beforeScrape(() => runningScripts.set(deployed.runningCount));
    closers.push(() => deployed.close());
    await deployed.start();
    const workers = {
      registry,
      tryStart: trialStarter(hostDeps, new TrialQueue(config.workers.uploadTrials)),
      maxScriptsPerAccount: config.workers.maxScriptsPerAccount,
      maxRoutesPerZone: config.workers.maxRoutesPerZone,
      devDomain: config.workers.devDomain,
      tails,
    };
    // Public buckets: managed URLs under [r2] public_domain and custom domains on zones, served by the edge.
    const dev = config.workers.devDomain;
    const pub = config.r2.publicDomain;
    if (dev !== null && pub !== null && (isAtOrUnder(dev, pub) || isAtOrUnder(pub, dev))) {
      throw new ConfigError(
        `[r2] public_domain (${pub}) and [workers] dev_domain (${dev}) overlap: the edge could not tell a public bucket's host from a script's; give them domains apart, such as r2.localhost and workers.localhost.`,
      );
    }
    const bucketDomains = new BucketDomains(openRegistryDriver({ dataDir: config.dataDir, clock, ...(database ? { database } : {}) }), clock);
    closers.push(() => bucketDomains.close());
    const publicBuckets = publicBucketHosts({ domains: bucketDomains, engine, publicDomain: config.r2.publicDomain, now: () => clock.now() });
    const gateway = await createGatewayService({ networks: config.gateway, clock, logger, dataDir: config.dataDir });
    metrics.include(gateway.metrics.registry, () => gateway.prepareMetrics());
    const listenerUrls: Record<string, string> = {};
    const listeners: PlannedListener[] = [
      {
        label: 'edge',
        flag: 'edge-port',
        port: config.ports.edge,
        path: '',
        surface: 'edge',
        handle: createEdgeService({
          zones: control,
          pipeline,
          scripts: edgeScripts,
          deployed,
          publicBuckets,
          clock,
          logger,
          originPolicy,
          listeners: { api: () => listenerUrls['management API'], gateway: () => listenerUrls.gateway },
          metrics,
        }),
      },
      {
        // Probes and metrics stay answerable while the server sheds load.
        label: 'management API',
        flag: 'api-port',
        port: config.ports.api,
        path: '/client/v4',
        surface: 'api',
        unshedPaths: ['/healthz', '/readyz', '/metrics'],
        handle: await createApiService({
          control,
          accessKeys,
          clock,
          logger,
          store: engine,
          originPolicy,
          fileRoots,
          auth: config.auth,
          scrypt,
          gateway: { networks: () => gateway.networks(), url: () => listenerUrls.gateway },
          s3: { url: () => listenerUrls['S3-compatible API'] },
          metrics,
          workers,
          publicBuckets: { domains: bucketDomains, publicDomain: config.r2.publicDomain },
          readiness,
        }),
      },
      // Its metrics stay readable while the server sheds load.
      {
        label: 'gateway',
        flag: 'gateway-port',
        port: config.ports.gateway,
        path: '/v1/<network>',
        surface: 'gateway',
        unshedPaths: ['/metrics'],
        handle: gateway,
      },
      {
        // Uploads are authenticated before their client is told to send the body.
        label: 'S3-compatible API',
        flag: 's3-port',
        port: config.ports.s3,
        path: '',
        surface: 's3',
        handlesExpectContinue: true,
        handle: {
          handler: createS3Listener({
            engine,
            keys: (id) => accessKeys.keyFor(id),
            clock,
            logger,
            dashboard: () => listenerUrls['management API'],
            failureLimits: {
              windowMs: config.auth.failureWindowMs,
              maxPerAddress: config.auth.maxFailuresPerAddress,
              maxPerIdentity: config.auth.maxFailuresPerIdentity,
            },
          }),
          close: async () => {},
        },
      },
    ];
    const shown: Array<{ label: string; url: string }> = [];
    for (const planned of listeners) {
      closers.push(() => planned.handle.close());
      const listener = await listen(metrics.instrumentRequests(planned.handle.handler, planned.surface), config.host, planned.port, planned.label, {
        surface: planned.surface,
        limits: config.limits,
        logger,
        portHint: optionHint('start', planned.flag),
        ...(planned.unshedPaths ? { unshedPaths: planned.unshedPaths } : {}),
        ...(planned.handlesExpectContinue ? { handlesExpectContinue: true } : {}),
        ...(planned.surface === 'api' ? { onUpgrade: tailUpgradeHandler(tails) } : {}),
      });
      ownListeners.push({ host: config.host, port: listener.port });
      // Listeners close first on shutdown (drain), before the services behind them.
      closers.push(() => listener.close());
      listenerUrls[planned.label] = listener.url;
      shown.push({ label: planned.label, url: `${listener.url}${planned.path}` });
      if (planned.label === 'management API') shown.push({ label: 'dashboard', url: `${listener.url}/` });
    }
    // Tails are closed (a close frame each) before the listeners drain, as they wait for their sockets.
    closers.push(async () => tails.closeAll());
    // Before the banner: once a user (or a script) sees "ready", Ctrl-C and SIGTERM stop cleanly.
    onShutdownSignal(async () => {
      logger.info('Shutting down');
      await closeAll();
    });
    process.stdout.write(
      formatBanner(
        {
          version: VERSION,
          dataDir: config.dataDir,
          listeners: shown,
          scripts: edgeScripts.map(({ name, routes }) => ({ name, routes })),
          signIn: signInNote(signIn, operator.email),
          accountsCommand: accountsCommand(configFile, args),
          s3Key: s3KeyNote(s3Key),
          accessKeysUrl: `${listenerUrls['management API']}/client/v4/accounts/${operator.id}/store/access-keys`,
          devChain: gateway.banner,
          storage: [
            ...(database ? [`metadata in PostgreSQL at ${database.where} (schema ${database.schema})`] : []),
            ...(config.blobsUrl === undefined ? [] : [`object bodies in ${config.blobsUrl.replace(/(secret-access-key=)[^&]*/, '$1***')}`]),
          ],
        },
        { tty: process.stdout.isTTY === true },
      ),
    );
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** Each account's share of the instance and the cap on account processes (`[workers]`). */
function poolLimits(config: Readonly<Config>) {
  const { workers } = config;
  return {
    maxProcesses: workers.maxAccountProcesses,
    account: {
      maxIsolates: workers.maxRunningPerAccount,
      maxRequests: workers.maxRequestsPerAccount,
      queueMs: workers.accountQueueMs,
      memoryBytes: workers.accountMemoryMb * 1024 * 1024,
    },
  };
}

/** The pool's counts at /metrics: totals only, never an account or a script in a label. */
function registerPoolMetrics(metrics: Metrics, pool: IsolatePool): void {
  const gauges = {
    processes: new Gauge({
      name: 'edgeport_workers_account_processes',
      help: 'Account workerd processes running on this instance (one per account with running scripts, one for the configured scripts).',
      registers: [metrics.registry],
    }),
    isolates: new Gauge({ name: 'edgeport_workers_isolates', help: 'Scripts loaded as isolates in the account processes.', registers: [metrics.registry] }),
    inflight: new Gauge({ name: 'edgeport_workers_requests_in_flight', help: 'Requests in flight in the account processes.', registers: [metrics.registry] }),
  };
  const refused = new Counter({
    name: 'edgeport_workers_refused_requests_total',
    help: "Requests refused for an account's share (requests in flight, scripts loaded) or the instance's (account processes).",
    labelNames: ['reason'],
    registers: [metrics.registry],
  });
  const seen = { 'account-requests': 0, 'account-scripts': 0, unavailable: 0 };
  const reasons = { 'account-requests': 'account_requests', 'account-scripts': 'account_scripts', unavailable: 'processes' } as const;
  metrics.beforeScrape(() => {
    const stats = pool.stats();
    gauges.processes.set(stats.processes);
    gauges.isolates.set(stats.isolates);
    gauges.inflight.set(stats.inflight);
    for (const key of Object.keys(seen) as Array<keyof typeof seen>) {
      refused.inc({ reason: reasons[key] }, stats.refused[key] - seen[key]);
      seen[key] = stats.refused[key];
    }
  });
}

/** How the operator signs in: with the credentials this start generated, those of EDGEPORT_ADMIN_EMAIL / KEY, or those of an earlier start. */
function signInNote(outcome: BootstrapOutcome, operatorEmail: string): SignIn {
  if (outcome.kind === 'generated') return { kind: 'created', email: outcome.email, key: outcome.key };
  if (outcome.kind === 'kept') return { kind: 'existing', email: operatorEmail };
  const changed = outcome.previousEmail !== null || outcome.keyChanged ? { previousEmail: outcome.previousEmail, key: outcome.keyChanged } : undefined;
  return { kind: 'given', email: outcome.email, ...(changed ? { changed } : {}) };
}

function s3KeyNote(outcome: BootstrapKey): S3KeyNote {
  if (outcome.kind === 'generated') return { kind: 'created', accessKeyId: outcome.accessKeyId, secretAccessKey: outcome.secretAccessKey };
  if (outcome.kind === 'given') return { kind: 'given', accessKeyId: outcome.accessKeyId, replaced: outcome.replaced };
  return { kind: 'existing' };
}

/** `edgeport accounts create <email>`, with the flags that reach this server's database. */
function accountsCommand(configFile: string | undefined, args: StartArgs): string {
  return [
    'edgeport accounts create <email>',
    ...(configFile === undefined ? [] : [`--config ${configFile}`]),
    ...(args.flags.data_dir === undefined ? [] : [`--data-dir ${args.flags.data_dir}`]),
  ].join(' ');
}

/**
 * The PostgreSQL database of `[db] url`; a failure names the URL without its password. pg is loaded
 * only here: a start on the embedded SQLite default never pays for it.
 */
async function openDatabase(url: string, now: number, timeoutMs: number): Promise<PgDatabase> {
  try {
    const { PgDatabase } = await import('../db/postgres/pg-database.ts');
    return await PgDatabase.open({ url, now, timeoutMs });
  } catch (error) {
    throw new ConfigError(`[db] url (EDGEPORT_DB_URL): ${(error as Error).message}`, { cause: error });
  }
}

/** A `[[scripts]]` entry: the script's config, and the account whose buckets it binds (e-mail or id; default the first account). */
interface ServerScript {
  script: ScriptConfig;
  account: string | undefined;
}

/** Buckets and S3 keys of no account become the first account's (adopt-unowned.ts). */
async function adoptForOperator(engine: ObjectEngine, accountId: string, logger: ReturnType<typeof createLogger>): Promise<void> {
  const { buckets, conflicts, accessKeys } = await adoptUnowned(engine.metadata, accountId);
  if (buckets.length > 0 || accessKeys > 0) logger.info({ buckets, accessKeys }, 'The first account adopted buckets and S3 keys of no account.');
  if (conflicts.length > 0) {
    logger.warn({ buckets: conflicts }, 'Buckets of no account were left as they are: the first account already has buckets of these names.');
  }
}

/** The account id of each script: `account` names one by e-mail or id; absent, the first account's. */
async function scriptAccounts(scripts: readonly ServerScript[], control: ControlStore, operatorId: string): Promise<string[]> {
  const ids: string[] = [];
  for (const { script, account } of scripts) {
    if (account === undefined) {
      ids.push(operatorId);
      continue;
    }
    const found = /^[0-9a-f]{32}$/.test(account) ? await control.getAccount(account) : await control.findAccountByEmail(account);
    if (!found) {
      throw new ConfigError(
        `Script ${JSON.stringify(script.name)}: account ${JSON.stringify(account)} does not exist: name an account by its e-mail or id (edgeport accounts create <email> makes one), or leave account out for the first account.`,
      );
    }
    ids.push(found.id);
  }
  return ids;
}

/** `[[scripts]]`: inline script configs or `{ path }` references, relative to edgeport.toml, each with an optional `account`; routes checked. */
function loadScripts(config: Readonly<Config>, configFile: string | undefined): ServerScript[] {
  const baseDir = configFile ? dirname(resolve(configFile)) : process.cwd();
  return config.scripts.map((raw, index) => {
    const { account, ...entry } = raw;
    const source = `scripts[${index}] of ${configFile ?? 'the config'}`;
    if (account !== undefined && (typeof account !== 'string' || account === '')) {
      throw new ConfigError(`${source}: account must be the e-mail or id of an account.`);
    }
    const script =
      typeof entry.path === 'string' && Object.keys(entry).length === 1
        ? loadScriptConfig(resolve(baseDir, entry.path))
        : parseScriptConfig(entry, { baseDir, source });
    if (script.routes.length === 0)
      throw new ConfigError(`Script ${JSON.stringify(script.name)} has no routes: add routes such as ["example.test/api/*"] so the edge can reach it.`);
    for (const route of script.routes) {
      let parsed;
      try {
        parsed = parseRoutePattern(route);
      } catch (error) {
        throw new ConfigError(`Script ${JSON.stringify(script.name)}: ${(error as Error).message}`);
      }
      const { devDomain } = config.workers;
      if (routeReachesPlatform(parsed, devDomain)) {
        throw new ConfigError(
          `Script ${JSON.stringify(script.name)}: route ${JSON.stringify(route)} would match hosts of ${devDomain} ([workers] dev_domain), which serve deployed scripts at <script>.<account subdomain>.${devDomain}: route another host, or set [workers] dev_domain to another domain ("" for none).`,
        );
      }
      const { publicDomain } = config.r2;
      if (routeReachesPlatform(parsed, publicDomain)) {
        throw new ConfigError(
          `Script ${JSON.stringify(script.name)}: route ${JSON.stringify(route)} would match hosts of ${publicDomain} ([r2] public_domain), which serve public buckets at <public id>.${publicDomain}: route another host, or set [r2] public_domain to another domain ("" for none).`,
        );
      }
    }
    return { script: script as ScriptConfig, account };
  });
}

async function startScripts(
  scripts: readonly ServerScript[],
  accounts: readonly string[],
  config: Readonly<Config>,
  engine: ObjectEngine,
  logger: ReturnType<typeof createLogger>,
  closers: Array<() => Promise<void>>,
  pool: IsolatePool,
): Promise<EdgeScript[]> {
  const started: EdgeScript[] = [];
  for (const [index, { script }] of scripts.entries()) {
    // The configured scripts share a workerd process of their own, apart from every account's deployed ones.
    const host = await startScriptHost({
      script,
      accountId: accounts[index]!,
      dataDir: config.dataDir,
      blobsUrl: config.blobsUrl,
      dbUrl: config.dbUrl,
      logger,
      engine,
      pool: { pool, tenant: 'config', name: 'configured scripts' },
    });
    closers.push(() => host.close());
    started.push({ name: script.name, routes: script.routes, host, accountId: accounts[index]! });
  }
  return started;
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
