/**
 * The log pipeline of a server: the edge hands it each `http_requests` record with the zone's
 * enabled jobs; every job filters, samples and formats the record and appends it to its own
 * durable spool before the response ends. Shippers cut batches from the spools (by records, bytes
 * and age: the job's max_upload_* or the real service's defaults), gzip them, deliver them and
 * report last_complete / last_error / error_message through the job's status. Failures retry with
 * exponential backoff; a restart delivers what was spooled (and first removes the temporary file a
 * killed file:// delivery left); close() delivers what is spooled, within a deadline. A deleted or
 * disabled job's spool is removed and ships nothing: at once when the control store announces the
 * change (onZoneChange), else at the shipper's next look. A batch is on disk at its destination (for
 * file://, fsynced) before the spool's cursor moves past it.
 *
 * Bounded (a destination that never answers must not fill the disk): each job's spool and all of
 * them together are capped (`[logs] max_job_spool_bytes`, `max_total_spool_bytes`); a line that does
 * not fit is dropped at once, never waited for, and counted on the job (error_message, last_error).
 * A job whose destination has failed without a success for `pauseAfterFailingMs` is paused: it
 * takes no new lines (each one dropped and counted) while its spool is retried with backoff (at
 * most a minute apart, or at once when the job is updated); the first success resumes it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip as gzipCallback, constants as zlib } from 'node:zlib';
import type { Clock } from '../core/clock.ts';
import { DEFAULTS } from '../config/defaults.ts';
import { backendFaultOf } from '../core/errors/backend-fault.ts';
import { within } from '../core/within.ts';
import type { Logger } from '../core/log.ts';
import { randomHexId } from '../core/ids.ts';
import type { LogJobRecord } from '../db/control-store.ts';
import type { OutboundGuard } from '../core/net/outbound-guard.ts';
import { accountStore } from '../store/engine/account-store.ts';
import type { StoreEngine } from '../store/engine/store-engine.ts';
import { DestinationError } from './destinations/destination.ts';
import { batchObjectName } from './destinations/object-names.ts';
import { FileRoots } from './destinations/file-roots.ts';
import { openDestination } from './destinations/open-destination.ts';
import { evaluateFilter } from './filter/evaluate-filter.ts';
import { parseFilter, type FilterExpression } from './filter/parse-filter.ts';
import { createRecordFormatter, type RecordFormatter } from './format/record-formatter.ts';
import type { HttpRequestRecord } from './http-request-record.ts';
import { isSampled } from './sampling.ts';
import { DeliveryNote } from './spool/delivery-note.ts';
import { JobSpool, type SpoolBatch } from './spool/job-spool.ts';
import { SpoolBudget } from './spool/spool-budget.ts';

const gzip = promisify(gzipCallback);

/** The real service's batch limits when a job sets none. */
export const BATCH_DEFAULTS = { maxRecords: 100_000, maxBytes: 100_000_000, intervalMs: 30_000 } as const;
const TICK_MS = 200;
const IDLE_CHECK_MS = 5_000;
/** Retries after a failure of any kind: 0.5 s, doubling, at most 60 s apart (docs/edge-and-logs.md). */
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 60_000;
/** A destination's write that has not ended by then fails (each kind has a shorter deadline of its own; this bounds them all). */
const DELIVERY_DEADLINE_MS = 120_000;
/** Dropped lines are written to the job's status at most this often (the API shows the count). */
const DROP_REPORT_MS = 1_000;

/** What the pipeline needs of the control plane (ControlStore implements it). */
export interface LogJobSource {
  listEnabledJobs(zoneId: string): Promise<LogJobRecord[]>;
  getJob(zoneId: string, jobId: number): Promise<LogJobRecord | null>;
  /** The account that holds the zone (a store:// destination names a bucket of that account), or null. */
  zoneAccount(zoneId: string): Promise<string | null>;
  setJobStatus(jobId: number, status: Pick<LogJobRecord, 'lastComplete' | 'lastError' | 'errorMessage'>): Promise<void>;
  /** Called after each committed change to jobs (a deleted job's spool is removed at once). */
  onZoneChange?(listener: () => void): void;
}

export interface LogPipelineOptions {
  dataDir: string;
  jobs: LogJobSource;
  /** For `store://` destinations: each job writes into its zone's account's buckets only. */
  engine: StoreEngine;
  /** Where `file://` destinations may write (`[logs] file_roots`); without it they are refused. */
  fileRoots?: FileRoots;
  /**
   * Where an account's s3:// and http(s):// destinations may connect (the edge's origin policy:
   * null for the operator, anywhere); without it, anywhere.
   */
  outboundGuard?: (accountId: string) => Promise<OutboundGuard | null>;
  clock: Clock;
  logger: Logger;
  /** Ships a batch once its oldest record is this old, if the job allows sooner (default 30 s). */
  maxIntervalMs?: number;
  /** How long close() may spend delivering what is spooled (default 10 s). */
  shutdownDeadlineMs?: number;
  /** Bytes one job's spool may hold on disk (default 64 MiB). */
  maxJobSpoolBytes?: number;
  /** Bytes all spools may hold together (default 1 GiB). */
  maxTotalSpoolBytes?: number;
  /** A job failing this long without a success is paused (default 5 minutes). */
  pauseAfterFailingMs?: number;
}

/** A job as the request path uses it: parsed filter, formatter and spool, for one job version. */
export interface ActiveLogJob {
  readonly id: number;
  readonly version: number;
  readonly filter: FilterExpression | null;
  readonly sampleRate: number;
  readonly formatter: RecordFormatter;
  readonly shipper: Shipper;
}

interface Shipper {
  jobId: number;
  zoneId: string;
  spool: JobSpool;
  /** The temporary file a file:// delivery of this job is writing. */
  note: DeliveryNote;
  /** Records appended since the last delivery (this process). */
  appended: number;
  pendingSince: number | null;
  busy: boolean;
  attempts: number;
  retryAt: number;
  lastCheck: number;
  /** The job version (modified) last seen: an update retries a failing job at once. */
  version: number | null;
  /** Since when deliveries have failed without a success (null: the last one succeeded). */
  failingSince: number | null;
  /** The newest failure's message. */
  failure: string | null;
  /** What the failures are about (the destination, the database, the disk...), logged once per change; null while delivering. */
  failingKind: string | null;
  /** Failing for pauseAfterFailingMs: new lines are dropped until a delivery succeeds. */
  paused: boolean;
  /** Lines dropped while paused (the spool counts those it had no room for). */
  pausedDrops: number;
  /** Drops not yet cleared by a clean success: the count before them, the first's and the newest's time, and why. */
  drops: { before: number; since: number; last: number; paused: boolean; full: boolean; disk: boolean } | null;
  /** The drop count last written to the job's status. */
  reportedDrops: number;
  lastReport: number;
  /** A drop report is being written. */
  reporting: boolean;
  /** Lines taken into the spool, lines delivered, and lines of batches whose delivery failed (to be retried), by this process. */
  spooledLines: number;
  shippedLines: number;
  failedLines: number;
}

/** One job's delivery as this process saw it since it started (the metrics' source). */
export interface LogJobDeliveryStats {
  jobId: number;
  /** Lines the job took (past its filter and sampling) into its spool. */
  spooledLines: number;
  shippedLines: number;
  failedLines: number;
  droppedLines: number;
  spooledBytes: number;
}

export class LogPipeline {
  readonly #options: LogPipelineOptions;
  /** `<data dir>/logs`: the job spools' folder (`jobs/`) and the edge's held records (held-records-file.ts). */
  readonly logsDir: string;
  readonly #root: string;
  /** Names this data dir's batches apart from other instances' batches of the same job. */
  readonly #instanceId: string;
  readonly #fileRoots: FileRoots;
  readonly #shippers = new Map<number, Shipper>();
  readonly #active = new Map<number, ActiveLogJob>();
  readonly #destinations = new Map<string, ReturnType<typeof openDestination>>();
  #timer: NodeJS.Timeout | null = null;
  readonly #dirty = new Set<JobSpool>();
  #afterFlush: Array<() => void> = [];
  #flushScheduled = false;
  #closed = false;
  readonly #budget: SpoolBudget;
  readonly #maxJobSpoolBytes: number;
  readonly #pauseAfterMs: number;
  #reconciling: Promise<void> | null = null;
  /** Jobs whose spool could not be made, said once each. */
  readonly #unspoolable = new Set<number>();
  /** Spool writes are failing (a full disk): logged when it begins and when it ends. */
  #spoolFailing = false;
  #reconcileAgain = false;

  constructor(options: LogPipelineOptions) {
    this.#options = options;
    this.#fileRoots = options.fileRoots ?? FileRoots.none();
    this.#budget = new SpoolBudget(options.maxTotalSpoolBytes ?? DEFAULTS.logs.maxTotalSpoolBytes);
    this.#maxJobSpoolBytes = options.maxJobSpoolBytes ?? DEFAULTS.logs.maxJobSpoolBytes;
    this.#pauseAfterMs = options.pauseAfterFailingMs ?? DEFAULTS.logs.pauseAfterFailingMs;
    this.logsDir = join(options.dataDir, 'logs');
    this.#root = join(this.logsDir, 'jobs');
    mkdirSync(this.#root, { recursive: true });
    this.#instanceId = instanceId(this.logsDir);
    // Spools left by an earlier run are delivered first.
    for (const name of readdirSync(this.#root)) {
      const marker = join(this.#root, name, 'job.json');
      if (!/^\d+$/.test(name) || !existsSync(marker)) continue;
      const { zoneId } = JSON.parse(readFileSync(marker, 'utf8')) as { zoneId: string };
      this.#sweepTempFile(join(this.#root, name));
      this.#register(Number(name), zoneId).pendingSince = 0;
    }
    options.jobs.onZoneChange?.(() => this.#scheduleReconcile());
  }

  /** Bytes all spools hold on disk now. */
  get spooledBytes(): number {
    return this.#budget.usedBytes;
  }

  /** Each job's delivery counts since this process started (jobs deleted meanwhile are gone). */
  deliveryStats(): LogJobDeliveryStats[] {
    return [...this.#shippers.values()].map((shipper) => ({
      jobId: shipper.jobId,
      spooledLines: shipper.spooledLines,
      shippedLines: shipper.shippedLines,
      failedLines: shipper.failedLines,
      droppedLines: this.#dropCount(shipper),
      spooledBytes: shipper.spool.diskBytes,
    }));
  }

  start(): void {
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
    this.#timer.unref();
  }

  /** The zone's enabled jobs, ready for `emit` (one indexed read per call; compiled once per job version). */
  async jobsFor(zoneId: string): Promise<ActiveLogJob[]> {
    const records = await this.#options.jobs.listEnabledJobs(zoneId);
    if (records.length === 0) return [];
    const jobs: ActiveLogJob[] = [];
    for (const record of records) {
      const known = this.#active.get(record.id);
      if (known && known.version === record.modified) {
        jobs.push(known);
        continue;
      }
      let job: ActiveLogJob;
      try {
        job = this.#compile(record);
      } catch (error) {
        // Its spool cannot be made (a full disk): the request is served all the same, and the job
        // gets no line until it can be; said once per job.
        if (!this.#unspoolable.has(record.id)) {
          this.#unspoolable.add(record.id);
          this.#options.logger.error({ err: error, jobId: record.id }, "Could not make a log job's spool: its lines are dropped until it can be made.");
        }
        continue;
      }
      this.#unspoolable.delete(record.id);
      this.#active.set(record.id, job);
      jobs.push(job);
    }
    return jobs;
  }

  /**
   * Filters, samples and formats one record for each job, and writes it to the job's spool. The
   * first record of an event-loop turn is written at once; those that follow in the same turn are
   * written together at its end (one system call per spool). `written` runs once this record is in
   * the OS: the edge ends its response only then.
   */
  emit(jobs: readonly ActiveLogJob[], record: HttpRequestRecord, written?: () => void): void {
    let staged = false;
    for (const job of jobs) {
      if (job.filter !== null && !evaluateFilter(job.filter, record as unknown as Record<string, unknown>)) continue;
      if (!isSampled(record.RayID, job.sampleRate)) continue;
      const shipper = job.shipper;
      if (shipper.spool.removed) continue;
      if (shipper.paused) {
        shipper.pausedDrops += 1;
        this.#noteDrop(shipper);
        continue;
      }
      if (!shipper.spool.stage(job.formatter.format(record as unknown as Record<string, unknown>), record.EdgeStartTimestamp)) {
        this.#noteDrop(shipper);
        continue;
      }
      shipper.appended += 1;
      shipper.spooledLines += 1;
      shipper.pendingSince ??= this.#options.clock.now();
      this.#dirty.add(shipper.spool);
      staged = true;
    }
    if (!staged) {
      written?.();
      return;
    }
    if (written) this.#afterFlush.push(written);
    if (this.#flushScheduled) return;
    // The first record of a turn is written at once (one small system call, and no response waits
    // for the next turn); records that follow in the same turn are written together after it.
    this.#flushStaged();
    this.#flushScheduled = true;
    setImmediate(() => this.#flushStaged());
  }

  #flushStaged(): void {
    this.#flushScheduled = false;
    const spools = [...this.#dirty];
    const callbacks = this.#afterFlush;
    this.#dirty.clear();
    this.#afterFlush = [];
    let failure: unknown;
    for (const spool of spools) {
      const droppedBefore = spool.dropped;
      try {
        spool.flush();
      } catch (error) {
        failure = error;
        const shipper = [...this.#shippers.values()].find((candidate) => candidate.spool === spool);
        if (shipper) this.#noteDrop(shipper, spool.dropped - droppedBefore);
      }
    }
    // One line when spool writes start failing (a full disk) and one when they work again, not one per request.
    if (failure !== undefined && !this.#spoolFailing) {
      this.#spoolFailing = true;
      this.#options.logger.error(
        { err: failure },
        'Could not write log lines to the spool: they are dropped and counted on their jobs until writes work again.',
      );
    } else if (failure === undefined && spools.length > 0 && this.#spoolFailing) {
      this.#spoolFailing = false;
      this.#options.logger.info('Log lines are written to the spool again.');
    }
    for (const callback of callbacks) callback();
  }

  /** Stops the timer and delivers what is spooled, within the deadline. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#flushStaged();
    const deadline = Date.now() + (this.#options.shutdownDeadlineMs ?? 10_000);
    await Promise.all(
      [...this.#shippers.values()].map(async (shipper) => {
        while (Date.now() < deadline && (shipper.spool.pendingBytes > 0 || shipper.busy)) {
          if (shipper.busy) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            continue;
          }
          if (!(await this.#ship(shipper, true))) break;
        }
      }),
    );
    for (const shipper of this.#shippers.values()) shipper.spool.close();
    for (const { destination } of this.#destinations.values()) await destination.close?.();
  }

  #compile(record: LogJobRecord): ActiveLogJob {
    let filter: FilterExpression | null = null;
    if (record.filter !== null && record.filter.trim() !== '') {
      const parsed = parseFilter(record.filter);
      // The API refuses invalid filters; one that no longer parses matches nothing rather than everything.
      filter = parsed.ok ? parsed.filter.where : { kind: 'or', clauses: [] };
    }
    return {
      id: record.id,
      version: record.modified,
      filter,
      sampleRate: record.outputOptions.sampleRate,
      formatter: createRecordFormatter(record.outputOptions),
      shipper: this.#shippers.get(record.id) ?? this.#register(record.id, record.zoneId),
    };
  }

  #register(jobId: number, zoneId: string): Shipper {
    const dir = join(this.#root, String(jobId));
    const spool = JobSpool.open(dir, { maxBytes: this.#maxJobSpoolBytes, budget: this.#budget });
    writeFileSync(join(dir, 'job.json'), JSON.stringify({ zoneId }));
    const shipper: Shipper = {
      jobId,
      zoneId,
      spool,
      note: new DeliveryNote(dir),
      appended: 0,
      pendingSince: null,
      busy: false,
      attempts: 0,
      retryAt: 0,
      lastCheck: 0,
      version: null,
      failingSince: null,
      failure: null,
      failingKind: null,
      paused: false,
      pausedDrops: 0,
      drops: null,
      reportedDrops: 0,
      lastReport: 0,
      reporting: false,
      spooledLines: 0,
      shippedLines: 0,
      failedLines: 0,
    };
    this.#shippers.set(jobId, shipper);
    return shipper;
  }

  #tick(): void {
    const now = this.#options.clock.now();
    for (const shipper of this.#shippers.values()) {
      // Also while a delivery hangs: the job shows what it drops meanwhile.
      if (!shipper.reporting && shipper.drops !== null && this.#dropCount(shipper) > shipper.reportedDrops && now - shipper.lastReport >= DROP_REPORT_MS) {
        void this.#reportDrops(shipper);
      }
      if (shipper.busy || now < shipper.retryAt) continue;
      const pending = shipper.spool.pendingBytes > 0 || shipper.spool.inflight !== null;
      if (!pending) {
        // Idle spools are checked now and then so that a deleted job's directory goes away.
        if (now - shipper.lastCheck >= IDLE_CHECK_MS) void this.#ship(shipper, false);
        continue;
      }
      void this.#ship(shipper, false);
    }
  }

  /** Delivers one batch if one is due (or `force`); resolves true when something was delivered. */
  async #ship(shipper: Shipper, force: boolean): Promise<boolean> {
    shipper.busy = true;
    const now = this.#options.clock.now();
    shipper.lastCheck = now;
    try {
      const job = await this.#options.jobs.getJob(shipper.zoneId, shipper.jobId);
      if (job === null || !job.enabled) {
        this.#drop(shipper);
        return false;
      }
      shipper.version ??= job.modified;
      // The database answers again: an idle job that failed only for it is well (a batch that fails will say so again).
      if (shipper.failingKind === 'database' && shipper.spool.inflight === null && shipper.spool.pendingBytes === 0) {
        this.#options.logger.info({ jobId: shipper.jobId }, 'Log shipping recovered: the database answers again.');
        shipper.failingKind = null;
        shipper.failingSince = null;
        shipper.failure = null;
        shipper.attempts = 0;
      }
      const limits = {
        maxRecords: job.maxUploadRecords || BATCH_DEFAULTS.maxRecords,
        maxBytes: job.maxUploadBytes || BATCH_DEFAULTS.maxBytes,
        intervalMs: Math.min((job.maxUploadIntervalSeconds || 30) * 1000, this.#options.maxIntervalMs ?? BATCH_DEFAULTS.intervalMs),
      };
      const due =
        force ||
        shipper.spool.inflight !== null ||
        shipper.appended >= limits.maxRecords ||
        shipper.spool.pendingBytes >= limits.maxBytes ||
        (shipper.pendingSince !== null && now - shipper.pendingSince >= limits.intervalMs);
      if (!due) return false;
      const batch = shipper.spool.readBatch(limits.maxRecords, limits.maxBytes);
      if (batch === null) {
        shipper.pendingSince = null;
        shipper.appended = 0;
        return false;
      }
      return await this.#deliver(job, shipper, batch);
    } catch (error) {
      // A job deleted meanwhile: its spool went away under the delivery. Anything else (the
      // database away, a full disk) backs off like a destination's failure.
      if (!shipper.spool.removed) this.#failed(shipper, error, 0);
      return false;
    } finally {
      shipper.busy = false;
    }
  }

  /** Delivers one batch; true when it was delivered, false when it failed (and is retried with backoff). */
  async #deliver(job: LogJobRecord, shipper: Shipper, batch: SpoolBatch): Promise<boolean> {
    const { clock } = this.#options;
    await shipper.spool.markInflight(batch);
    try {
      const { destination, path } = await this.#destination(job);
      const formatter = createRecordFormatter(job.outputOptions);
      const body = formatter.batchPrefix + batch.texts.join(formatter.recordDelimiter) + formatter.batchSuffix;
      const gzipped = await gzip(body, { level: zlib.Z_BEST_SPEED });
      const written = destination.write({
        name: batchObjectName(path, batch.firstTime, batch.lastTime, `${this.#instanceId}:${job.id}:${batch.start.segment}:${batch.start.offset}`),
        gzipped,
        firstTime: batch.firstTime,
        tempFiles: shipper.note,
        contentType: job.outputOptions.outputType === 'csv' ? 'text/csv' : 'application/x-ndjson',
      });
      // A write still running at its deadline is given up (its batch has a fixed name: a late write is overwritten by the retry).
      written.catch(() => undefined);
      if (
        (await within(
          written.then(() => 'done' as const),
          DELIVERY_DEADLINE_MS,
          'late' as const,
        )) === 'late'
      ) {
        throw new DestinationError(`the destination did not finish writing the batch within ${DELIVERY_DEADLINE_MS / 1000} s`);
      }
    } catch (error) {
      if (shipper.spool.removed) return false;
      this.#failed(shipper, error, batch.texts.length);
      shipper.reportedDrops = this.#dropCount(shipper);
      // The status is written when the database can take it; a failure to write it is the same outage, retried with the batch.
      await this.#options.jobs
        .setJobStatus(job.id, { lastComplete: job.lastComplete, lastError: clock.now(), errorMessage: this.#statusMessage(shipper) })
        .catch(() => undefined);
      return false;
    }
    if (shipper.spool.removed) return false;
    await shipper.spool.commit(batch);
    shipper.shippedLines += batch.texts.length;
    shipper.attempts = 0;
    shipper.retryAt = 0;
    shipper.appended = Math.max(0, shipper.appended - batch.texts.length);
    shipper.pendingSince = shipper.spool.pendingBytes > 0 ? clock.now() : null;
    if (shipper.paused) this.#options.logger.info({ jobId: job.id }, 'Log job resumed: its destination accepted a batch.');
    else if (shipper.failingKind !== null) {
      this.#options.logger.info(
        { jobId: job.id, failedForMs: clock.now() - (shipper.failingSince ?? clock.now()) },
        'Log shipping recovered: a batch was delivered.',
      );
    }
    shipper.failingSince = null;
    shipper.failure = null;
    shipper.failingKind = null;
    shipper.paused = false;
    // Drops since the last clean success stay on the job until a success with none after them.
    const drops = shipper.drops;
    shipper.reportedDrops = this.#dropCount(shipper);
    const message = this.#statusMessage(shipper);
    shipper.drops = null;
    await this.#options.jobs.setJobStatus(job.id, { lastComplete: clock.now(), lastError: drops ? drops.last : null, errorMessage: message });
    return true;
  }

  /**
   * A delivery attempt failed, whatever the cause (the destination, the database, the disk): the
   * next try waits 0.5 s, doubling to 60 s; one log line when the failures begin or change kind,
   * not one per try. Only a destination that keeps failing pauses its job.
   */
  #failed(shipper: Shipper, error: unknown, lines: number): void {
    const now = this.#options.clock.now();
    shipper.failedLines += lines;
    shipper.attempts += 1;
    const delayMs = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (shipper.attempts - 1));
    shipper.retryAt = now + delayMs;
    const fault = backendFaultOf(error);
    const kind = error instanceof DestinationError ? 'destination' : fault ? fault.backend : 'other';
    shipper.failure = error instanceof DestinationError ? error.message : `delivery failed: ${(error as Error).message}`;
    shipper.failingSince ??= now;
    if (shipper.failingKind !== kind) {
      shipper.failingKind = kind;
      this.#options.logger[kind === 'other' ? 'error' : 'warn'](
        { jobId: shipper.jobId, kind, err: error, retryInMs: delayMs },
        'Log shipping failed; it is retried with backoff (0.5 s doubling to 60 s) until it succeeds.',
      );
    }
    if (kind === 'destination' && !shipper.paused && now - shipper.failingSince >= this.#pauseAfterMs) {
      shipper.paused = true;
      this.#options.logger.warn(
        { jobId: shipper.jobId, failingSince: shipper.failingSince, error: shipper.failure },
        'Log job paused: its destination keeps failing.',
      );
    }
  }

  /** Lines this job dropped since this process started (no room in the spool, or paused). */
  #dropCount(shipper: Shipper): number {
    return shipper.spool.dropped + shipper.pausedDrops;
  }

  /** `lost`: that many lines could not be written to the spool (a full disk), rather than one that found no room under the caps. */
  #noteDrop(shipper: Shipper, lost = 0): void {
    const disk = lost > 0;
    const now = this.#options.clock.now();
    if (shipper.drops === null) {
      this.#options.logger.warn(
        { jobId: shipper.jobId, paused: shipper.paused, spooledBytes: shipper.spool.diskBytes },
        'Log lines dropped: the job is paused, its spool is full, or the disk is.',
      );
    }
    shipper.drops ??= { before: this.#dropCount(shipper) - (disk ? lost : 1), since: now, last: now, paused: false, full: false, disk: false };
    shipper.drops.last = now;
    if (disk) shipper.drops.disk = true;
    else if (shipper.paused) shipper.drops.paused = true;
    else shipper.drops.full = true;
  }

  /** The job's error_message: why deliveries fail (and whether it is paused), and what was dropped. */
  #statusMessage(shipper: Shipper): string | null {
    const parts: string[] = [];
    if (shipper.failure !== null) {
      parts.push(
        shipper.paused
          ? `paused: deliveries have failed since ${iso(shipper.failingSince!)}; it takes no new lines until a delivery succeeds (retried at least every ${BACKOFF_MAX_MS / 1000} s, at once when the job is updated). Last failure: ${shipper.failure}`
          : shipper.failure,
      );
    }
    const drops = shipper.drops;
    if (drops !== null) {
      const why = [
        ...(drops.paused ? ['the job was paused'] : []),
        ...(drops.full
          ? [`its spool was full (at most ${this.#maxJobSpoolBytes} bytes of undelivered lines per job, ${this.#budget.maxBytes} for all jobs)`]
          : []),
        ...(drops.disk ? ['the disk under the data dir was full (the spool could not be written)'] : []),
      ].join(', and ');
      parts.push(`${this.#dropCount(shipper) - drops.before} log lines dropped since ${iso(drops.since)}: ${why}`);
    }
    return parts.length === 0 ? null : parts.join('; ');
  }

  /** Writes the drop count to the job's status (between deliveries, so the API shows it while it grows). */
  async #reportDrops(shipper: Shipper): Promise<void> {
    shipper.reporting = true;
    shipper.lastReport = this.#options.clock.now();
    try {
      const job = await this.#options.jobs.getJob(shipper.zoneId, shipper.jobId);
      if (job === null || shipper.drops === null) return;
      shipper.reportedDrops = this.#dropCount(shipper);
      await this.#options.jobs.setJobStatus(job.id, {
        lastComplete: job.lastComplete,
        lastError: shipper.drops.last,
        errorMessage: this.#statusMessage(shipper),
      });
    } catch (error) {
      // The database away is the shipper's to report (once); the count is written at the next try.
      if (backendFaultOf(error) === undefined)
        this.#options.logger.warn({ err: error, jobId: shipper.jobId }, 'Could not record dropped log lines on the job.');
    } finally {
      shipper.reporting = false;
    }
  }

  /** Runs #reconcile after a change; changes arriving meanwhile run it once more. */
  #scheduleReconcile(): void {
    if (this.#closed) return;
    if (this.#reconciling) {
      this.#reconcileAgain = true;
      return;
    }
    this.#reconciling = this.#reconcile()
      .catch((error: unknown) => this.#options.logger.warn({ err: error }, 'Could not check log jobs after a change.'))
      .finally(() => {
        this.#reconciling = null;
        if (this.#reconcileAgain) {
          this.#reconcileAgain = false;
          this.#scheduleReconcile();
        }
      });
  }

  /** A deleted or disabled job's spool goes at once; an updated failing job is retried at once. */
  async #reconcile(): Promise<void> {
    for (const shipper of [...this.#shippers.values()]) {
      const job = await this.#options.jobs.getJob(shipper.zoneId, shipper.jobId);
      if (job === null || !job.enabled) this.#drop(shipper);
      else if (shipper.version !== job.modified) {
        if (shipper.version !== null) {
          shipper.retryAt = 0;
          shipper.attempts = 0;
        }
        shipper.version = job.modified;
      }
    }
  }

  async #destination(job: LogJobRecord): Promise<ReturnType<typeof openDestination>> {
    const accountId = await this.#options.jobs.zoneAccount(job.zoneId);
    if (accountId === null) throw new DestinationError("the job's zone no longer exists");
    const cacheKey = `${accountId} ${job.destinationConf}`;
    const guard = this.#destinations.has(cacheKey) ? null : ((await this.#options.outboundGuard?.(accountId)) ?? null);
    // Looked up again after the await: one destination (and its connections) per account and conf.
    let opened = this.#destinations.get(cacheKey);
    if (!opened) {
      opened = openDestination(job.destinationConf, accountStore(this.#options.engine, accountId), this.#fileRoots, guard);
      this.#destinations.set(cacheKey, opened);
    }
    return opened;
  }

  /** Removes the temporary file a delivery killed mid-write left (the batch in flight is delivered again). */
  #sweepTempFile(spoolDir: string): void {
    try {
      const removed = DeliveryNote.sweep(spoolDir);
      if (removed !== null) this.#options.logger.info({ path: removed }, 'Removed the temporary file of an interrupted log delivery.');
    } catch (error) {
      this.#options.logger.warn({ err: error, spoolDir }, 'Could not remove the temporary file of an interrupted log delivery.');
    }
  }

  #drop(shipper: Shipper): void {
    shipper.spool.remove();
    this.#shippers.delete(shipper.jobId);
    this.#active.delete(shipper.jobId);
    rmSync(join(this.#root, String(shipper.jobId)), { recursive: true, force: true });
  }
}

/**
 * The id of this data dir's log pipeline, made once and kept: instances sharing a database each
 * spool their own records, so their batches of one job must never get the same object name.
 */
function instanceId(dir: string): string {
  const file = join(dir, 'instance-id');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const id = randomHexId();
  writeFileSync(file, `${id}\n`);
  return id;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
