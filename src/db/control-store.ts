/**
 * ControlStore: the one asynchronous interface to the control plane's data: accounts, zones,
 * custom-fields rulesets, log jobs, destination ownership challenges and dashboard sessions
 * (S3 access keys, with their owners, live in the object store's metadata). SQLite (src/db/sqlite/sqlite-control-store.ts) and PostgreSQL (src/db/postgres/
 * pg-control-store.ts, shared by several instances) implement it; callers never see SQL, and
 * open it through src/db/open-control-store.ts.
 *
 * Writes that depend on current state take a `plan` callback that runs inside the write's
 * transaction with the current row and returns the row to store (or throws, which writes nothing).
 * Plans must be synchronous and pure: on PostgreSQL a plan can run more than once (a transaction
 * retried after a deadlock, an entry point another instance created meanwhile), and only the last
 * run's row is stored. Every write is visible to every later read, on any instance, once it resolves.
 */
import type { ApiTokenStore } from './api-tokens/api-token-store.ts';

export interface AccountRecord {
  /** 32 lowercase hex characters. */
  id: string;
  /** Unique, compared case-insensitively. */
  email: string;
  name: string;
  /** `scrypt$N$r$p$<salt b64>$<hash b64>` of the API key; the key itself is never stored. */
  keyHash: string;
  /** Epoch ms. */
  created: number;
}

export interface ZoneRecord {
  id: string;
  accountId: string;
  /**
   * Lowercase host name, unique across the server (the edge routes by it); never above or under
   * another account's zone's name. It never changes.
   */
  name: string;
  /** Where the edge proxies the zone's requests (an edgeport extension), or null. */
  origin: string | null;
  paused: boolean;
  created: number;
  modified: number;
}

/** The `log_custom_field` action parameters, each a list of names (headers lower case). */
export interface CustomFieldNames {
  requestFields: string[];
  responseFields: string[];
  cookieFields: string[];
}

export interface RuleRecord {
  id: string;
  /** Advances when the rule's definition changes. */
  version: number;
  ref: string;
  action: string;
  expression: string;
  description: string;
  enabled: boolean;
  /** Which of the three arrays were sent (an absent array is not the same as an empty one). */
  actionParameters: Partial<CustomFieldNames>;
  lastUpdated: number;
}

export interface RulesetRecord {
  id: string;
  zoneId: string;
  name: string;
  description: string;
  kind: string;
  phase: string;
  /** Advances on every write. */
  version: number;
  lastUpdated: number;
  rules: RuleRecord[];
  /** Its earlier versions, newest first (bounded by the API's planning; absent: none kept). */
  history?: RulesetVersionRecord[];
}

/** One earlier version of a ruleset (its name, kind and phase never change). */
export interface RulesetVersionRecord {
  version: number;
  description: string;
  lastUpdated: number;
  rules: RuleRecord[];
}

export type TimestampFormat = 'unixnano' | 'unix' | 'rfc3339' | 'rfc3339ms' | 'rfc3339ns';

/** A job's output options with every default filled in. */
export interface LogOutputOptions {
  fieldNames: string[];
  outputType: 'ndjson' | 'csv';
  batchPrefix: string;
  batchSuffix: string;
  recordPrefix: string;
  recordSuffix: string;
  recordDelimiter: string;
  fieldDelimiter: string;
  recordTemplate: string | null;
  timestampFormat: TimestampFormat;
  /** In (0, 1]; applied after the filter. */
  sampleRate: number;
  /** Replace every `${` with `x{` in the output (the `CVE-2021-44228` option). */
  cve202144228: boolean;
}

export interface LogJobRecord {
  /** Integer, assigned by the store, never reused. */
  id: number;
  zoneId: string;
  name: string | null;
  enabled: boolean;
  dataset: string;
  /** `""` (edge jobs are not offered). */
  kind: string;
  frequency: 'high' | 'low';
  /** As sent; stored sealed (it may hold credentials: src/db/secrets). */
  destinationConf: string;
  /** The filter text as sent (parse it with parseFilter from src/logs), or null. */
  filter: string | null;
  outputOptions: LogOutputOptions;
  /** Deprecated form of the output options, kept as sent. */
  logpullOptions: string | null;
  maxUploadBytes: number | null;
  maxUploadRecords: number | null;
  maxUploadIntervalSeconds: number | null;
  /** Status, written by the log pipeline: epoch ms of the end of the last delivered range. */
  lastComplete: number | null;
  /** Epoch ms of the last failure, null when none since the last success. */
  lastError: number | null;
  errorMessage: string | null;
  created: number;
  modified: number;
  /**
   * file:// jobs: the location (`file://<real directory>`, as ownership challenges name it) the job
   * holds against other accounts' claims for as long as it exists; null or absent for other schemes.
   */
  heldLocation?: string | null;
}

export type NewLogJob = Omit<LogJobRecord, 'id'>;

export interface OwnershipChallengeRecord {
  zoneId: string;
  destinationConf: string;
  /** SHA-256 (hex) of the token written to the destination. */
  tokenHash: string;
  expires: number;
}

/** A dashboard session, kept under the hash of its cookie token. */
export interface SessionRecord {
  /** SHA-256 (base64url) of the cookie's token. */
  id: string;
  accountId: string;
  /** The account's key hash at sign-in (a new key ends the session). */
  keyHash: string;
  csrfToken: string;
  created: number;
  expires: number;
}

/**
 * Why createZone refused a name held in part by another account: `inside` when the new name lies
 * under that account's zone `zoneName` (`www.shop.test` under `shop.test`), `contains` when that
 * account's zone `zoneName` lies under the new name.
 */
export interface ZoneNameConflict {
  conflict: 'inside' | 'contains';
  zoneName: string;
}

export interface ZoneQuery {
  /** Exact name, or a `contains:` / `starts_with:` / `ends_with:` match. */
  name?: { op: 'equal' | 'contains' | 'starts_with' | 'ends_with'; value: string };
  order: 'name' | 'created';
  direction: 'asc' | 'desc';
  offset: number;
  limit: number;
}

export interface ControlStore {
  /** API tokens (`Authorization: Bearer`), in the same database (src/db/api-tokens/). */
  readonly apiTokens: ApiTokenStore;

  // Accounts
  /** 'exists' when the e-mail is taken. */
  createAccount(account: AccountRecord): Promise<'created' | 'exists'>;
  getAccount(id: string): Promise<AccountRecord | null>;
  findAccountByEmail(email: string): Promise<AccountRecord | null>;
  setAccountKeyHash(id: string, keyHash: string): Promise<void>;
  /**
   * Gives the account another e-mail and key hash at once (the operator's sign-in follows
   * EDGEPORT_ADMIN_EMAIL / KEY); 'exists' when another account holds the e-mail, and nothing changes.
   */
  setAccountSignIn(id: string, email: string, keyHash: string): Promise<'updated' | 'exists'>;
  countAccounts(): Promise<number>;
  /** Every account, oldest first (the operator first). */
  listAccounts(): Promise<AccountRecord[]>;
  /** Deletes the account, its dashboard sessions and API tokens; false when there is none. Its zones are the caller's to delete first. */
  deleteAccount(id: string): Promise<boolean>;
  /**
   * The operator's account: the oldest one (the first start's). Only it may use private origins,
   * and it adopts buckets and S3 keys made before accounts owned them.
   */
  firstAccount(): Promise<AccountRecord | null>;

  // Zones (every read and write is scoped by account, except the edge's lookups below)
  /**
   * 'exists' when the name is taken, by any account; a ZoneNameConflict when the name lies under,
   * or holds, a zone of another account (the same account may hold both `shop.test` and
   * `www.shop.test`). Decided inside the insert's transaction, so of two accounts creating
   * `shop.test` and `www.shop.test` at once, on any instances, one gets the conflict.
   */
  createZone(zone: ZoneRecord): Promise<'created' | 'exists' | ZoneNameConflict>;
  getZone(accountId: string, zoneId: string): Promise<ZoneRecord | null>;
  listZones(accountId: string, query: ZoneQuery): Promise<{ zones: ZoneRecord[]; total: number }>;
  /** Null when the zone is not the account's. The plan may not change the zone's name (it throws). */
  updateZone(accountId: string, zoneId: string, plan: (current: ZoneRecord) => ZoneRecord): Promise<ZoneRecord | null>;
  /** Deletes the zone with its rulesets, jobs and challenges; false when it is not the account's. */
  deleteZone(accountId: string, zoneId: string): Promise<boolean>;

  /**
   * Calls `listener` after each committed change to zones, rulesets or log jobs (caches drop their
   * copies): at once for changes made through this store, and on PostgreSQL also for changes made
   * by other instances, as soon as their notification arrives (milliseconds).
   */
  onZoneChange(listener: () => void): void;

  // The edge's per-request lookups (one indexed read each)
  findZoneByName(name: string): Promise<ZoneRecord | null>;
  /** The account holding the zone, or null (the log pipeline's store:// destinations write into that account's buckets). */
  zoneAccount(zoneId: string): Promise<string | null>;
  /** The zone's effective custom fields: the enabled rules of its http_log_custom_fields entry point, merged. */
  getCustomFieldsRule(zoneId: string): Promise<CustomFieldNames | null>;
  listEnabledJobs(zoneId: string): Promise<LogJobRecord[]>;

  // Rulesets (zone level)
  listRulesets(zoneId: string): Promise<RulesetRecord[]>;
  getRuleset(zoneId: string, rulesetId: string): Promise<RulesetRecord | null>;
  getEntrypoint(zoneId: string, phase: string): Promise<RulesetRecord | null>;
  /** 'phase-taken' when the zone already has a `zone` ruleset in that phase. */
  createRuleset(ruleset: RulesetRecord): Promise<'created' | 'phase-taken'>;
  /** Null when there is no such ruleset in the zone. */
  updateRuleset(zoneId: string, rulesetId: string, plan: (current: RulesetRecord) => RulesetRecord): Promise<RulesetRecord | null>;
  /** Creates (plan gets null) or updates the zone's entry point of the phase. */
  putEntrypoint(zoneId: string, phase: string, plan: (current: RulesetRecord | null) => RulesetRecord): Promise<RulesetRecord>;
  deleteRuleset(zoneId: string, rulesetId: string): Promise<boolean>;

  // Log jobs
  listJobs(zoneId: string): Promise<LogJobRecord[]>;
  /** How many jobs the zone has (without opening their sealed destinations). */
  countJobs(zoneId: string): Promise<number>;
  getJob(zoneId: string, jobId: number): Promise<LogJobRecord | null>;
  /** `plan` gets the zone's current job count (to enforce a limit) and returns the new job. */
  createJob(zoneId: string, plan: (jobsInZone: number) => NewLogJob): Promise<LogJobRecord>;
  updateJob(zoneId: string, jobId: number, plan: (current: LogJobRecord) => LogJobRecord): Promise<LogJobRecord | null>;
  deleteJob(zoneId: string, jobId: number): Promise<boolean>;
  /** For the log pipeline: records a delivery outcome. */
  setJobStatus(jobId: number, status: Pick<LogJobRecord, 'lastComplete' | 'lastError' | 'errorMessage'>): Promise<void>;

  // Ownership challenges (one per zone and destination; a new one replaces the old)
  putOwnershipChallenge(challenge: OwnershipChallengeRecord): Promise<void>;
  getOwnershipChallenge(zoneId: string, destinationConf: string): Promise<OwnershipChallengeRecord | null>;
  /**
   * Stores the challenge of a `file://` location for the zone of `accountId`, as putOwnershipChallenge
   * does, unless a zone of another account holds an unexpired challenge, or has a log job (whatever
   * its challenge's age: heldLocation), for the same location, one above it or one below it
   * (`file:///a` is above `file:///a/b`, not above `file:///ab`): then it writes nothing and answers 'taken'. Checked and written in one transaction, so of two accounts
   * claiming overlapping locations at once, one gets 'taken'.
   */
  claimOwnershipChallenge(challenge: OwnershipChallengeRecord, accountId: string): Promise<'stored' | 'taken'>;

  // Dashboard sessions (shared by every instance on the database)
  /**
   * Stores a new session; drops expired ones, and that account's oldest beyond its newest
   * `keepPerAccount`, the new one always kept (another account's sessions are never dropped for it).
   */
  createSession(session: SessionRecord, keepPerAccount: number): Promise<void>;
  getSession(id: string): Promise<SessionRecord | null>;
  deleteSession(id: string): Promise<void>;

  close(): Promise<void>;
}
