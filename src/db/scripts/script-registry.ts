/**
 * ScriptRegistry: the script registry over SQLite or PostgreSQL. Each operation is written once,
 * as a generator that yields its SQL (`?` placeholders, the common subset of both dialects) and
 * receives the rows; a RegistryDriver runs it inside one write transaction (SQLite: synchronously
 * in the WriteQueue's group commit; PostgreSQL: in a transaction, retried on conflicts, so the
 * generators have no effect but their SQL). Every change the edge must see bumps `worker_changes`,
 * which every instance polls (changeSeq) to reload what it serves.
 *
 * Quotas (`[quotas]`): a script keeps its `maxVersionsPerScript` newest versions and the deployed
 * one; the write that makes one too many deletes the oldest others in its own transaction. What
 * the kept versions' modules weigh is the account's script bytes (account_usage, migration 16),
 * charged in the same transaction: a write that would pass the account's quota throws a
 * QuotaRefusal and keeps nothing.
 */
import { randomUUID } from 'node:crypto';
import { toAccountQuotas } from '../../config/quotas.ts';
import type { Clock } from '../../core/clock.ts';
import { QuotaRefusal, toAccountUsage, type AccountQuotas, type AccountUsageRecord } from '../account-usage.ts';
import { SecretBox } from '../../core/crypto/secret-box.ts';
import { workerSecretBinding } from '../secrets/sealed-rows.ts';
import {
  DEFAULT_SETTINGS,
  type DeploymentRecord,
  type ScriptBinding,
  type RouteRecord,
  type RunnableVersion,
  type ScriptModule,
  type ScriptRecord,
  type ScriptSettings,
  type SecretRecord,
  type ServingState,
  type VersionMetadata,
  type VersionRecord,
} from './script-records.ts';

export interface Query {
  sql: string;
  params: unknown[];
}
export type Row = Record<string, unknown>;
export type Op<T> = Generator<Query, T, Row[]>;

export interface RegistryDriver {
  /** Runs `op` in one transaction: its queries see each other's writes, and nothing is written if it throws. */
  run<T>(op: () => Op<T>): Promise<T>;
  close(): Promise<void>;
}

function* q(sql: string, ...params: unknown[]): Op<Row[]> {
  return yield { sql, params };
}

function* one(sql: string, ...params: unknown[]): Op<Row | undefined> {
  return (yield* q(sql, ...params))[0];
}

/**
 * Advances the change counter. Its row is locked until the transaction ends: writes that bump it
 * first are serialized across instances, so the numbers they hand out next never collide.
 */
function* bump(): Op<void> {
  yield* q('UPDATE worker_changes SET seq = seq + 1 WHERE id = 1');
}

function* insertDeployment(deployment: DeploymentRecord): Op<void> {
  const number =
    Number(
      (yield* one('SELECT coalesce(max(number), 0) AS n FROM worker_deployments WHERE account_id = ? AND script = ?', deployment.accountId, deployment.script))
        ?.n ?? 0,
    ) + 1;
  yield* q(
    'INSERT INTO worker_deployments (id, account_id, script, number, created, version_id, message) VALUES (?, ?, ?, ?, ?, ?, ?)',
    deployment.id,
    deployment.accountId,
    deployment.script,
    number,
    deployment.created,
    deployment.versionId,
    deployment.message,
  );
}

/** Stores a version of the script under the next number; answers that number. */
function* insertVersion(version: {
  id: string;
  accountId: string;
  script: string;
  created: number;
  metadata: string;
  modules: string;
  etag: string;
  bytes: number;
}): Op<number> {
  const number =
    Number(
      (yield* one('SELECT coalesce(max(number), 0) AS n FROM worker_versions WHERE account_id = ? AND script = ?', version.accountId, version.script))?.n ?? 0,
    ) + 1;
  yield* q(
    'INSERT INTO worker_versions (id, account_id, script, number, created, metadata, modules, etag, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    version.id,
    version.accountId,
    version.script,
    number,
    version.created,
    version.metadata,
    version.modules,
    version.etag,
    version.bytes,
  );
  return number;
}

/** What a version's modules weigh: their decoded bytes (they are kept as base64). */
export function moduleBytes(modules: readonly ScriptModule[]): number {
  return modules.reduce((sum, module) => sum + Buffer.byteLength(module.content, 'base64'), 0);
}

/**
 * The versions a new one of the script pushes out of its history: all but the `keep - 1` newest
 * and the one deployed once the new version is in (`deployedId`).
 */
function* pushedOut(accountId: string, script: string, keep: number, deployedId: string | null): Op<Array<{ id: string; bytes: number }>> {
  const rows = yield* q('SELECT id, bytes FROM worker_versions WHERE account_id = ? AND script = ? ORDER BY number DESC', accountId, script);
  return rows
    .slice(Math.max(keep - 1, 0))
    .filter((row) => String(row.id) !== deployedId)
    .map((row) => ({ id: String(row.id), bytes: Number(row.bytes) }));
}

/**
 * Adds `bytes` (negative: frees them) to the account's script bytes, or throws a QuotaRefusal when
 * that would pass its quota: its own, or `max` (0: no limit). Freeing is never refused.
 */
function* chargeScripts(accountId: string, bytes: number, max: number): Op<void> {
  if (bytes <= 0) {
    if (bytes < 0) {
      yield* q(
        `INSERT INTO account_usage (account_id, script_bytes) VALUES (?, CAST(? AS BIGINT))
        ON CONFLICT (account_id) DO UPDATE SET script_bytes = account_usage.script_bytes + excluded.script_bytes`,
        accountId,
        bytes,
      );
    }
    return;
  }
  yield* q('INSERT INTO account_usage (account_id) VALUES (?) ON CONFLICT (account_id) DO NOTHING', accountId);
  const charged = yield* q(
    `UPDATE account_usage SET script_bytes = script_bytes + CAST(? AS BIGINT)
    WHERE account_id = ? AND script_bytes + CAST(? AS BIGINT) <= coalesce(nullif(coalesce(max_script_bytes, CAST(? AS BIGINT)), 0), 9223372036854775807)
    RETURNING script_bytes`,
    bytes,
    accountId,
    bytes,
    max,
  );
  if (charged.length > 0) return;
  const usage = toAccountUsage((yield* one('SELECT * FROM account_usage WHERE account_id = ?', accountId)) as AccountUsageRecord | undefined, {
    ...toAccountQuotas(undefined),
    maxScriptBytes: max,
  });
  throw new QuotaRefusal('maxScriptBytes', usage.quotas.maxScriptBytes, usage.scriptBytes, bytes);
}

/** Deletes versions a new one pushed out of the script's history. */
function* deleteVersions(ids: readonly string[]): Op<void> {
  for (const id of ids) yield* q('DELETE FROM worker_versions WHERE id = ?', id);
}

/** The script's secrets by name, opened (they are stored sealed, each bound to its row). */
function* openedSecrets(box: SecretBox, accountId: string, script: string): Op<Record<string, string>> {
  const secrets: Record<string, string> = {};
  for (const row of yield* q('SELECT name, value FROM worker_secrets WHERE account_id = ? AND script = ?', accountId, script)) {
    secrets[String(row.name)] = box.open(String(row.value), workerSecretBinding(accountId, script, String(row.name)));
  }
  return secrets;
}

function* secretRows(accountId: string, script: string): Op<SecretRecord[]> {
  return (yield* q('SELECT name FROM worker_secrets WHERE account_id = ? AND script = ? ORDER BY name', accountId, script)).map((row) => ({
    name: String(row.name),
    type: 'secret_text' as const,
  }));
}

/**
 * A version's bindings with its script's secrets as `secret_text` bindings: `changes` written
 * (a value) or deleted (null). A secret never hides another binding of its name.
 */
export function withSecretBindings(bindings: readonly ScriptBinding[], changes: Readonly<Record<string, string | null>>): ScriptBinding[] {
  const result = bindings.filter((binding) => !(binding.type === 'secret_text' && changes[binding.name] === null));
  for (const [secret, value] of Object.entries(changes)) {
    if (value !== null && !result.some((binding) => binding.name === secret)) result.push({ type: 'secret_text', name: secret });
  }
  return result;
}

function toVersion(row: Row): VersionRecord {
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    script: String(row.script),
    number: Number(row.number),
    created: Number(row.created),
    metadata: JSON.parse(String(row.metadata)) as VersionMetadata,
    etag: String(row.etag),
  };
}

function toDeployment(row: Row): DeploymentRecord {
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    script: String(row.script),
    created: Number(row.created),
    versionId: String(row.version_id),
    message: row.message === null || row.message === undefined ? null : String(row.message),
  };
}

function toRoute(row: Row): RouteRecord {
  return {
    id: String(row.id),
    zoneId: String(row.zone_id),
    accountId: String(row.account_id),
    pattern: String(row.pattern),
    script: row.script === null ? null : String(row.script),
    customDomain: Number(row.custom_domain ?? 0) === 1,
  };
}

function* latestDeployment(accountId: string, script: string): Op<DeploymentRecord | null> {
  const row = yield* one('SELECT * FROM worker_deployments WHERE account_id = ? AND script = ? ORDER BY number DESC LIMIT 1', accountId, script);
  return row ? toDeployment(row) : null;
}

function* scriptRow(accountId: string, name: string): Op<ScriptRecord | null> {
  const row = yield* one('SELECT * FROM worker_scripts WHERE account_id = ? AND name = ?', accountId, name);
  if (!row) return null;
  return {
    accountId,
    name,
    created: Number(row.created),
    modified: Number(row.modified),
    settings: { ...DEFAULT_SETTINGS, ...(JSON.parse(String(row.settings)) as Partial<ScriptSettings>) },
    devEnabled: Number(row.dev_enabled) === 1,
    deployment: yield* latestDeployment(accountId, name),
  };
}

export interface NewVersion {
  metadata: VersionMetadata;
  modules: ScriptModule[];
  etag: string;
}

export type UploadOutcome =
  { kind: 'ok'; script: ScriptRecord; version: VersionRecord; deployment: DeploymentRecord | null; pruned: number } | { kind: 'limit'; limit: number };

export type RouteOutcome = { kind: 'ok'; route: RouteRecord } | { kind: 'duplicate' } | { kind: 'limit'; limit: number } | { kind: 'no-script' };

export class ScriptRegistry {
  readonly #driver: RegistryDriver;
  readonly #clock: Clock;
  readonly #quotas: AccountQuotas;
  readonly #secrets: SecretBox;

  /**
   * `quotas`: the server's `[quotas]` (versions kept per script; script bytes of accounts with no
   * quota of their own). `secrets` seals and opens the scripts' secret values (src/db/secrets);
   * locked, they can be neither written nor read.
   */
  constructor(driver: RegistryDriver, clock: Clock, options: { quotas?: AccountQuotas; secrets?: SecretBox } = {}) {
    this.#driver = driver;
    this.#clock = clock;
    this.#quotas = options.quotas ?? toAccountQuotas(undefined);
    this.#secrets = options.secrets ?? SecretBox.locked();
  }

  close(): Promise<void> {
    return this.#driver.close();
  }

  /** Advances whenever what the edge serves changes, on any instance sharing the database. */
  changeSeq(): Promise<number> {
    return this.#driver.run(function* seq() {
      return Number((yield* one('SELECT seq FROM worker_changes WHERE id = 1'))?.seq ?? 0);
    });
  }

  getScript(accountId: string, name: string): Promise<ScriptRecord | null> {
    return this.#driver.run(() => scriptRow(accountId, name));
  }

  listScripts(accountId: string): Promise<ScriptRecord[]> {
    return this.#driver.run(function* list() {
      const rows = yield* q('SELECT name FROM worker_scripts WHERE account_id = ? ORDER BY name', accountId);
      const scripts: ScriptRecord[] = [];
      for (const row of rows) scripts.push((yield* scriptRow(accountId, String(row.name)))!);
      return scripts;
    });
  }

  /**
   * Stores a new version of the script (made when missing, unless the account has `maxScripts`),
   * deployed at once when `deploy`; otherwise it waits for a deployment. Versions it pushes out of
   * the script's history are deleted with it (`pruned`: how many). `settings`: script-level
   * settings the upload's metadata carries (logpush, observability, ...), applied with it. Throws a
   * QuotaRefusal, storing nothing, when the account's script bytes would pass its quota.
   */
  uploadVersion(
    accountId: string,
    name: string,
    upload: NewVersion,
    options: { deploy: boolean; maxScripts: number; message?: string; settings?: Partial<ScriptSettings> },
  ): Promise<UploadOutcome> {
    const now = this.#clock.now();
    const versionId = randomUUID();
    const deploymentId = randomUUID();
    const { maxVersionsPerScript, maxScriptBytes } = this.#quotas;
    return this.#driver.run(function* uploadOp(): Op<UploadOutcome> {
      yield* bump();
      const existing = yield* one('SELECT name FROM worker_scripts WHERE account_id = ? AND name = ?', accountId, name);
      if (!existing) {
        const count = Number((yield* one('SELECT count(*) AS n FROM worker_scripts WHERE account_id = ?', accountId))?.n ?? 0);
        if (count >= options.maxScripts) return { kind: 'limit', limit: options.maxScripts };
      }
      const deployedId = options.deploy ? versionId : ((yield* latestDeployment(accountId, name))?.versionId ?? null);
      const pruned = yield* pushedOut(accountId, name, maxVersionsPerScript, deployedId);
      const bytes = moduleBytes(upload.modules);
      yield* chargeScripts(accountId, bytes - pruned.reduce((sum, version) => sum + version.bytes, 0), maxScriptBytes);
      if (!existing) {
        yield* q(
          'INSERT INTO worker_scripts (account_id, name, created, modified, settings, dev_enabled, secrets_stamp) VALUES (?, ?, ?, ?, ?, 1, ?)',
          accountId,
          name,
          now,
          now,
          JSON.stringify({ ...DEFAULT_SETTINGS, ...options.settings }),
          now,
        );
      } else if (options.settings !== undefined && Object.keys(options.settings).length > 0) {
        const settings = { ...(yield* scriptRow(accountId, name))!.settings, ...options.settings };
        yield* q('UPDATE worker_scripts SET modified = ?, settings = ? WHERE account_id = ? AND name = ?', now, JSON.stringify(settings), accountId, name);
      } else {
        yield* q('UPDATE worker_scripts SET modified = ? WHERE account_id = ? AND name = ?', now, accountId, name);
      }
      // The script's secrets are the version's too (they are the script's here): its bindings list them.
      const secrets = Object.fromEntries((yield* secretRows(accountId, name)).map((secret) => [secret.name, '']));
      const metadata: VersionMetadata = { ...upload.metadata, bindings: withSecretBindings(upload.metadata.bindings, secrets) };
      const number = yield* insertVersion({
        id: versionId,
        accountId,
        script: name,
        created: now,
        metadata: JSON.stringify(metadata),
        modules: JSON.stringify(upload.modules),
        etag: upload.etag,
        bytes,
      });
      yield* deleteVersions(pruned.map((version) => version.id));
      if (options.deploy) yield* insertDeployment({ id: deploymentId, accountId, script: name, created: now, versionId, message: options.message ?? null });
      const version: VersionRecord = { id: versionId, accountId, script: name, number, created: now, metadata, etag: upload.etag };
      const script = (yield* scriptRow(accountId, name))!;
      return { kind: 'ok', script, version, deployment: options.deploy ? script.deployment : null, pruned: pruned.length };
    });
  }

  /**
   * The refusal an upload of `upload` would meet (its bytes, less those of the versions it would
   * push out, past the account's script quota), or null: checked before the upload's trial start,
   * which is costly. The upload itself checks again, exactly.
   */
  quotaRefusal(accountId: string, name: string, upload: NewVersion, deploy: boolean): Promise<QuotaRefusal | null> {
    const { maxVersionsPerScript, maxScriptBytes } = this.#quotas;
    return this.#driver.run(function* checkOp(): Op<QuotaRefusal | null> {
      const deployedId = deploy ? '' : ((yield* latestDeployment(accountId, name))?.versionId ?? null);
      const pruned = yield* pushedOut(accountId, name, maxVersionsPerScript, deployedId);
      const adding = moduleBytes(upload.modules) - pruned.reduce((sum, version) => sum + version.bytes, 0);
      const usage = toAccountUsage((yield* one('SELECT * FROM account_usage WHERE account_id = ?', accountId)) as AccountUsageRecord | undefined, {
        ...toAccountQuotas(undefined),
        maxScriptBytes,
      });
      const limit = usage.quotas.maxScriptBytes;
      return adding > 0 && limit > 0 && usage.scriptBytes + adding > limit ? new QuotaRefusal('maxScriptBytes', limit, usage.scriptBytes, adding) : null;
    });
  }

  /** Deletes the script with its versions, deployments, secrets and routes; false when there was none. */
  deleteScript(accountId: string, name: string): Promise<boolean> {
    return this.#driver.run(function* deleteOp() {
      const found = yield* one('SELECT name FROM worker_scripts WHERE account_id = ? AND name = ?', accountId, name);
      if (!found) return false;
      const kept = Number(
        (yield* one('SELECT coalesce(sum(bytes), 0) AS n FROM worker_versions WHERE account_id = ? AND script = ?', accountId, name))?.n ?? 0,
      );
      yield* chargeScripts(accountId, -kept, 0);
      for (const table of ['worker_scripts', 'worker_versions', 'worker_deployments', 'worker_secrets']) {
        yield* q(`DELETE FROM ${table} WHERE account_id = ? AND ${table === 'worker_scripts' ? 'name' : 'script'} = ?`, accountId, name);
      }
      yield* q('DELETE FROM worker_routes WHERE account_id = ? AND script = ?', accountId, name);
      yield* bump();
      return true;
    });
  }

  listVersions(accountId: string, name: string): Promise<VersionRecord[]> {
    return this.#driver.run(function* versions() {
      return (yield* q(
        'SELECT id, account_id, script, number, created, metadata, etag FROM worker_versions WHERE account_id = ? AND script = ? ORDER BY number DESC',
        accountId,
        name,
      )).map(toVersion);
    });
  }

  getVersion(accountId: string, name: string, id: string): Promise<VersionRecord | null> {
    return this.#driver.run(function* version() {
      const row = yield* one(
        'SELECT id, account_id, script, number, created, metadata, etag FROM worker_versions WHERE account_id = ? AND script = ? AND id = ?',
        accountId,
        name,
        id,
      );
      return row ? toVersion(row) : null;
    });
  }

  /** A version with its modules and the script's secrets, for a host to run. */
  runnable(accountId: string, name: string, versionId: string): Promise<RunnableVersion | null> {
    const box = this.#secrets;
    return this.#driver.run(function* runnableOp() {
      const row = yield* one('SELECT * FROM worker_versions WHERE account_id = ? AND script = ? AND id = ?', accountId, name, versionId);
      if (!row) return null;
      return { version: toVersion(row), modules: JSON.parse(String(row.modules)) as ScriptModule[], secrets: yield* openedSecrets(box, accountId, name) };
    });
  }

  /** The script's secrets with their values (for a trial start of a new version; never for an answer). */
  secretValues(accountId: string, name: string): Promise<Record<string, string>> {
    const box = this.#secrets;
    return this.#driver.run(() => openedSecrets(box, accountId, name));
  }

  /** Deploys one of the script's versions; null when the script or the version is not the account's. */
  deploy(accountId: string, name: string, versionId: string, message: string | null): Promise<DeploymentRecord | null> {
    const deployment: DeploymentRecord = { id: randomUUID(), accountId, script: name, created: this.#clock.now(), versionId, message };
    return this.#driver.run(function* deployOp() {
      const version = yield* one('SELECT id FROM worker_versions WHERE account_id = ? AND script = ? AND id = ?', accountId, name, versionId);
      if (!version) return null;
      yield* bump();
      yield* insertDeployment(deployment);
      return deployment;
    });
  }

  listDeployments(accountId: string, name: string): Promise<DeploymentRecord[]> {
    return this.#driver.run(function* deployments() {
      return (yield* q('SELECT * FROM worker_deployments WHERE account_id = ? AND script = ? ORDER BY number DESC', accountId, name)).map(toDeployment);
    });
  }

  /** Deletes one of the script's deployments: not the latest one, which serves (`latest`); `missing` when it is not the script's. */
  deleteDeployment(accountId: string, name: string, id: string): Promise<'ok' | 'latest' | 'missing'> {
    return this.#driver.run(function* deleteDeploymentOp() {
      const row = yield* one('SELECT id FROM worker_deployments WHERE account_id = ? AND script = ? AND id = ?', accountId, name, id);
      if (!row) return 'missing' as const;
      if ((yield* latestDeployment(accountId, name))?.id === id) return 'latest' as const;
      yield* q('DELETE FROM worker_deployments WHERE id = ? AND account_id = ?', id, accountId);
      return 'ok' as const;
    });
  }

  listSecrets(accountId: string, name: string): Promise<SecretRecord[]> {
    return this.#driver.run(() => secretRows(accountId, name));
  }

  /**
   * Writes (value) or deletes (null) a secret of an existing script; false when the script, or the
   * secret to delete, is missing. See setSecrets for the version it makes.
   */
  async setSecret(
    accountId: string,
    name: string,
    secret: string,
    value: string | null,
    options: { asVersion: boolean } = { asVersion: true },
  ): Promise<boolean> {
    const outcome = await this.setSecrets(accountId, name, { [secret]: value }, { asVersion: options.asVersion ? 'deployed' : false, strict: true });
    return outcome !== null;
  }

  /**
   * Writes (a value) or deletes (null) several secrets of an existing script in one transaction;
   * null when the script is missing, or (`strict`) a secret to delete is. As on the platform, a
   * script with a deployment gets a new version (the deployed one's copy, `triggeredBy: 'secret'`,
   * its secret bindings changed alike) deployed at once, so `wrangler versions list` and
   * `deployments list` show the change. `asVersion: 'latest'`: the copy is of the newest version
   * and is not deployed (`wrangler versions secret put`; the secrets themselves are the script's,
   * so the deployed version gets them at once too). `asVersion: false`: the secrets that came with
   * an upload, which is itself the new version. That copy counts against the script's versions and
   * the account's script bytes like an upload (a QuotaRefusal changes nothing).
   */
  async setSecrets(
    accountId: string,
    name: string,
    changes: Readonly<Record<string, string | null>>,
    options: { asVersion: 'deployed' | 'latest' | false; strict?: boolean; annotations?: VersionMetadata['annotations'] },
  ): Promise<{ secrets: SecretRecord[]; version: VersionRecord | null } | null> {
    const now = this.#clock.now();
    const sealed = Object.entries(changes).map(
      ([secret, value]) => [secret, value === null ? null : this.#secrets.seal(value, workerSecretBinding(accountId, name, secret))] as const,
    );
    const versionId = randomUUID();
    const deploymentId = randomUUID();
    const { maxVersionsPerScript, maxScriptBytes } = this.#quotas;
    return this.#driver.run(function* secretsOp() {
      if (!(yield* one('SELECT name FROM worker_scripts WHERE account_id = ? AND name = ?', accountId, name))) return null;
      const current = new Set((yield* secretRows(accountId, name)).map((secret) => secret.name));
      if (options.strict && sealed.some(([secret, value]) => value === null && !current.has(secret))) return null;
      for (const [secret, value] of sealed) {
        if (value === null) {
          yield* q('DELETE FROM worker_secrets WHERE account_id = ? AND script = ? AND name = ?', accountId, name, secret);
        } else {
          yield* q(
            `INSERT INTO worker_secrets (account_id, script, name, type, value) VALUES (?, ?, ?, 'secret_text', ?)
            ON CONFLICT (account_id, script, name) DO UPDATE SET value = excluded.value`,
            accountId,
            name,
            secret,
            value,
          );
        }
      }
      yield* q('UPDATE worker_scripts SET secrets_stamp = secrets_stamp + 1, modified = ? WHERE account_id = ? AND name = ?', now, accountId, name);
      const source =
        options.asVersion === 'deployed'
          ? yield* one(
              `SELECT v.* FROM worker_deployments d JOIN worker_versions v ON v.account_id = d.account_id AND v.script = d.script AND v.id = d.version_id
          WHERE d.account_id = ? AND d.script = ? ORDER BY d.number DESC LIMIT 1`,
              accountId,
              name,
            )
          : options.asVersion === 'latest'
            ? yield* one('SELECT * FROM worker_versions WHERE account_id = ? AND script = ? ORDER BY number DESC LIMIT 1', accountId, name)
            : undefined;
      let version: VersionRecord | null = null;
      if (source) {
        const metadata = JSON.parse(String(source.metadata)) as VersionMetadata;
        const copied: VersionMetadata = {
          ...metadata,
          bindings: withSecretBindings(metadata.bindings, changes),
          annotations: { ...options.annotations, triggeredBy: 'secret' },
        };
        const deploy = options.asVersion === 'deployed';
        const pruned = yield* pushedOut(
          accountId,
          name,
          maxVersionsPerScript,
          deploy ? versionId : ((yield* latestDeployment(accountId, name))?.versionId ?? null),
        );
        const bytes = Number(source.bytes);
        yield* chargeScripts(accountId, bytes - pruned.reduce((sum, pushed) => sum + pushed.bytes, 0), maxScriptBytes);
        const number = yield* insertVersion({
          id: versionId,
          accountId,
          script: name,
          created: now,
          metadata: JSON.stringify(copied),
          modules: String(source.modules),
          etag: String(source.etag),
          bytes,
        });
        yield* deleteVersions(pruned.map((pushed) => pushed.id));
        if (deploy) yield* insertDeployment({ id: deploymentId, accountId, script: name, created: now, versionId, message: null });
        version = { id: versionId, accountId, script: name, number, created: now, metadata: copied, etag: String(source.etag) };
      }
      yield* bump();
      return { secrets: yield* secretRows(accountId, name), version };
    });
  }

  /** Changes settings and whether the dev subdomain serves the script; null when the script is missing. */
  updateScript(accountId: string, name: string, change: { settings?: Partial<ScriptSettings>; devEnabled?: boolean }): Promise<ScriptRecord | null> {
    const now = this.#clock.now();
    return this.#driver.run(function* updateOp() {
      const script = yield* scriptRow(accountId, name);
      if (!script) return null;
      const settings = { ...script.settings, ...change.settings };
      const devEnabled = change.devEnabled ?? script.devEnabled;
      yield* q(
        'UPDATE worker_scripts SET settings = ?, dev_enabled = ?, modified = ? WHERE account_id = ? AND name = ?',
        JSON.stringify(settings),
        devEnabled ? 1 : 0,
        now,
        accountId,
        name,
      );
      if (devEnabled !== script.devEnabled) yield* bump();
      return { ...script, settings, devEnabled, modified: now };
    });
  }

  listZoneRoutes(zoneId: string): Promise<RouteRecord[]> {
    return this.#driver.run(function* routes() {
      return (yield* q('SELECT * FROM worker_routes WHERE zone_id = ? ORDER BY pattern', zoneId)).map(toRoute);
    });
  }

  /** The account's custom domains' routes (every script's). */
  listCustomDomains(accountId: string): Promise<RouteRecord[]> {
    return this.#driver.run(function* domains() {
      return (yield* q('SELECT * FROM worker_routes WHERE account_id = ? AND custom_domain = 1 ORDER BY pattern', accountId)).map(toRoute);
    });
  }

  listScriptRoutes(accountId: string, name: string): Promise<RouteRecord[]> {
    return this.#driver.run(function* routes() {
      return (yield* q('SELECT * FROM worker_routes WHERE account_id = ? AND script = ? ORDER BY pattern', accountId, name)).map(toRoute);
    });
  }

  /**
   * Adds a route (id absent) or changes one of the zone's (id given); refused when another route
   * holds the pattern, the zone has `maxRoutes`, or the script is not the account's.
   */
  putRoute(route: Omit<RouteRecord, 'id'> & { id?: string }, maxRoutes: number): Promise<RouteOutcome | null> {
    const id = route.id ?? randomUUID().replace(/-/g, '');
    return this.#driver.run(function* putRouteOp(): Op<RouteOutcome | null> {
      if (route.id !== undefined && !(yield* one('SELECT id FROM worker_routes WHERE id = ? AND zone_id = ?', route.id, route.zoneId))) return null;
      if (route.script !== null && !(yield* one('SELECT name FROM worker_scripts WHERE account_id = ? AND name = ?', route.accountId, route.script)))
        return { kind: 'no-script' };
      const holder = yield* one('SELECT id FROM worker_routes WHERE pattern = ?', route.pattern);
      if (holder && String(holder.id) !== id) return { kind: 'duplicate' };
      if (route.id === undefined) {
        const count = Number((yield* one('SELECT count(*) AS n FROM worker_routes WHERE zone_id = ?', route.zoneId))?.n ?? 0);
        if (count >= maxRoutes) return { kind: 'limit', limit: maxRoutes };
        yield* q(
          'INSERT INTO worker_routes (id, zone_id, account_id, pattern, script, custom_domain) VALUES (?, ?, ?, ?, ?, ?)',
          id,
          route.zoneId,
          route.accountId,
          route.pattern,
          route.script,
          route.customDomain ? 1 : 0,
        );
      } else {
        // A change that does not say keeps whether the route is a custom domain's.
        yield* q(
          'UPDATE worker_routes SET pattern = ?, script = ?, custom_domain = coalesce(?, custom_domain) WHERE id = ?',
          route.pattern,
          route.script,
          route.customDomain === undefined ? null : route.customDomain ? 1 : 0,
          id,
        );
      }
      yield* bump();
      return { kind: 'ok', route: { ...route, id } };
    });
  }

  getRoute(zoneId: string, id: string): Promise<RouteRecord | null> {
    return this.#driver.run(function* getRouteOp() {
      const row = yield* one('SELECT * FROM worker_routes WHERE id = ? AND zone_id = ?', id, zoneId);
      return row ? toRoute(row) : null;
    });
  }

  deleteRoute(zoneId: string, id: string): Promise<boolean> {
    return this.#driver.run(function* deleteRouteOp() {
      if (!(yield* one('SELECT id FROM worker_routes WHERE id = ? AND zone_id = ?', id, zoneId))) return false;
      yield* q('DELETE FROM worker_routes WHERE id = ?', id);
      yield* bump();
      return true;
    });
  }

  getSubdomain(accountId: string): Promise<string | null> {
    return this.#driver.run(function* subdomainOp() {
      const row = yield* one('SELECT subdomain FROM worker_subdomains WHERE account_id = ?', accountId);
      return row ? String(row.subdomain) : null;
    });
  }

  /** Gives up the account's subdomain (its scripts are no longer served on the dev domain); false when it had none. */
  deleteSubdomain(accountId: string): Promise<boolean> {
    return this.#driver.run(function* deleteSubdomainOp() {
      if (!(yield* one('SELECT subdomain FROM worker_subdomains WHERE account_id = ?', accountId))) return false;
      yield* q('DELETE FROM worker_subdomains WHERE account_id = ?', accountId);
      yield* bump();
      return true;
    });
  }

  /** Sets the account's subdomain; false when another account holds it. */
  setSubdomain(accountId: string, subdomain: string): Promise<boolean> {
    return this.#driver.run(function* setSubdomainOp() {
      const holder = yield* one('SELECT account_id FROM worker_subdomains WHERE subdomain = ?', subdomain);
      if (holder && String(holder.account_id) !== accountId) return false;
      yield* q(
        'INSERT INTO worker_subdomains (account_id, subdomain) VALUES (?, ?) ON CONFLICT (account_id) DO UPDATE SET subdomain = excluded.subdomain',
        accountId,
        subdomain,
      );
      yield* bump();
      return true;
    });
  }

  /** Everything the edge serves: each deployed script's current version, the routes, the subdomains. */
  servingState(): Promise<ServingState> {
    return this.#driver.run(function* servingOp(): Op<ServingState> {
      const scripts = yield* q(`SELECT s.account_id, s.name, s.dev_enabled, s.secrets_stamp, d.version_id FROM worker_scripts s
        JOIN worker_deployments d ON d.account_id = s.account_id AND d.script = s.name
        WHERE d.id = (SELECT d2.id FROM worker_deployments d2 WHERE d2.account_id = s.account_id AND d2.script = s.name ORDER BY d2.number DESC LIMIT 1)`);
      const routes = yield* q('SELECT pattern, account_id, script FROM worker_routes');
      const subdomains = yield* q('SELECT account_id, subdomain FROM worker_subdomains');
      return {
        scripts: scripts.map((row) => ({
          accountId: String(row.account_id),
          name: String(row.name),
          versionId: String(row.version_id),
          devEnabled: Number(row.dev_enabled) === 1,
          key: `${String(row.version_id)}:${Number(row.secrets_stamp)}`,
        })),
        routes: routes.map((row) => ({
          pattern: String(row.pattern),
          accountId: String(row.account_id),
          script: row.script === null ? null : String(row.script),
        })),
        subdomains: subdomains.map((row) => ({ accountId: String(row.account_id), subdomain: String(row.subdomain) })),
      };
    });
  }
}
