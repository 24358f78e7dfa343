/**
 * ControlStore on PostgreSQL, on a PgDatabase shared with the instance's other stores (not owned:
 * close() leaves the pool open). Behaves as SqliteControlStore does; what several instances add is
 * handled here: plans run on rows locked FOR UPDATE, unique indexes decide races between instances
 * (e-mail, zone name, one zone ruleset per phase), and every committed change to zones, rulesets or
 * jobs is announced with NOTIFY so that every instance's onZoneChange listeners hear it. Its SQL is
 * in pg-control-statements.ts.
 */
import { randomBytes } from 'node:crypto';
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
import { customFieldsOf, toAccount, toRuleset, toSession, toZone, type AccountRow, type JobRow, type RulesetRow, type ZoneRow } from '../control-rows.ts';
import { PgApiTokenStore } from '../api-tokens/pg-api-token-store.ts';
import { openedJob, sealedJobJson } from '../secrets/sealed-rows.ts';
import { SecretBox } from '../../core/crypto/secret-box.ts';
import { ancestorNames, descendantRange, reversedName, zoneFamily } from '../zone-names.ts';
import { SQL } from './pg-control-statements.ts';
import type { PgClient, PgDatabase } from './pg-database.ts';

/** The NOTIFY channel of zone, ruleset and job changes; the payload is the writing store's id. */
const CHANGE_CHANNEL = 'control';
/** putEntrypoint's insert can lose a race to another instance's insert at most this often before it updates instead. */
const ENTRYPOINT_ATTEMPTS = 3;

export interface PgControlStoreOptions {
  database: PgDatabase;
  clock: Clock;
  /** Seals and opens log jobs' destinations (src/db/secrets); without it, jobs can be neither written nor read. */
  secrets?: SecretBox;
}

/** What a write did: its result, and whether zones, rulesets or jobs changed (then every instance hears of it). */
interface Outcome<T> {
  result: T;
  changed: boolean;
}

export class PgControlStore implements ControlStore {
  readonly #db: PgDatabase;
  readonly #clock: Clock;
  readonly #secrets: SecretBox;
  /** Names this store in its own notifications: its listeners already heard of its changes at commit. */
  readonly #id = randomBytes(8).toString('hex');
  readonly #changeListeners: Array<() => void> = [];
  readonly #pending = new Set<Promise<unknown>>();
  #closed = false;
  readonly apiTokens: PgApiTokenStore;

  private constructor(options: PgControlStoreOptions) {
    this.#db = options.database;
    this.apiTokens = new PgApiTokenStore(options.database);
    this.#clock = options.clock;
    this.#secrets = options.secrets ?? SecretBox.locked();
  }

  /** Opens the store on `database` (migrated by PgDatabase.open) and starts listening for other instances' changes. */
  static async open(options: PgControlStoreOptions): Promise<PgControlStore> {
    const store = new PgControlStore(options);
    await options.database.listen(CHANGE_CHANNEL, (payload) => {
      // '' comes from a reconnected listener that may have missed something: treat it as a change.
      if (payload !== store.#id) store.#announce();
    });
    return store;
  }

  /** Calls `listener` after every committed change to zones, rulesets or log jobs, made through any instance. */
  onZoneChange(listener: () => void): void {
    this.#changeListeners.push(listener);
  }

  async createAccount(account: AccountRecord): Promise<'created' | 'exists'> {
    return this.#run(async () => {
      const inserted = await this.#db.query(SQL.insertAccount, [account.id, account.email, account.name, account.keyHash, account.created]);
      return inserted.length === 1 ? 'created' : 'exists';
    });
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    return this.#run(async () => toAccount((await this.#db.query<AccountRow>(SQL.getAccount, [id]))[0]));
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | null> {
    return this.#run(async () => toAccount((await this.#db.query<AccountRow>(SQL.accountByEmail, [email]))[0]));
  }

  async setAccountKeyHash(id: string, keyHash: string): Promise<void> {
    await this.#run(() => this.#db.query(SQL.setKeyHash, [keyHash, id]));
  }

  async setAccountSignIn(id: string, email: string, keyHash: string): Promise<'updated' | 'exists'> {
    return this.#run(() =>
      this.#db.transaction(async (client) => {
        if ((await client.query(SQL.otherAccountByEmail, [email, id])).rows.length > 0) return 'exists';
        await client.query(SQL.setSignIn, [email, keyHash, id]);
        return 'updated';
      }),
    );
  }

  async countAccounts(): Promise<number> {
    return this.#run(async () => (await this.#db.query<{ n: number }>(SQL.countAccounts))[0]!.n);
  }

  async listAccounts(): Promise<AccountRecord[]> {
    return this.#run(async () => (await this.#db.query<AccountRow>(SQL.listAccounts)).map((row) => toAccount(row)!));
  }

  async deleteAccount(id: string): Promise<boolean> {
    return this.#run(() =>
      this.#db.transaction(async (client) => {
        await client.query(SQL.deleteAccountSessions, [id]);
        await client.query(SQL.deleteAccountTokens, [id]);
        return (await client.query(SQL.deleteAccount, [id])).rowCount === 1;
      }),
    );
  }

  async firstAccount(): Promise<AccountRecord | null> {
    return this.#run(async () => toAccount((await this.#db.query<AccountRow>(SQL.firstAccount))[0]));
  }

  async createZone(zone: ZoneRecord): Promise<'created' | 'exists' | ZoneNameConflict> {
    return this.#write<'created' | 'exists' | ZoneNameConflict>(async (client) => {
      // Every name above or under this one shares its family: with the family locked until commit,
      // no other instance can add a conflicting zone between the checks and the insert.
      await client.query(SQL.lockZoneFamily, [zoneFamily(zone.name)]);
      if ((await client.query(SQL.zoneByName, [zone.name])).rows.length > 0) return { result: 'exists', changed: false };
      const above = (await client.query<{ name: string }>(SQL.otherAccountsZoneAbove, [ancestorNames(zone.name), zone.accountId])).rows[0];
      if (above) return { result: { conflict: 'inside', zoneName: above.name }, changed: false };
      const { after, before } = descendantRange(zone.name);
      const under = (await client.query<{ name: string }>(SQL.otherAccountsZoneUnder, [after, before, zone.accountId])).rows[0];
      if (under) return { result: { conflict: 'contains', zoneName: under.name }, changed: false };
      const { rowCount } = await client.query(SQL.insertZone, [
        zone.id,
        zone.accountId,
        zone.name,
        reversedName(zone.name),
        zone.origin,
        zone.paused ? 1 : 0,
        zone.created,
        zone.modified,
      ]);
      return rowCount === 1 ? { result: 'created', changed: true } : { result: 'exists', changed: false };
    });
  }

  async getZone(accountId: string, zoneId: string): Promise<ZoneRecord | null> {
    return this.#run(async () => toZone((await this.#db.query<ZoneRow>(SQL.getZone, [zoneId, accountId]))[0]));
  }

  async listZones(accountId: string, query: ZoneQuery): Promise<{ zones: ZoneRecord[]; total: number }> {
    const op = query.name?.op ?? 'none';
    const value = query.name?.value ?? '';
    return this.#run(async () => {
      const [rows, count] = await Promise.all([
        this.#db.query<ZoneRow>(SQL.listZones(op, query.order, query.direction), [accountId, value, query.limit, query.offset]),
        this.#db.query<{ n: number }>(SQL.countZones(op), [accountId, value]),
      ]);
      return { zones: rows.map((row) => toZone(row)!), total: count[0]!.n };
    });
  }

  async updateZone(accountId: string, zoneId: string, plan: (current: ZoneRecord) => ZoneRecord): Promise<ZoneRecord | null> {
    return this.#write(async (client) => {
      const current = toZone((await client.query<ZoneRow>(SQL.lockZone, [zoneId, accountId])).rows[0]);
      if (!current) return { result: null, changed: false };
      const next = plan(current);
      if (next.name !== current.name) throw new Error(`Zone ${zoneId} keeps its name ${current.name}: delete it and create ${next.name} instead.`);
      await client.query(SQL.updateZone, [next.origin, next.paused ? 1 : 0, next.modified, zoneId]);
      return { result: next, changed: true };
    });
  }

  async deleteZone(accountId: string, zoneId: string): Promise<boolean> {
    return this.#write(async (client) => {
      if ((await client.query(SQL.lockZone, [zoneId, accountId])).rowCount !== 1) return { result: false, changed: false };
      await client.query(SQL.deleteZoneRulesets, [zoneId]);
      await client.query(SQL.deleteZoneJobs, [zoneId]);
      await client.query(SQL.deleteZoneChallenges, [zoneId]);
      await client.query(SQL.deleteZone, [zoneId]);
      return { result: true, changed: true };
    });
  }

  async findZoneByName(name: string): Promise<ZoneRecord | null> {
    return this.#run(async () => toZone((await this.#db.query<ZoneRow>(SQL.zoneByName, [name]))[0]));
  }

  async zoneAccount(zoneId: string): Promise<string | null> {
    return this.#run(async () => (await this.#db.query<{ account_id: string }>(SQL.zoneAccount, [zoneId]))[0]?.account_id ?? null);
  }

  async getCustomFieldsRule(zoneId: string): Promise<CustomFieldNames | null> {
    return this.#run(async () => {
      const text = (await this.#db.query<{ custom_fields: string | null }>(SQL.customFields, [zoneId]))[0]?.custom_fields;
      return text ? (JSON.parse(text) as CustomFieldNames) : null;
    });
  }

  async listEnabledJobs(zoneId: string): Promise<LogJobRecord[]> {
    return this.#run(async () => (await this.#db.query<JobRow>(SQL.listEnabledJobs, [zoneId])).map((row) => openedJob(row, this.#secrets)));
  }

  async listRulesets(zoneId: string): Promise<RulesetRecord[]> {
    return this.#run(async () => (await this.#db.query<RulesetRow>(SQL.listRulesets, [zoneId])).map(toRuleset));
  }

  async getRuleset(zoneId: string, rulesetId: string): Promise<RulesetRecord | null> {
    return this.#first(SQL.getRuleset, [rulesetId, zoneId], toRuleset);
  }

  async getEntrypoint(zoneId: string, phase: string): Promise<RulesetRecord | null> {
    return this.#first(SQL.getEntrypoint, [zoneId, phase], toRuleset);
  }

  async createRuleset(ruleset: RulesetRecord): Promise<'created' | 'phase-taken'> {
    return this.#write(async (client) => {
      const { rowCount } = await client.query(ruleset.kind === 'zone' ? SQL.insertZoneRuleset : SQL.insertRuleset, rulesetValues(ruleset));
      return rowCount === 1 ? { result: 'created', changed: true } : { result: 'phase-taken', changed: false };
    });
  }

  async updateRuleset(zoneId: string, rulesetId: string, plan: (current: RulesetRecord) => RulesetRecord): Promise<RulesetRecord | null> {
    return this.#write(async (client) => {
      const row = (await client.query<RulesetRow>(SQL.lockRuleset, [rulesetId, zoneId])).rows[0];
      if (!row) return { result: null, changed: false };
      const next = plan(toRuleset(row));
      await updateRuleset(client, next, rulesetId);
      return { result: next, changed: true };
    });
  }

  async putEntrypoint(zoneId: string, phase: string, plan: (current: RulesetRecord | null) => RulesetRecord): Promise<RulesetRecord> {
    return this.#write(async (client) => {
      for (let attempt = 1; ; attempt++) {
        const row = (await client.query<RulesetRow>(SQL.lockEntrypoint, [zoneId, phase])).rows[0];
        const next = plan(row ? toRuleset(row) : null);
        if (row) {
          await updateRuleset(client, next, row.id);
          return { result: next, changed: true };
        }
        // Another instance may create the entry point between the SELECT and this INSERT: then the
        // insert waits for it to commit and does nothing, and the next round updates that one.
        if ((await client.query(SQL.insertZoneRuleset, rulesetValues(next))).rowCount === 1) return { result: next, changed: true };
        if (attempt >= ENTRYPOINT_ATTEMPTS) throw new Error(`The ${phase} entry point of zone ${zoneId} kept changing; try again.`);
      }
    });
  }

  async deleteRuleset(zoneId: string, rulesetId: string): Promise<boolean> {
    return this.#write(async (client) => {
      const deleted = (await client.query(SQL.deleteRuleset, [rulesetId, zoneId])).rowCount === 1;
      return { result: deleted, changed: deleted };
    });
  }

  async listJobs(zoneId: string): Promise<LogJobRecord[]> {
    return this.#run(async () => (await this.#db.query<JobRow>(SQL.listJobs, [zoneId])).map((row) => openedJob(row, this.#secrets)));
  }

  async countJobs(zoneId: string): Promise<number> {
    return this.#run(async () => (await this.#db.query<{ n: number }>(SQL.countJobs, [zoneId]))[0]!.n);
  }

  async getJob(zoneId: string, jobId: number): Promise<LogJobRecord | null> {
    return this.#first(SQL.getJob, [jobId, zoneId], (row: JobRow) => openedJob(row, this.#secrets));
  }

  async createJob(zoneId: string, plan: (jobsInZone: number) => NewLogJob): Promise<LogJobRecord> {
    return this.#write(async (client) => {
      // Without the lock two instances could both count n and both add a job past the zone's limit.
      await client.query(SQL.lockZoneJobs, [zoneId]);
      const job = plan((await client.query<{ n: number }>(SQL.countJobs, [zoneId])).rows[0]!.n);
      // The id comes with the row, and the sealed destination is bound to it: written in a second step of the same transaction.
      const id = (await client.query<{ id: number }>(SQL.insertJob, [zoneId, job.enabled ? 1 : 0, '{}', job.heldLocation ?? null])).rows[0]!.id;
      await this.#writeJob(client, { ...job, id });
      return { result: { ...job, id }, changed: true };
    });
  }

  async updateJob(zoneId: string, jobId: number, plan: (current: LogJobRecord) => LogJobRecord): Promise<LogJobRecord | null> {
    return this.#write(async (client) => {
      const row = (await client.query<JobRow>(SQL.lockJob, [jobId, zoneId])).rows[0];
      if (!row) return { result: null, changed: false };
      const next = { ...plan(openedJob(row, this.#secrets)), id: jobId, zoneId };
      await this.#writeJob(client, next);
      return { result: next, changed: true };
    });
  }

  async deleteJob(zoneId: string, jobId: number): Promise<boolean> {
    return this.#write(async (client) => {
      const deleted = (await client.query(SQL.deleteJob, [jobId, zoneId])).rowCount === 1;
      return { result: deleted, changed: deleted };
    });
  }

  async setJobStatus(jobId: number, status: Pick<LogJobRecord, 'lastComplete' | 'lastError' | 'errorMessage'>): Promise<void> {
    // Status is not configuration: the edge's caches do not hold it, so no change is announced.
    await this.#write(async (client) => {
      const row = (await client.query<JobRow>(SQL.lockJobById, [jobId])).rows[0];
      if (row) await this.#writeJob(client, { ...openedJob(row, this.#secrets), ...status });
      return { result: undefined, changed: false };
    });
  }

  async putOwnershipChallenge(challenge: OwnershipChallengeRecord): Promise<void> {
    await this.#write(async (client) => {
      await client.query(SQL.dropExpiredChallenges, [this.#clock.now()]);
      await client.query(SQL.putChallenge, [challenge.zoneId, challenge.destinationConf, challenge.tokenHash, challenge.expires]);
      return { result: undefined, changed: false };
    });
  }

  async claimOwnershipChallenge(challenge: OwnershipChallengeRecord, accountId: string): Promise<'stored' | 'taken'> {
    return this.#write(async (client) => {
      const now = this.#clock.now();
      await client.query(SQL.lockChallengeClaims);
      const { rowCount } = await client.query(SQL.otherAccountsHold, [challenge.destinationConf, accountId, now]);
      if (rowCount !== 0) return { result: 'taken', changed: false };
      await client.query(SQL.dropExpiredChallenges, [now]);
      await client.query(SQL.putChallenge, [challenge.zoneId, challenge.destinationConf, challenge.tokenHash, challenge.expires]);
      return { result: 'stored', changed: false };
    });
  }

  async getOwnershipChallenge(zoneId: string, destinationConf: string): Promise<OwnershipChallengeRecord | null> {
    return this.#first(SQL.getChallenge, [zoneId, destinationConf], (row: { token_hash: string; expires: number }) => ({
      zoneId,
      destinationConf,
      tokenHash: row.token_hash,
      expires: row.expires,
    }));
  }

  async createSession(session: SessionRecord, keepPerAccount: number): Promise<void> {
    await this.#write(async (client) => {
      await client.query(SQL.dropExpiredSessions, [session.created]);
      await client.query(SQL.insertSession, [session.id, session.accountId, session.keyHash, session.csrfToken, session.created, session.expires]);
      await client.query(SQL.dropOldestSessions, [session.accountId, session.id, Math.max(0, keepPerAccount - 1)]);
      return { result: undefined, changed: false };
    });
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    return this.#first(SQL.getSession, [id], toSession);
  }

  async deleteSession(id: string): Promise<void> {
    await this.#run(() => this.#db.query(SQL.deleteSession, [id]));
  }

  /** Waits for the calls under way, then refuses new ones and stops hearing other instances. The PgDatabase stays open. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
    this.#changeListeners.length = 0;
  }

  /** The first row of a read, mapped; null when there is none. */
  #first<Row extends object, T>(sql: string, values: readonly unknown[], map: (row: Row) => T): Promise<T | null> {
    return this.#run(async () => {
      const row = (await this.#db.query<Row>(sql, values))[0];
      return row ? map(row) : null;
    });
  }

  /** Runs one call of the store, refused once closed and awaited by close(). */
  #run<T>(operation: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('The control store is closed.'));
    const promise = operation();
    this.#pending.add(promise);
    const forget = () => this.#pending.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  /**
   * One write transaction. A change is announced on the channel inside it (other instances hear
   * it when it commits) and to this store's listeners right after the commit, before the write
   * resolves, so this instance's next read through a cache sees it.
   */
  async #write<T>(work: (client: PgClient) => Promise<Outcome<T>>): Promise<T> {
    const outcome = await this.#run(() =>
      this.#db.transaction(async (client) => {
        const done = await work(client);
        if (done.changed) await this.#db.notify(CHANGE_CHANNEL, this.#id, client);
        return done;
      }),
    );
    if (outcome.changed) this.#announce();
    return outcome.result;
  }

  async #writeJob(client: PgClient, job: LogJobRecord): Promise<void> {
    await client.query(SQL.updateJob, [job.enabled ? 1 : 0, sealedJobJson(job, this.#secrets), job.id, job.heldLocation ?? null]);
  }

  #announce(): void {
    for (const listener of this.#changeListeners) listener();
  }
}

function rulesetValues(ruleset: RulesetRecord): unknown[] {
  return [
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
  ];
}

async function updateRuleset(client: PgClient, next: RulesetRecord, id: string): Promise<void> {
  await client.query(SQL.updateRuleset, [
    next.name,
    next.description,
    next.version,
    next.lastUpdated,
    JSON.stringify(next.rules),
    customFieldsOf(next),
    JSON.stringify(next.history ?? []),
    id,
  ]);
}
