/**
 * The server config (`edgeport.toml`), its zod schema (the source of truth), and the conversion of
 * its snake_case keys into the camelCase `Config` the services receive. Unknown keys are errors.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { DEFAULTS } from './defaults.ts';
import { gatewaySectionSchema, toGatewayConfig, type GatewayConfig } from './gateway.ts';
import { limitsSectionSchema, toListenerLimits, type ListenerLimits } from './limits.ts';
import { quotasSectionSchema, toAccountQuotas, type AccountQuotas } from './quotas.ts';
import { blobsSectionSchema, dbSectionSchema, diskSectionSchema, toBackendsConfig, type BackendsConfig } from './backends.ts';

const port = z.number().int().min(0).max(65535);

export const configFileSchema = z.strictObject({
  data_dir: z.string().min(1).optional(),
  host: z.string().min(1).optional(),
  log_level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).optional(),
  ports: z
    .strictObject({
      edge: port.optional(),
      api: port.optional(),
      gateway: port.optional(),
      s3: port.optional(),
    })
    .optional(),
  db: dbSectionSchema.optional(),
  blobs: blobsSectionSchema.optional(),
  disk: diskSectionSchema.optional(),
  gateway: gatewaySectionSchema.optional(),
  edge: z
    .strictObject({
      /** Every account's zones may use loopback, private and link-local origins (otherwise only the operator's). */
      allow_private_origins: z.boolean().optional(),
    })
    .optional(),
  limits: limitsSectionSchema.optional(),
  /** The object store's background work. */
  store: z
    .strictObject({
      /** How often buckets' lifecycle rules are applied (a sweep cut into passes runs on until done, then waits this long). */
      lifecycle_interval_ms: z.number().int().min(100).max(86_400_000).optional(),
    })
    .optional(),
  /** What each account may store, and the versions kept per script. */
  quotas: quotasSectionSchema.optional(),
  /** Scripts accounts deploy through the API (`/accounts/<id>/workers/...`). */
  workers: z
    .strictObject({
      max_scripts_per_account: z.number().int().min(0).max(100_000).optional(),
      max_routes_per_zone: z.number().int().min(0).max(1_000_000).optional(),
      /** The domain under which `<script>.<account subdomain>.<dev_domain>` serves each script; "" turns it off. */
      dev_domain: z
        .string()
        .regex(
          /^$|^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/,
          'must be a lower-case domain name such as workers.localhost, or "" for none',
        )
        .optional(),
      /** Deployed scripts running at once on this instance (each an isolate in its account's workerd process). */
      max_running: z.number().int().min(1).max(100_000).optional(),
      /** A deployed script idle this long is stopped (its next request starts it again); 0: never. */
      idle_stop_ms: z.number().int().min(0).max(604_800_000).optional(),
      /** Account workerd processes running at once on this instance. */
      max_account_processes: z.number().int().min(1).max(10_000).optional(),
      /** An account's scripts loaded at once in its process. */
      max_running_per_account: z.number().int().min(1).max(100_000).optional(),
      /** An account's requests in flight at once; as many more wait up to account_queue_ms. */
      max_requests_per_account: z.number().int().min(1).max(1_000_000).optional(),
      account_queue_ms: z.number().int().min(0).max(600_000).optional(),
      /** An account process's resident memory limit. */
      account_memory_mb: z.number().int().min(64).max(1_048_576).optional(),
      /** How long a deployed script may hold its process's thread without yielding. */
      script_cpu_ms: z.number().int().min(10).max(3_600_000).optional(),
      /** V8's heap limit of a deployed script's isolate. */
      script_memory_mb: z.number().int().min(16).max(65_536).optional(),
      /** Script uploads tried in workerd at once (each a workerd process until it started, or its CPU limit). */
      max_upload_trials: z.number().int().min(1).max(256).optional(),
      /** An account's uploads tried at once. */
      max_upload_trials_per_account: z.number().int().min(1).max(256).optional(),
      /** Uploads waiting for a trial, all accounts together; past it `503 / 971`. */
      max_upload_trials_waiting: z.number().int().min(0).max(100_000).optional(),
      /** An account's uploads waiting for a trial; past it `429 / 971`. */
      max_upload_trials_waiting_per_account: z.number().int().min(0).max(100_000).optional(),
    })
    .optional(),
  /** Public buckets (`/accounts/<id>/r2/buckets/<name>/domains/...`). */
  r2: z
    .strictObject({
      /** The domain under which `<public id>.<public_domain>` serves each bucket whose managed public URL is on; "" turns them off. */
      public_domain: z
        .string()
        .regex(/^$|^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'must be a lower-case domain name such as r2.localhost, or "" for none')
        .optional(),
    })
    .optional(),
  auth: z
    .strictObject({
      /** The window the failure counts below are per (a failure is forgotten after window / max). */
      failure_window_ms: z.number().int().min(1_000).max(86_400_000).optional(),
      max_failures_per_address: z.number().int().min(1).max(1_000_000).optional(),
      max_failures_per_identity: z.number().int().min(1).max(1_000_000).optional(),
      max_queued_hashes: z.number().int().min(1).max(10_000).optional(),
      max_sessions_per_account: z.number().int().min(1).max(100_000).optional(),
      /** API tokens (`/user/tokens`) an account may hold. */
      max_tokens_per_account: z.number().int().min(1).max(10_000).optional(),
    })
    .optional(),
  logs: z
    .strictObject({
      /** Upper bound on how long a spooled log line waits for its batch (the job's own max_upload_interval_seconds, 30-300 s, applies when shorter). */
      max_batch_interval_ms: z.number().int().min(10).max(300_000).optional(),
      /** How long a clean shutdown may spend delivering spooled log lines. */
      shutdown_delivery_ms: z.number().int().min(0).max(600_000).optional(),
      /** The only directories file:// log destinations may point below (never inside the data dir but for its log-files folder); [] turns file:// off. */
      file_roots: z
        .array(
          z
            .string()
            .min(1)
            .refine((path) => path.startsWith('/'), 'each file root must be an absolute path')
            .refine((path) => !path.split('/').some((segment) => segment === '..' || segment === '.'), 'a file root may not contain "." or ".." segments'),
        )
        .max(64)
        .optional(),
      /** true lets one account claim a whole file root (a destination may then be the root itself). */
      file_roots_claimable: z.boolean().optional(),
      /** Undelivered lines one job's spool may hold; beyond, new lines are dropped and counted on the job. */
      max_job_spool_bytes: z
        .number()
        .int()
        .min(65_536)
        .max(2 ** 40)
        .optional(),
      /** Undelivered lines all jobs' spools may hold together. */
      max_total_spool_bytes: z
        .number()
        .int()
        .min(65_536)
        .max(2 ** 44)
        .optional(),
      /** A job whose destination has failed this long without a success is paused (takes no new lines until a delivery succeeds). */
      pause_after_failing_ms: z.number().int().min(1_000).max(86_400_000).optional(),
    })
    .optional(),
  /**
   * The key that seals secrets kept in the database (src/db/secrets): `key` (the base64 of 32
   * bytes; EDGEPORT_SECRETS_KEY) when given, else the file `key_file` holds it in
   * (EDGEPORT_SECRETS_KEY_FILE), else `<data_dir>/secrets.key`, made at the first start on SQLite.
   */
  secrets: z
    .strictObject({
      key: z
        .string()
        .regex(/^\s*[A-Za-z0-9+/]{43}=\s*$/, 'must be the base64 of 32 random bytes, such as the output of: head -c 32 /dev/urandom | base64')
        .optional(),
      key_file: z.string().min(1).optional(),
    })
    .optional(),
  scripts: z.array(z.union([z.strictObject({ path: z.string().min(1) }), z.record(z.string(), z.unknown())])).optional(),
});

export type ConfigFile = z.infer<typeof configFileSchema>;

export interface Config {
  dataDir: string;
  host: string;
  logLevel: string;
  ports: { edge: number; api: number; gateway: number; s3: number };
  /** Metadata database URL; undefined means SQLite in the data dir. */
  dbUrl: string | undefined;
  /** Blob store URL; undefined means the data dir's `blobs/`. */
  blobsUrl: string | undefined;
  /** Script configs, inline tables or `{ path }` references (validated by src/runtime). */
  scripts: ReadonlyArray<Record<string, unknown>>;
  /** The JSON-RPC gateway's networks and limits (`[gateway]`, src/config/gateway.ts). */
  gateway: GatewayConfig;
  /** `[edge]`: whether every account's zones may use non-public origins (src/edge/origin-policy.ts). */
  edge: { allowPrivateOrigins: boolean };
  /** `[workers]`: limits of deployed scripts and their dev domain (null: none). */
  workers: WorkersConfig;
  /** `[r2]`: the domain of buckets' managed public URLs (null: none). */
  r2: { publicDomain: string | null };
  logs: {
    maxBatchIntervalMs: number;
    shutdownDeliveryMs: number;
    fileRoots: readonly string[];
    fileRootsClaimable: boolean;
    maxJobSpoolBytes: number;
    maxTotalSpoolBytes: number;
    pauseAfterFailingMs: number;
  };
  /** What every listener allows a client (`[limits]`, src/config/limits.ts). */
  limits: ListenerLimits;
  /** `[store]`: how often lifecycle rules are applied. */
  store: { lifecycleIntervalMs: number };
  /** What each account may store (`[quotas]`, src/config/quotas.ts). */
  quotas: AccountQuotas;
  /** Deadlines of the database and the blob store, and the data dir's free-space floor (`[db]`, `[blobs]`, `[disk]`, src/config/backends.ts). */
  backends: BackendsConfig;
  /** Failed-credential limits, the API-key hash queue and sessions per account (`[auth]`). */
  auth: AuthConfig;
  /** `[secrets]`: the secrets key itself (base64), or the file holding it; neither: `<dataDir>/secrets.key`. */
  secrets: { key: string | undefined; keyFile: string | undefined };
}

/** `[workers]`: limits of deployed scripts, their dev domain (null: none) and each account's share of the instance. */
export interface WorkersConfig {
  maxScriptsPerAccount: number;
  maxRoutesPerZone: number;
  devDomain: string | null;
  maxRunning: number;
  idleStopMs: number;
  maxAccountProcesses: number;
  maxRunningPerAccount: number;
  maxRequestsPerAccount: number;
  accountQueueMs: number;
  accountMemoryMb: number;
  scriptCpuMs: number;
  scriptMemoryMb: number;
  uploadTrials: UploadTrialLimits;
}

/**
 * Who may try a script upload in workerd, and when (src/runtime/trial-queue.ts): at most `running`
 * trials at once, `runningPerAccount` of one account; `waitingPerAccount` more of an account's
 * waiting, `waiting` in all.
 */
export interface UploadTrialLimits {
  running: number;
  runningPerAccount: number;
  waitingPerAccount: number;
  waiting: number;
}

export interface AuthConfig {
  failureWindowMs: number;
  maxFailuresPerAddress: number;
  maxFailuresPerIdentity: number;
  maxQueuedHashes: number;
  maxSessionsPerAccount: number;
  maxTokensPerAccount: number;
}

/** Fills defaults into a validated file (defaults and validation are separate steps). */
export function toConfig(file: ConfigFile): Config {
  return {
    dataDir: file.data_dir ?? DEFAULTS.dataDir,
    host: file.host ?? DEFAULTS.host,
    logLevel: file.log_level ?? DEFAULTS.logLevel,
    ports: { edge: DEFAULTS.ports.edge, api: DEFAULTS.ports.api, gateway: DEFAULTS.ports.gateway, s3: DEFAULTS.ports.s3, ...file.ports },
    dbUrl: file.db?.url,
    blobsUrl: file.blobs?.url,
    secrets: { key: file.secrets?.key, keyFile: file.secrets?.key_file },
    scripts: file.scripts ?? [],
    gateway: toGatewayConfig(file.gateway),
    edge: { allowPrivateOrigins: file.edge?.allow_private_origins ?? DEFAULTS.edge.allowPrivateOrigins },
    limits: toListenerLimits(file.limits),
    store: { lifecycleIntervalMs: file.store?.lifecycle_interval_ms ?? DEFAULTS.store.lifecycleIntervalMs },
    quotas: toAccountQuotas(file.quotas),
    backends: toBackendsConfig(file.db, file.blobs, file.disk),
    workers: {
      maxScriptsPerAccount: file.workers?.max_scripts_per_account ?? DEFAULTS.workers.maxScriptsPerAccount,
      maxRoutesPerZone: file.workers?.max_routes_per_zone ?? DEFAULTS.workers.maxRoutesPerZone,
      devDomain: file.workers?.dev_domain === undefined ? DEFAULTS.workers.devDomain : file.workers.dev_domain || null,
      maxRunning: file.workers?.max_running ?? DEFAULTS.workers.maxRunning,
      idleStopMs: file.workers?.idle_stop_ms ?? DEFAULTS.workers.idleStopMs,
      maxAccountProcesses: file.workers?.max_account_processes ?? DEFAULTS.workers.maxAccountProcesses,
      maxRunningPerAccount: file.workers?.max_running_per_account ?? DEFAULTS.workers.maxRunningPerAccount,
      maxRequestsPerAccount: file.workers?.max_requests_per_account ?? DEFAULTS.workers.maxRequestsPerAccount,
      accountQueueMs: file.workers?.account_queue_ms ?? DEFAULTS.workers.accountQueueMs,
      accountMemoryMb: file.workers?.account_memory_mb ?? DEFAULTS.workers.accountMemoryMb,
      scriptCpuMs: file.workers?.script_cpu_ms ?? DEFAULTS.workers.scriptCpuMs,
      scriptMemoryMb: file.workers?.script_memory_mb ?? DEFAULTS.workers.scriptMemoryMb,
      uploadTrials: {
        running: file.workers?.max_upload_trials ?? DEFAULTS.workers.uploadTrials.running,
        runningPerAccount: file.workers?.max_upload_trials_per_account ?? DEFAULTS.workers.uploadTrials.runningPerAccount,
        waiting: file.workers?.max_upload_trials_waiting ?? DEFAULTS.workers.uploadTrials.waiting,
        waitingPerAccount: file.workers?.max_upload_trials_waiting_per_account ?? DEFAULTS.workers.uploadTrials.waitingPerAccount,
      },
    },
    r2: { publicDomain: file.r2?.public_domain === undefined ? DEFAULTS.r2.publicDomain : file.r2.public_domain || null },
    auth: {
      failureWindowMs: file.auth?.failure_window_ms ?? DEFAULTS.auth.failureWindowMs,
      maxFailuresPerAddress: file.auth?.max_failures_per_address ?? DEFAULTS.auth.maxFailuresPerAddress,
      maxFailuresPerIdentity: file.auth?.max_failures_per_identity ?? DEFAULTS.auth.maxFailuresPerIdentity,
      maxQueuedHashes: file.auth?.max_queued_hashes ?? DEFAULTS.auth.maxQueuedHashes,
      maxSessionsPerAccount: file.auth?.max_sessions_per_account ?? DEFAULTS.auth.maxSessionsPerAccount,
      maxTokensPerAccount: file.auth?.max_tokens_per_account ?? DEFAULTS.auth.maxTokensPerAccount,
    },
    logs: {
      maxBatchIntervalMs: file.logs?.max_batch_interval_ms ?? DEFAULTS.logs.maxBatchIntervalMs,
      shutdownDeliveryMs: file.logs?.shutdown_delivery_ms ?? DEFAULTS.logs.shutdownDeliveryMs,
      fileRoots: file.logs?.file_roots ?? [resolve(file.data_dir ?? DEFAULTS.dataDir, DEFAULTS.logs.fileRootInDataDir)],
      fileRootsClaimable: file.logs?.file_roots_claimable ?? DEFAULTS.logs.fileRootsClaimable,
      maxJobSpoolBytes: file.logs?.max_job_spool_bytes ?? DEFAULTS.logs.maxJobSpoolBytes,
      maxTotalSpoolBytes: file.logs?.max_total_spool_bytes ?? DEFAULTS.logs.maxTotalSpoolBytes,
      pauseAfterFailingMs: file.logs?.pause_after_failing_ms ?? DEFAULTS.logs.pauseAfterFailingMs,
    },
  };
}
