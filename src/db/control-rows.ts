/**
 * The control plane's rows as both SQL stores keep them (the same columns in SQLite and
 * PostgreSQL), and their mapping to the records of control-store.ts.
 */
import type { AccountRecord, CustomFieldNames, RulesetRecord, RulesetVersionRecord, SessionRecord, ZoneRecord } from './control-store.ts';

export const CUSTOM_FIELDS_PHASE = 'http_log_custom_fields';

export interface AccountRow {
  id: string;
  email: string;
  name: string;
  key_hash: string;
  created: number;
}
export interface ZoneRow {
  id: string;
  account_id: string;
  name: string;
  origin: string | null;
  paused: number;
  created: number;
  modified: number;
}
export interface RulesetRow {
  id: string;
  zone_id: string;
  name: string;
  description: string;
  kind: string;
  phase: string;
  version: number;
  last_updated: number;
  rules: string;
  /** JSON: the earlier versions (migration 19). */
  history: string;
}
/** A `log_jobs` row: `job` is the record without its id, the destination sealed (secrets/sealed-rows.ts). */
export interface JobRow {
  id: number;
  job: string;
}
export interface SessionRow {
  id: string;
  account_id: string;
  key_hash: string;
  csrf_token: string;
  created: number;
  expires: number;
}

export function toSession(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    keyHash: row.key_hash,
    csrfToken: row.csrf_token,
    created: Number(row.created),
    expires: Number(row.expires),
  };
}

/** The merged names of a custom-fields entry point's enabled rules, as stored JSON (null for other rulesets). */
export function customFieldsOf(ruleset: RulesetRecord): string | null {
  if (ruleset.kind !== 'zone' || ruleset.phase !== CUSTOM_FIELDS_PHASE) return null;
  const merged: CustomFieldNames = { requestFields: [], responseFields: [], cookieFields: [] };
  for (const rule of ruleset.rules) {
    if (!rule.enabled) continue;
    merged.requestFields.push(...(rule.actionParameters.requestFields ?? []));
    merged.responseFields.push(...(rule.actionParameters.responseFields ?? []));
    merged.cookieFields.push(...(rule.actionParameters.cookieFields ?? []));
  }
  return JSON.stringify(merged);
}

export function toAccount(row: AccountRow | undefined): AccountRecord | null {
  return row ? { id: row.id, email: row.email, name: row.name, keyHash: row.key_hash, created: row.created } : null;
}

export function toZone(row: ZoneRow | undefined): ZoneRecord | null {
  return row
    ? {
        id: row.id,
        accountId: row.account_id,
        name: row.name,
        origin: row.origin,
        paused: row.paused === 1,
        created: row.created,
        modified: row.modified,
      }
    : null;
}

export function toRuleset(row: RulesetRow): RulesetRecord {
  return {
    id: row.id,
    zoneId: row.zone_id,
    name: row.name,
    description: row.description,
    kind: row.kind,
    phase: row.phase,
    version: row.version,
    lastUpdated: row.last_updated,
    rules: JSON.parse(row.rules) as RulesetRecord['rules'],
    history: JSON.parse(row.history ?? '[]') as RulesetVersionRecord[],
  };
}
