/**
 * Host -> zone: a request belongs to the zone whose name is its host or a parent domain of it
 * (`api.shop.example.test` -> `shop.example.test`, then `example.test`), the most specific first.
 */
import type { AccountRecord, CustomFieldNames, ZoneRecord } from '../db/control-store.ts';

/** What the edge reads of the control plane per request (ControlStore implements it). */
export interface ZoneDirectory {
  findZoneByName(name: string): Promise<ZoneRecord | null>;
  /** The operator's account, whose zones may use any origin (read once there is one). */
  firstAccount(): Promise<AccountRecord | null>;
  getCustomFieldsRule(zoneId: string): Promise<CustomFieldNames | null>;
  /** Calls `listener` after each committed change to zones, rulesets or log jobs (on PostgreSQL, every instance's). */
  onZoneChange?(listener: () => void): void;
}

export async function findZoneForHost(directory: ZoneDirectory, host: string): Promise<ZoneRecord | null> {
  let name = host;
  for (;;) {
    const zone = await directory.findZoneByName(name);
    if (zone) return zone;
    const dot = name.indexOf('.');
    // Stop before a bare top-level label: a zone is at least `name.tld`.
    if (dot < 0 || name.indexOf('.', dot + 1) < 0) return null;
    name = name.slice(dot + 1);
  }
}
