/**
 * Applies buckets' lifecycle rules (lifecycle.ts) on the injected clock: deletes the objects whose
 * expiration is due, moves those whose transition is due to InfrequentAccess, aborts the multipart
 * uploads whose abort is due.
 *
 * One instance at a time does the work: a pass first takes the lease `lifecycle` in the metadata
 * store (MetadataStore.takeLease; on PostgreSQL one row every instance shares), and an instance
 * that finds it held does nothing. The work goes a page of objects at a time: after each page the
 * pass saves where it is in the lease row and extends the lease, so when the holder stops (a
 * crash, a shutdown) the next holder, once the lease has run out, resumes there. A pass that has
 * done its share of pages stops and the next starts at once: the event loop is never held long.
 *
 * Each due object goes once: its deletion is conditional on its version and on still being due,
 * judged inside the deletion's transaction, so an object written again since it was seen, or a
 * second deletion by an instance that lost the lease without knowing, deletes nothing (and counts
 * nothing). A deletion gives the object's space back to its account in that transaction; an abort
 * frees the upload's parts the same way.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/log.ts';
import type { MetadataStore } from '../../db/metadata-store.ts';
import { dueAction, scanPrefixes, uploadDue, type LifecycleRule } from './lifecycle.ts';

/** The lease's name in maintenance_leases. */
const LEASE = 'lifecycle';

/** Where a sweep cycle is: the bucket, then its objects (by scan prefix and last key), then its uploads. */
interface SweepState {
  bucket?: string;
  stage?: 'objects' | 'uploads';
  prefix?: number;
  after?: string;
}

export interface LifecycleSweeperOptions {
  meta: MetadataStore;
  clock: Clock;
  logger: Logger;
  /** This instance, as the lease's holder (default: random). */
  holder?: string;
  /** Objects read per page (default 1000). */
  pageSize?: number;
  /** Pages a pass works through before it lets others run (default 20). */
  pagesPerPass?: number;
  /** How long a lease lasts unless renewed: a crashed holder's work resumes this long after (default 60 s). */
  leaseMs?: number;
}

/** What this instance's sweeps did since it started (for /metrics). */
export interface LifecycleStats {
  expiredObjects: number;
  transitionedObjects: number;
  abortedUploads: number;
  /** Cycles this instance finished: every bucket with rules swept once. */
  cycles: number;
  /** Passes that failed (retried at the next interval). */
  failures: number;
  /** Epoch ms the last cycle finished here, or 0. */
  lastCycleAt: number;
  /** Whether this instance held the lease at its last pass. */
  holdsLease: boolean;
}

export type PassOutcome = 'done' | 'more' | 'busy';

export class LifecycleSweeper {
  readonly stats: LifecycleStats = { expiredObjects: 0, transitionedObjects: 0, abortedUploads: 0, cycles: 0, failures: 0, lastCycleAt: 0, holdsLease: false };
  readonly #meta: MetadataStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #holder: string;
  readonly #pageSize: number;
  readonly #pagesPerPass: number;
  readonly #leaseMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(options: LifecycleSweeperOptions) {
    this.#meta = options.meta;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#holder = options.holder ?? randomBytes(8).toString('hex');
    this.#pageSize = options.pageSize ?? 1000;
    this.#pagesPerPass = options.pagesPerPass ?? 20;
    this.#leaseMs = options.leaseMs ?? 60_000;
  }

  /**
   * Sweeps every `intervalMs` (real time; what is due is judged on the injected clock): a cycle
   * cut into passes goes on pass after pass until done, then waits the interval.
   */
  start(intervalMs: number): void {
    const schedule = (delay: number) => {
      if (this.#stopped) return;
      this.#timer = setTimeout(() => {
        this.#running = this.runPass().then(
          (outcome) => schedule(outcome === 'more' ? 0 : intervalMs),
          (error: unknown) => {
            this.stats.failures += 1;
            this.#logger.warn({ err: error }, 'Lifecycle sweep failed; it is retried.');
            schedule(intervalMs);
          },
        );
      }, delay);
      this.#timer.unref();
    };
    schedule(Math.min(intervalMs, 1000));
  }

  /** Stops sweeping; resolves once a pass under way has finished its page. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running?.catch(() => undefined);
  }

  /** Passes until a cycle is done (or another instance holds the lease). For tests and the CLI. */
  async runCycle(): Promise<PassOutcome> {
    for (;;) {
      const outcome = await this.runPass();
      if (outcome !== 'more') return outcome;
    }
  }

  /**
   * One pass: takes the lease (or answers 'busy'), then works from where the last holder stopped,
   * up to its share of pages ('more'), or to the end of the cycle ('done').
   */
  async runPass(): Promise<PassOutcome> {
    const saved = await this.#meta.takeLease(LEASE, this.#holder, this.#clock.now(), this.#clock.now() + this.#leaseMs);
    this.stats.holdsLease = saved !== null;
    if (saved === null) return 'busy';
    let state = parseState(saved);
    for (let page = 0; page < this.#pagesPerPass; page++) {
      if (this.#stopped) return 'more';
      const next = await this.#step(state);
      if (next === null) {
        this.stats.cycles += 1;
        this.stats.lastCycleAt = this.#clock.now();
        await this.#keep({});
        return 'done';
      }
      state = next;
      // Progress is saved with each step: a holder that stops here is resumed here.
      if (!(await this.#keep(state))) {
        this.stats.holdsLease = false;
        return 'busy';
      }
    }
    return 'more';
  }

  #keep(state: SweepState): Promise<boolean> {
    return this.#meta.keepLease(LEASE, this.#holder, this.#clock.now() + this.#leaseMs, JSON.stringify(state));
  }

  /** Does one page of work from `state`; answers where the cycle is now, or null when it is done. */
  async #step(state: SweepState): Promise<SweepState | null> {
    if (state.bucket === undefined) return this.#nextBucket('');
    const rules = await this.#meta.getBucketLifecycle(state.bucket);
    // Rules removed (or the bucket deleted) since: on to the next bucket.
    if (rules === null) return this.#nextBucket(state.bucket);
    if (state.stage !== 'uploads') {
      const prefixes = scanPrefixes(rules);
      const index = state.prefix ?? 0;
      if (index < prefixes.length) return this.#objectsPage(state.bucket, rules, prefixes, index, state.after);
    }
    await this.#abortDueUploads(state.bucket, rules);
    return this.#nextBucket(state.bucket);
  }

  async #nextBucket(after: string): Promise<SweepState | null> {
    const [next] = await this.#meta.lifecycleBuckets(after, 1);
    return next ? { bucket: next.bucket, stage: 'objects', prefix: 0 } : null;
  }

  /** One page of the bucket's objects under its `index`th scan prefix, after `after`: each due one expired or moved. */
  async #objectsPage(bucket: string, rules: LifecycleRule[], prefixes: string[], index: number, after: string | undefined): Promise<SweepState> {
    const now = this.#clock.now();
    const page = await this.#meta.listObjects(bucket, {
      prefix: prefixes[index]!,
      limit: this.#pageSize,
      withHttpMetadata: false,
      withCustomMetadata: false,
      ...(after !== undefined ? { after } : {}),
    });
    for (const object of page) {
      const action = dueAction(rules, object, now);
      if (action === 'expire') {
        // Only this version, and only while still due: an object written since is another object.
        const outcome = await this.#meta.deleteObject(
          bucket,
          object.key,
          (current) => current.version === object.version && dueAction(rules, current, now) === 'expire',
        );
        if (outcome === 'deleted') this.stats.expiredObjects += 1;
      } else if (action === 'transition') {
        if (await this.#meta.setObjectStorageClass(bucket, object.key, object.version, 'InfrequentAccess')) this.stats.transitionedObjects += 1;
      }
    }
    if (page.length === this.#pageSize) return { bucket, stage: 'objects', prefix: index, after: page[page.length - 1]!.key };
    return { bucket, stage: 'objects', prefix: index + 1 };
  }

  async #abortDueUploads(bucket: string, rules: LifecycleRule[]): Promise<void> {
    const now = this.#clock.now();
    for (const prefix of scanPrefixes(rules, true)) {
      for (const upload of await this.#meta.listUploads(bucket, prefix)) {
        if (!uploadDue(rules, upload.key, upload.created, now)) continue;
        if ((await this.#meta.abortUpload(bucket, upload.key, upload.uploadId)) === 'active') this.stats.abortedUploads += 1;
      }
    }
  }
}

function parseState(text: string): SweepState {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null ? (value as SweepState) : {};
  } catch {
    return {};
  }
}
