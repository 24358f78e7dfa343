/**
 * What the edge needs per request, cached: host -> zone, and per zone its custom-fields rule and
 * enabled log jobs. A change made through this instance (the directory's change events) applies
 * from the next request on; entries also expire after MAX_AGE_MS, so a change made on another
 * instance sharing the database applies within a second. While the database cannot be read (a
 * backend fault), a host's last known config serves instead (stale-if-error, for as long as the
 * outage lasts): known zones keep being served and logged; an unknown host's lookup fails. After a
 * fault no request for a known host waits on the database: it is tried again in the background.
 */
import type { Clock } from '../core/clock.ts';
import { backendFaultOf } from '../core/errors/backend-fault.ts';
import { OutageMemory } from '../core/errors/outage-memory.ts';
import type { CustomFieldNames, ZoneRecord } from '../db/control-store.ts';
import type { ActiveLogJob, LogPipeline } from '../logs/log-pipeline.ts';
import { findZoneForHost, type ZoneDirectory } from './zone-lookup.ts';

const MAX_AGE_MS = 1000;
const MAX_HOSTS = 10_000;

export interface ZoneConfig {
  zone: ZoneRecord;
  fields: CustomFieldNames | null;
  jobs: ActiveLogJob[];
}

export class ZoneConfigCache {
  readonly #directory: ZoneDirectory;
  readonly #pipeline: LogPipeline;
  readonly #clock: Clock;
  readonly #hosts = new Map<string, { zone: ZoneRecord | null; at: number }>();
  readonly #configs = new Map<string, { config: Promise<ZoneConfig>; at: number }>();
  /** Bumped by every change event; a lookup begun before a change is not cached after it. */
  #generation = 0;
  /** Each host's last config read (null: no zone), kept through change events: what serves while the database is away. */
  readonly #lastKnown = new Map<string, ZoneConfig | null>();
  /** While the database fails, known hosts answer from #lastKnown and one read per MAX_AGE_MS tries it again. */
  readonly #outage: OutageMemory;

  constructor(directory: ZoneDirectory, pipeline: LogPipeline, clock: Clock) {
    this.#directory = directory;
    this.#pipeline = pipeline;
    this.#clock = clock;
    this.#outage = new OutageMemory(() => clock.now(), MAX_AGE_MS);
    directory.onZoneChange?.(() => this.invalidate());
  }

  invalidate(): void {
    this.#generation += 1;
    this.#hosts.clear();
    this.#configs.clear();
  }

  /**
   * The zone serving `host` with its rule and jobs, or null for an unknown host; its last known
   * config while the database fails. Throws the fault when there is none.
   */
  async lookup(host: string): Promise<ZoneConfig | null> {
    // Only a request for a host never read waits on a failing database's deadline (OutageMemory).
    if (this.#outage.failing && this.#lastKnown.has(host)) {
      this.#outage.retry(async () => this.#remember(host, await this.#read(host)));
      return this.#lastKnown.get(host)!;
    }
    try {
      const config = this.#remember(host, await this.#read(host));
      this.#outage.succeeded();
      return config;
    } catch (error) {
      if (backendFaultOf(error) === undefined) throw error;
      this.#outage.failed();
      const known = this.#lastKnown.get(host);
      if (known === undefined) throw error;
      return known;
    }
  }

  #remember(host: string, config: ZoneConfig | null): ZoneConfig | null {
    if (this.#lastKnown.size >= MAX_HOSTS && !this.#lastKnown.has(host)) this.#lastKnown.delete(this.#lastKnown.keys().next().value!);
    this.#lastKnown.set(host, config);
    return config;
  }

  async #read(host: string): Promise<ZoneConfig | null> {
    const now = this.#clock.now();
    const generation = this.#generation;
    let hit = this.#hosts.get(host);
    if (!hit || now - hit.at >= MAX_AGE_MS) {
      const zone = await findZoneForHost(this.#directory, host);
      hit = { zone, at: now };
      if (generation === this.#generation) {
        if (this.#hosts.size >= MAX_HOSTS) this.#hosts.clear();
        this.#hosts.set(host, hit);
      }
    }
    if (hit.zone === null) return null;
    const zone = hit.zone;
    let entry = this.#configs.get(zone.id);
    if (!entry || now - entry.at >= MAX_AGE_MS) {
      const config = Promise.all([this.#directory.getCustomFieldsRule(zone.id), this.#pipeline.jobsFor(zone.id)]).then(([fields, jobs]) => ({
        zone,
        fields,
        jobs,
      }));
      entry = { config, at: now };
      if (generation === this.#generation) this.#configs.set(zone.id, entry);
      config.catch(() => this.#configs.delete(zone.id));
    }
    return entry.config;
  }
}
