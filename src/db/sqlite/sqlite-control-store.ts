/**
 * ControlStore on SQLite, in the object store's database file (`<dataDir>/metadata.sqlite`) on its
 * own connection. Reads run directly on prepared statements; writes go through the group-commit
 * WriteQueue and resolve once the WAL holding them is fsynced, like the metadata store's. All SQL
 * of the control plane lives in this file.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../../core/clock.ts';
import type {
  AccountRecord,
  ControlStore,
  CustomFieldNames,
  LogJobRecord,
  NewLogJob,
  OwnershipChallengeRecord,
  RulesetRecord,
  SessionRecord,
  ZoneNameConflict,
  ZoneQuery,
  ZoneRecord,
} from '../control-store.ts';
import {
  CUSTOM_FIELDS_PHASE,
  customFieldsOf,
  toAccount,
  toRuleset,
  toSession,
  toZone,
  type AccountRow,
  type JobRow,
  type RulesetRow,
  type SessionRow,
  type ZoneRow,
} from '../control-rows.ts';
import { SqliteApiTokenStore } from '../api-tokens/sqlite-api-token-store.ts';
import { openedJob, sealedJobJson } from '../secrets/sealed-rows.ts';
import { SecretBox } from '../../core/crypto/secret-box.ts';
import { ancestorNames, descendantRange, reversedName } from '../zone-names.ts';
import { openSqliteConnection } from './open-sqlite.ts';
import type { WriteQueue } from './write-queue.ts';

export interface SqliteControlStoreOptions {
  /** Database file path; the object store's `metadata.sqlite`. */
  file: string;
  clock: Clock;
  /** false when a WalCheckpointer thread checkpoints this database (see SqliteMetadataStore). */
  autoCheckpoint?: boolean;
  /** Seals and opens log jobs' destinations (src/db/secrets); without it, jobs can be neither written nor read. */
  secrets?: SecretBox;
}

const ZONE_ORDER = { name: 'name', created: 'created' } as const;

function prepareStatements(db: Database) {
  const s = (sql: string): Statement => db.prepare(sql);
  const zoneFilter = `account_id = @account AND (@op IS NULL OR (@op = 'equal' AND name = @value) OR (@op = 'contains' AND instr(name, @value) > 0)
    OR (@op = 'starts_with' AND substr(name, 1, length(@value)) = @value) OR (@op = 'ends_with' AND substr(name, -length(@value)) = @value))`;
  const listZones: Record<string, Statement> = {};
  for (const [order, column] of Object.entries(ZONE_ORDER)) {
    for (const direction of ['asc', 'desc']) {
      listZones[`${order} ${direction}`] = s(`SELECT * FROM zones WHERE ${zoneFilter} ORDER BY ${column} ${direction}, id LIMIT @limit OFFSET @offset`);
    }
  }
  return {
    insertAccount: s('INSERT OR IGNORE INTO accounts (id, email, name, key_hash, created) VALUES (?, ?, ?, ?, ?)'),
    getAccount: s('SELECT * FROM accounts WHERE id = ?'),
    accountByEmail: s('SELECT * FROM accounts WHERE email = ?'),
    setKeyHash: s('UPDATE accounts SET key_hash = ? WHERE id = ?'),
    otherAccountByEmail: s('SELECT 1 FROM accounts WHERE email = ? AND id <> ?').pluck(),
    // A name still the one made from the old e-mail (createAccount's "<e-mail>'s Account") follows the new e-mail; a name of one's own stays.
    setSignIn: s(
      "UPDATE accounts SET name = CASE WHEN name = email || '''s Account' THEN ? || '''s Account' ELSE name END, email = ?, key_hash = ? WHERE id = ?",
    ),
    countAccounts: s('SELECT count(*) FROM accounts').pluck(),
    listAccounts: s('SELECT * FROM accounts ORDER BY created, id'),
    deleteAccount: s('DELETE FROM accounts WHERE id = ?'),
    deleteAccountSessions: s('DELETE FROM dashboard_sessions WHERE account_id = ?'),
    deleteAccountTokens: s('DELETE FROM api_tokens WHERE account_id = ?'),
    firstAccount: s('SELECT * FROM accounts ORDER BY created, id LIMIT 1'),

    insertZone: s(`INSERT OR IGNORE INTO zones (id, account_id, name, name_reversed, origin, paused, created, modified)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
    otherAccountsZoneNamed: s('SELECT name FROM zones WHERE name = ? AND account_id <> ?').pluck(),
    otherAccountsZoneUnder: s('SELECT name FROM zones WHERE name_reversed > ? AND name_reversed < ? AND account_id <> ? LIMIT 1').pluck(),
    getZone: s('SELECT * FROM zones WHERE id = ? AND account_id = ?'),
    zoneByName: s('SELECT * FROM zones WHERE name = ?'),
    zoneAccount: s('SELECT account_id FROM zones WHERE id = ?').pluck(),
    listZones,
    countZones: s(`SELECT count(*) FROM zones WHERE ${zoneFilter}`).pluck(),
    updateZone: s('UPDATE zones SET origin = ?, paused = ?, modified = ? WHERE id = ?'),
    deleteZone: s('DELETE FROM zones WHERE id = ?'),
    deleteZoneRulesets: s('DELETE FROM rulesets WHERE zone_id = ?'),
    deleteZoneJobs: s('DELETE FROM log_jobs WHERE zone_id = ?'),
    deleteZoneChallenges: s('DELETE FROM ownership_challenges WHERE zone_id = ?'),

    listRulesets: s('SELECT * FROM rulesets WHERE zone_id = ? ORDER BY id'),
    getRuleset: s('SELECT * FROM rulesets WHERE id = ? AND zone_id = ?'),
    getEntrypoint: s("SELECT * FROM rulesets WHERE zone_id = ? AND phase = ? AND kind = 'zone'"),
    customFields: s(`SELECT custom_fields FROM rulesets WHERE zone_id = ? AND phase = '${CUSTOM_FIELDS_PHASE}' AND kind = 'zone'`).pluck(),
    insertRuleset: s(`INSERT INTO rulesets (id, zone_id, name, description, kind, phase, version, last_updated, rules, custom_fields, history)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    updateRuleset: s('UPDATE rulesets SET name = ?, description = ?, version = ?, last_updated = ?, rules = ?, custom_fields = ?, history = ? WHERE id = ?'),
    deleteRuleset: s('DELETE FROM rulesets WHERE id = ? AND zone_id = ?'),

    listJobs: s('SELECT id, job FROM log_jobs WHERE zone_id = ? ORDER BY id'),
    listEnabledJobs: s('SELECT id, job FROM log_jobs WHERE zone_id = ? AND enabled = 1 ORDER BY id'),
    countJobs: s('SELECT count(*) FROM log_jobs WHERE zone_id = ?').pluck(),
    getJob: s('SELECT id, job FROM log_jobs WHERE id = ? AND zone_id = ?'),
    getJobById: s('SELECT id, job FROM log_jobs WHERE id = ?'),
    insertJob: s('INSERT INTO log_jobs (zone_id, enabled, job, held_location) VALUES (?, ?, ?, ?)'),
    updateJob: s('UPDATE log_jobs SET enabled = ?, job = ?, held_location = ? WHERE id = ?'),
    deleteJob: s('DELETE FROM log_jobs WHERE id = ? AND zone_id = ?'),

    putChallenge: s('INSERT OR REPLACE INTO ownership_challenges (zone_id, destination_conf, token_hash, expires) VALUES (?, ?, ?, ?)'),
    getChallenge: s('SELECT token_hash, expires FROM ownership_challenges WHERE zone_id = ? AND destination_conf = ?'),
    dropExpiredChallenges: s('DELETE FROM ownership_challenges WHERE expires <= ?'),
    otherAccountsHold: s(`SELECT 1 FROM ownership_challenges c JOIN zones z ON z.id = c.zone_id
      WHERE z.account_id <> @account AND c.expires > @now AND substr(c.destination_conf, 1, 7) = 'file://' AND (c.destination_conf = @location
        OR substr(@location, 1, length(rtrim(c.destination_conf, '/')) + 1) = rtrim(c.destination_conf, '/') || '/'
        OR substr(c.destination_conf, 1, length(rtrim(@location, '/')) + 1) = rtrim(@location, '/') || '/')
      UNION ALL SELECT 1 FROM log_jobs j JOIN zones z ON z.id = j.zone_id
      WHERE z.account_id <> @account AND j.held_location IS NOT NULL AND (j.held_location = @location
        OR substr(@location, 1, length(rtrim(j.held_location, '/')) + 1) = rtrim(j.held_location, '/') || '/'
        OR substr(j.held_location, 1, length(rtrim(@location, '/')) + 1) = rtrim(@location, '/') || '/')
      LIMIT 1`).pluck(),

    insertSession: s('INSERT INTO dashboard_sessions (id, account_id, key_hash, csrf_token, created, expires) VALUES (?, ?, ?, ?, ?, ?)'),
    getSession: s('SELECT id, account_id, key_hash, csrf_token, created, expires FROM dashboard_sessions WHERE id = ?'),
    deleteSession: s('DELETE FROM dashboard_sessions WHERE id = ?'),
    dropExpiredSessions: s('DELETE FROM dashboard_sessions WHERE expires <= ?'),
    // The account's own sessions beyond the new one and the newest `keep - 1` others (never another account's).
    dropOldestSessions: s(`DELETE FROM dashboard_sessions WHERE id IN
      (SELECT id FROM dashboard_sessions WHERE account_id = ? AND id <> ? ORDER BY created DESC, id LIMIT -1 OFFSET ?)`),
  };
}

export class SqliteControlStore implements ControlStore {
  readonly #db: Database;
  readonly #sql: ReturnType<typeof prepareStatements>;
  readonly #writes: WriteQueue;
  readonly #changeListeners: Array<() => void> = [];
  readonly #clock: Clock;
  readonly #secrets: SecretBox;
  readonly apiTokens: SqliteApiTokenStore;

  constructor(options: SqliteControlStoreOptions) {
    const { db, writes } = openSqliteConnection(options.file, { autoCheckpoint: options.autoCheckpoint !== false, now: options.clock.now() });
    this.#db = db;
    this.#sql = prepareStatements(db);
    this.#writes = writes;
    this.#clock = options.clock;
    this.#secrets = options.secrets ?? SecretBox.locked();
    this.apiTokens = new SqliteApiTokenStore(db, writes);
  }

  /** Calls `listener` after every committed change to zones, rulesets or log jobs. */
  onZoneChange(listener: () => void): void {
    this.#changeListeners.push(listener);
  }

  #announce<T>(result: T): T {
    for (const listener of this.#changeListeners) listener();
    return result;
  }

  async createAccount(account: AccountRecord): Promise<'created' | 'exists'> {
    return this.#writes.run(() =>
      this.#sql.insertAccount.run(account.id, account.email, account.name, account.keyHash, account.created).changes === 1 ? 'created' : 'exists',
    );
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    return toAccount(this.#sql.getAccount.get(id) as AccountRow | undefined);
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | null> {
    return toAccount(this.#sql.accountByEmail.get(email) as AccountRow | undefined);
  }

  async setAccountKeyHash(id: string, keyHash: string): Promise<void> {
    await this.#writes.run(() => this.#sql.setKeyHash.run(keyHash, id));
  }

  async setAccountSignIn(id: string, email: string, keyHash: string): Promise<'updated' | 'exists'> {
    return this.#writes.run(() => {
      if (this.#sql.otherAccountByEmail.get(email, id)) return 'exists';
      this.#sql.setSignIn.run(email, email, keyHash, id);
      return 'updated';
    });
  }

  async countAccounts(): Promise<number> {
    return this.#sql.countAccounts.get() as number;
  }

  async listAccounts(): Promise<AccountRecord[]> {
    return (this.#sql.listAccounts.all() as AccountRow[]).map((row) => toAccount(row)!);
  }

  async deleteAccount(id: string): Promise<boolean> {
    return this.#writes.run(() => {
      this.#sql.deleteAccountSessions.run(id);
      this.#sql.deleteAccountTokens.run(id);
      return this.#sql.deleteAccount.run(id).changes === 1;
    });
  }

  async firstAccount(): Promise<AccountRecord | null> {
    return toAccount(this.#sql.firstAccount.get() as AccountRow | undefined);
  }

  async createZone(zone: ZoneRecord): Promise<'created' | 'exists' | ZoneNameConflict> {
    const result = await this.#createZoneNow(zone);
    return result === 'created' ? this.#announce(result) : result;
  }

  /** The check and the insert run in one write transaction (BEGIN IMMEDIATE): no other connection writes in between. */
  async #createZoneNow(zone: ZoneRecord): Promise<'created' | 'exists' | ZoneNameConflict> {
    return this.#writes.run(() => {
      if (this.#sql.zoneByName.get(zone.name)) return 'exists';
      const conflict = this.#nameConflict(zone.accountId, zone.name);
      if (conflict) return conflict;
      return this.#sql.insertZone.run(
        zone.id,
        zone.accountId,
        zone.name,
        reversedName(zone.name),
        zone.origin,
        zone.paused ? 1 : 0,
        zone.created,
        zone.modified,
      ).changes === 1
        ? 'created'
        : 'exists';
    });
  }

  /** Another account's zone above `name` (nearest first), else one under it: one indexed lookup per level, then one index range. */
  #nameConflict(accountId: string, name: string): ZoneNameConflict | null {
    for (const above of ancestorNames(name)) {
      const held = this.#sql.otherAccountsZoneNamed.get(above, accountId) as string | undefined;
      if (held !== undefined) return { conflict: 'inside', zoneName: held };
    }
    const { after, before } = descendantRange(name);
    const under = this.#sql.otherAccountsZoneUnder.get(after, before, accountId) as string | undefined;
    return under === undefined ? null : { conflict: 'contains', zoneName: under };
  }

  async getZone(accountId: string, zoneId: string): Promise<ZoneRecord | null> {
    return toZone(this.#sql.getZone.get(zoneId, accountId) as ZoneRow | undefined);
  }

  async listZones(accountId: string, query: ZoneQuery): Promise<{ zones: ZoneRecord[]; total: number }> {
    const filter = { account: accountId, op: query.name?.op ?? null, value: query.name?.value ?? null };
    const rows = this.#sql.listZones[`${query.order} ${query.direction}`]!.all({ ...filter, limit: query.limit, offset: query.offset }) as ZoneRow[];
    return { zones: rows.map((row) => toZone(row)!), total: this.#sql.countZones.get(filter) as number };
  }

  async updateZone(accountId: string, zoneId: string, plan: (current: ZoneRecord) => ZoneRecord): Promise<ZoneRecord | null> {
    return this.#announce(await this.#updateZoneNow(accountId, zoneId, plan));
  }

  async #updateZoneNow(accountId: string, zoneId: string, plan: (current: ZoneRecord) => ZoneRecord): Promise<ZoneRecord | null> {
    return this.#writes.run(() => {
      const current = toZone(this.#sql.getZone.get(zoneId, accountId) as ZoneRow | undefined);
      if (!current) return null;
      const next = plan(current);
      if (next.name !== current.name) throw new Error(`Zone ${zoneId} keeps its name ${current.name}: delete it and create ${next.name} instead.`);
      this.#sql.updateZone.run(next.origin, next.paused ? 1 : 0, next.modified, zoneId);
      return next;
    });
  }

  async deleteZone(accountId: string, zoneId: string): Promise<boolean> {
    return this.#announce(await this.#deleteZoneNow(accountId, zoneId));
  }

  async #deleteZoneNow(accountId: string, zoneId: string): Promise<boolean> {
    return this.#writes.run(() => {
      if (!this.#sql.getZone.get(zoneId, accountId)) return false;
      this.#sql.deleteZoneRulesets.run(zoneId);
      this.#sql.deleteZoneJobs.run(zoneId);
      this.#sql.deleteZoneChallenges.run(zoneId);
      this.#sql.deleteZone.run(zoneId);
      return true;
    });
  }

  async findZoneByName(name: string): Promise<ZoneRecord | null> {
    return toZone(this.#sql.zoneByName.get(name) as ZoneRow | undefined);
  }

  async zoneAccount(zoneId: string): Promise<string | null> {
    return (this.#sql.zoneAccount.get(zoneId) as string | undefined) ?? null;
  }

  async getCustomFieldsRule(zoneId: string): Promise<CustomFieldNames | null> {
    const text = this.#sql.customFields.get(zoneId) as string | null | undefined;
    return text ? (JSON.parse(text) as CustomFieldNames) : null;
  }

  async listEnabledJobs(zoneId: string): Promise<LogJobRecord[]> {
    return (this.#sql.listEnabledJobs.all(zoneId) as JobRow[]).map((row) => openedJob(row, this.#secrets));
  }

  async listRulesets(zoneId: string): Promise<RulesetRecord[]> {
    return (this.#sql.listRulesets.all(zoneId) as RulesetRow[]).map(toRuleset);
  }

  async getRuleset(zoneId: string, rulesetId: string): Promise<RulesetRecord | null> {
    const row = this.#sql.getRuleset.get(rulesetId, zoneId) as RulesetRow | undefined;
    return row ? toRuleset(row) : null;
  }

  async getEntrypoint(zoneId: string, phase: string): Promise<RulesetRecord | null> {
    const row = this.#sql.getEntrypoint.get(zoneId, phase) as RulesetRow | undefined;
    return row ? toRuleset(row) : null;
  }

  async createRuleset(ruleset: RulesetRecord): Promise<'created' | 'phase-taken'> {
    return this.#announce(await this.#createRulesetNow(ruleset));
  }

  async #createRulesetNow(ruleset: RulesetRecord): Promise<'created' | 'phase-taken'> {
    return this.#writes.run(() => {
      if (ruleset.kind === 'zone' && this.#sql.getEntrypoint.get(ruleset.zoneId, ruleset.phase)) return 'phase-taken';
      this.#insertRuleset(ruleset);
      return 'created';
    });
  }

  async updateRuleset(zoneId: string, rulesetId: string, plan: (current: RulesetRecord) => RulesetRecord): Promise<RulesetRecord | null> {
    return this.#announce(await this.#updateRulesetNow(zoneId, rulesetId, plan));
  }

  async #updateRulesetNow(zoneId: string, rulesetId: string, plan: (current: RulesetRecord) => RulesetRecord): Promise<RulesetRecord | null> {
    return this.#writes.run(() => {
      const row = this.#sql.getRuleset.get(rulesetId, zoneId) as RulesetRow | undefined;
      if (!row) return null;
      const next = plan(toRuleset(row));
      this.#sql.updateRuleset.run(
        next.name,
        next.description,
        next.version,
        next.lastUpdated,
        JSON.stringify(next.rules),
        customFieldsOf(next),
        JSON.stringify(next.history ?? []),
        rulesetId,
      );
      return next;
    });
  }

  async putEntrypoint(zoneId: string, phase: string, plan: (current: RulesetRecord | null) => RulesetRecord): Promise<RulesetRecord> {
    return this.#announce(await this.#putEntrypointNow(zoneId, phase, plan));
  }

  async #putEntrypointNow(zoneId: string, phase: string, plan: (current: RulesetRecord | null) => RulesetRecord): Promise<RulesetRecord> {
    return this.#writes.run(() => {
      const row = this.#sql.getEntrypoint.get(zoneId, phase) as RulesetRow | undefined;
      const next = plan(row ? toRuleset(row) : null);
      if (row)
        this.#sql.updateRuleset.run(
          next.name,
          next.description,
          next.version,
          next.lastUpdated,
          JSON.stringify(next.rules),
          customFieldsOf(next),
          JSON.stringify(next.history ?? []),
          row.id,
        );
      else this.#insertRuleset(next);
      return next;
    });
  }

  async deleteRuleset(zoneId: string, rulesetId: string): Promise<boolean> {
    return this.#announce(await this.#deleteRulesetNow(zoneId, rulesetId));
  }

  async #deleteRulesetNow(zoneId: string, rulesetId: string): Promise<boolean> {
    return this.#writes.run(() => this.#sql.deleteRuleset.run(rulesetId, zoneId).changes === 1);
  }

  async listJobs(zoneId: string): Promise<LogJobRecord[]> {
    return (this.#sql.listJobs.all(zoneId) as JobRow[]).map((row) => openedJob(row, this.#secrets));
  }

  async countJobs(zoneId: string): Promise<number> {
    return this.#sql.countJobs.get(zoneId) as number;
  }

  async getJob(zoneId: string, jobId: number): Promise<LogJobRecord | null> {
    const row = this.#sql.getJob.get(jobId, zoneId) as JobRow | undefined;
    return row ? openedJob(row, this.#secrets) : null;
  }

  async createJob(zoneId: string, plan: (jobsInZone: number) => NewLogJob): Promise<LogJobRecord> {
    return this.#announce(await this.#createJobNow(zoneId, plan));
  }

  async #createJobNow(zoneId: string, plan: (jobsInZone: number) => NewLogJob): Promise<LogJobRecord> {
    return this.#writes.run(() => {
      const job = plan(this.#sql.countJobs.get(zoneId) as number);
      // The id comes with the row, and the sealed destination is bound to it: written in a second step of the same transaction.
      const id = Number(this.#sql.insertJob.run(zoneId, job.enabled ? 1 : 0, '{}', job.heldLocation ?? null).lastInsertRowid);
      this.#writeJob({ ...job, id });
      return { ...job, id };
    });
  }

  async updateJob(zoneId: string, jobId: number, plan: (current: LogJobRecord) => LogJobRecord): Promise<LogJobRecord | null> {
    return this.#announce(await this.#updateJobNow(zoneId, jobId, plan));
  }

  async #updateJobNow(zoneId: string, jobId: number, plan: (current: LogJobRecord) => LogJobRecord): Promise<LogJobRecord | null> {
    return this.#writes.run(() => {
      const row = this.#sql.getJob.get(jobId, zoneId) as JobRow | undefined;
      if (!row) return null;
      const next = { ...plan(openedJob(row, this.#secrets)), id: jobId, zoneId };
      this.#writeJob(next);
      return next;
    });
  }

  async deleteJob(zoneId: string, jobId: number): Promise<boolean> {
    return this.#announce(await this.#deleteJobNow(zoneId, jobId));
  }

  async #deleteJobNow(zoneId: string, jobId: number): Promise<boolean> {
    return this.#writes.run(() => this.#sql.deleteJob.run(jobId, zoneId).changes === 1);
  }

  async setJobStatus(jobId: number, status: Pick<LogJobRecord, 'lastComplete' | 'lastError' | 'errorMessage'>): Promise<void> {
    await this.#writes.run(() => {
      const row = this.#sql.getJobById.get(jobId) as JobRow | undefined;
      if (row) this.#writeJob({ ...openedJob(row, this.#secrets), ...status });
    });
  }

  async putOwnershipChallenge(challenge: OwnershipChallengeRecord): Promise<void> {
    await this.#writes.run(() => {
      this.#sql.dropExpiredChallenges.run(this.#clock.now());
      this.#sql.putChallenge.run(challenge.zoneId, challenge.destinationConf, challenge.tokenHash, challenge.expires);
    });
  }

  async claimOwnershipChallenge(challenge: OwnershipChallengeRecord, accountId: string): Promise<'stored' | 'taken'> {
    return this.#writes.run(() => {
      const now = this.#clock.now();
      if (this.#sql.otherAccountsHold.get({ account: accountId, now, location: challenge.destinationConf }) !== undefined) return 'taken';
      this.#sql.dropExpiredChallenges.run(now);
      this.#sql.putChallenge.run(challenge.zoneId, challenge.destinationConf, challenge.tokenHash, challenge.expires);
      return 'stored';
    });
  }

  async getOwnershipChallenge(zoneId: string, destinationConf: string): Promise<OwnershipChallengeRecord | null> {
    const row = this.#sql.getChallenge.get(zoneId, destinationConf) as { token_hash: string; expires: number } | undefined;
    return row ? { zoneId, destinationConf, tokenHash: row.token_hash, expires: row.expires } : null;
  }

  async createSession(session: SessionRecord, keepPerAccount: number): Promise<void> {
    await this.#writes.run(() => {
      this.#sql.dropExpiredSessions.run(session.created);
      this.#sql.insertSession.run(session.id, session.accountId, session.keyHash, session.csrfToken, session.created, session.expires);
      this.#sql.dropOldestSessions.run(session.accountId, session.id, Math.max(0, keepPerAccount - 1));
    });
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const row = this.#sql.getSession.get(id) as SessionRow | undefined;
    return row ? toSession(row) : null;
  }

  async deleteSession(id: string): Promise<void> {
    await this.#writes.run(() => this.#sql.deleteSession.run(id));
  }

  async close(): Promise<void> {
    // Let queued writes finish first: a write queued after this point would fail.
    await this.#writes.run(() => undefined);
    this.#db.close();
    await this.#writes.close();
  }

  #insertRuleset(ruleset: RulesetRecord): void {
    this.#sql.insertRuleset.run(
      ruleset.id,
      ruleset.zoneId,
      ruleset.name,
      ruleset.description,
      ruleset.kind,
      ruleset.phase,
      ruleset.version,
      ruleset.lastUpdated,
      JSON.stringify(ruleset.rules),
      customFieldsOf(ruleset),
      JSON.stringify(ruleset.history ?? []),
    );
  }

  #writeJob(job: LogJobRecord): void {
    this.#sql.updateJob.run(job.enabled ? 1 : 0, sealedJobJson(job, this.#secrets), job.heldLocation ?? null, job.id);
  }
}

/**
 * Opens the control store in a data dir's `metadata.sqlite`, the object store's database (created,
 * with the data dir, when missing).
 */
export function openSqliteControlStore(options: { dataDir: string; clock: Clock; autoCheckpoint?: boolean; secrets?: SecretBox }): SqliteControlStore {
  mkdirSync(options.dataDir, { recursive: true });
  return new SqliteControlStore({
    file: join(options.dataDir, 'metadata.sqlite'),
    clock: options.clock,
    autoCheckpoint: options.autoCheckpoint ?? true,
    ...(options.secrets ? { secrets: options.secrets } : {}),
  });
}
