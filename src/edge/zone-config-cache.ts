/**
 * What the edge needs per request, cached: host -> zone, and per zone its custom-fields rule and
 * enabled log jobs. A change made through this instance (the directory's change events) applies
 * from the next request on; entries also expire after MAX_AGE_MS, so a change made on another
 * instance sharing the database applies within a second.
 */
import type { Clock } from '../core/clock.ts';
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

  constructor(directory: ZoneDirectory, pipeline: LogPipeline, clock: Clock) {
    this.#directory = directory;
    this.#pipeline = pipeline;
    this.#clock = clock;
    directory.onZoneChange?.(() => this.invalidate());
  }

  invalidate(): void {
    this.#generation += 1;
    this.#hosts.clear();
    this.#configs.clear();
  }

  /** The zone serving `host` with its rule and jobs, or null for an unknown host. */
  async lookup(host: string): Promise<ZoneConfig | null> {
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
      const config = Promise.all([this.#directory.getCustomFieldsRule(zone.id), this.#pipeline.jobsFor(zone.id)])
        .then(([fields, jobs]) => ({ zone, fields, jobs }));
      entry = { config, at: now };
      if (generation === this.#generation) this.#configs.set(zone.id, entry);
      config.catch(() => this.#configs.delete(zone.id));
    }
    return entry.config;
  }
}
