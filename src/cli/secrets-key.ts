/**
 * Where a data dir's secrets key comes from, and what `edgeport start` does with it before any
 * store opens:
 *
 * - `[secrets] key` / EDGEPORT_SECRETS_KEY (the base64 of 32 bytes), when given;
 * - else the file `[secrets] key_file` / EDGEPORT_SECRETS_KEY_FILE names, which must exist;
 * - else `<data-dir>/secrets.key`, which the first start on SQLite makes (mode 0600, written
 *   durably before anything is sealed with it). On PostgreSQL a start with none of the three is
 *   refused: every instance needs the same key, and a key made in one instance's data dir would
 *   leave the others (and that instance, once its data dir is gone) unable to read a secret.
 *
 * Then the database is sealed with the key (a database from before sealing: every clear value, in
 * one transaction) or checked against it (the key id and check value kept in the database), and a
 * start with another key is refused before anything is read or written. A rotation interrupted
 * after its commit (secrets.ts) left the new key in `<key file>.new`: the start sees that the
 * database is sealed with it and puts it in place of the old one.
 */
import { existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { formatSecretsKey, generateSecretsKey, parseSecretsKey, SecretBox, type SecretsKey } from '../core/crypto/secret-box.ts';
import { syncDirectory } from '../core/fs/durable-file.ts';
import type { Logger } from '../core/log.ts';
import type { Config } from '../config/schema.ts';
import type { PgDatabase } from '../db/postgres/pg-database.ts';
import { ensureSealed, holdInstanceLock, pgSealingTarget, sealedKeyId, sqliteSealingTarget, type SealingTarget } from '../db/secrets/sealing.ts';
import { DATABASE_FILE } from './backup-layout.ts';
import { CliError } from './cli-errors.ts';

/** The key file's name in the data dir, when neither `[secrets] key` nor `key_file` is given. */
export const KEY_FILE = 'secrets.key';

/** How to make a key, for messages. */
export const MAKE_KEY = 'head -c 32 /dev/urandom | base64';

/** `<data-dir>/secrets.key`, written as the data dir was given (`./solo/secrets.key`), for messages as for use. */
export function dataDirKeyFile(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, '')}/${KEY_FILE}`;
}

export type KeySource =
  | { kind: 'value'; text: string; label: string }
  /** `configured`: named by `[secrets] key_file` (never made by edgeport), else the data dir's default. */
  | { kind: 'file'; path: string; configured: boolean; label: string };

export function keySource(config: Readonly<Config>): KeySource {
  if (config.secrets.key !== undefined) return { kind: 'value', text: config.secrets.key, label: 'EDGEPORT_SECRETS_KEY or [secrets] key' };
  if (config.secrets.keyFile !== undefined)
    return { kind: 'file', path: config.secrets.keyFile, configured: true, label: `the key file ${config.secrets.keyFile} ([secrets] key_file)` };
  const path = dataDirKeyFile(config.dataDir);
  return { kind: 'file', path, configured: false, label: `the key file ${path}` };
}

/** The key of `source`; undefined when it is a file that does not exist. */
export function readKey(source: KeySource): SecretsKey | undefined {
  if (source.kind === 'value') return parsed(source.text, source.label);
  if (!existsSync(source.path)) return undefined;
  return readKeyFile(source.path, source.label);
}

export function readKeyFile(path: string, label: string = `the key file ${path}`): SecretsKey {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError('CLI_SECRETS_KEY_INVALID', `${label} cannot be read: ${(error as Error).message}.`, { cause: error });
  }
  return parsed(text, label);
}

function parsed(text: string, label: string): SecretsKey {
  const key = parseSecretsKey(text);
  if (!key) throw new CliError('CLI_SECRETS_KEY_INVALID', `${label} is not a secrets key: it must hold the base64 of 32 random bytes, as made by: ${MAKE_KEY}`);
  return key;
}

/** Writes `key` to `path` durably, readable by its owner only (mode 0600); `path` must not exist. */
export async function writeKeyFile(path: string, key: SecretsKey): Promise<void> {
  const tmp = `${path}.tmp`;
  await rm(tmp, { force: true });
  const file = await open(tmp, 'wx', 0o600);
  try {
    await file.writeFile(formatSecretsKey(key));
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(tmp, path);
  await syncDirectory(dirname(path));
}

/** The database a command works on: SQLite in the data dir, or the instance's PostgreSQL. */
export function sealingTargetFor(config: Readonly<Config>, database: PgDatabase | undefined, now: number): SealingTarget {
  return database ? pgSealingTarget(database) : sqliteSealingTarget(join(config.dataDir, DATABASE_FILE), now);
}

/** Why a start has no key, and how to give it one. */
function missingKey(source: KeySource, database: PgDatabase | undefined, sealedWith: string | null): CliError {
  const how = `give it as EDGEPORT_SECRETS_KEY (or [secrets] key), or in a file named by [secrets] key_file (EDGEPORT_SECRETS_KEY_FILE)`;
  if (sealedWith !== null) {
    return new CliError(
      'CLI_SECRETS_KEY_MISSING',
      `The database's secrets are sealed with secrets key ${sealedWith}, and ${source.label} does not exist: ` +
        `put that key back there, or ${how}. Without it no secret can be read (docs/operations.md, The secrets key).`,
    );
  }
  if (database) {
    return new CliError(
      'CLI_SECRETS_KEY_MISSING',
      `[db] url is PostgreSQL, whose instances must all hold the same secrets key, and none was given: make one with ` +
        `"${MAKE_KEY}" and ${how}, the same on every instance (docs/operations.md, The secrets key).`,
    );
  }
  return new CliError(
    'CLI_SECRETS_KEY_MISSING',
    `${source.label} does not exist: create it (${MAKE_KEY} > FILE; chmod 600 FILE), or name another with [secrets] key_file, or give the key as EDGEPORT_SECRETS_KEY.`,
  );
}

export interface SecretsEvent {
  level: 'info' | 'warn';
  message: string;
  fields: Record<string, unknown>;
}

export interface OpenedSecrets {
  box: SecretBox;
  key: SecretsKey;
  /** What the start did besides checking the key, for the log. */
  events: SecretsEvent[];
}

/**
 * Loads the key and seals or checks the database with it. On SQLite the caller holds the data
 * dir's lock; on PostgreSQL this instance takes the instance lock (shared) first, held while
 * `database` is open.
 */
export async function openSecrets(config: Readonly<Config>, database: PgDatabase | undefined, now: number): Promise<OpenedSecrets> {
  const source = keySource(config);
  if (database) await holdInstanceLock(database);
  const target = sealingTargetFor(config, database, now);
  try {
    const events: OpenedSecrets['events'] = [];
    let key = readKey(source);
    const pendingPath = source.kind === 'file' ? `${source.path}.new` : undefined;
    const pending = pendingPath !== undefined && existsSync(pendingPath) ? readKeyFile(pendingPath) : undefined;
    if (!key) {
      const sealedWith = await sealedKeyId(target);
      if (source.kind === 'value' || source.configured || database || sealedWith !== null) throw missingKey(source, database, sealedWith);
      key = generateSecretsKey();
      await writeKeyFile(source.path, key);
      events.push({
        level: 'info',
        message: 'Made the secrets key: keep a copy apart from the data dir and its backups; without it no secret in the database can be read.',
        fields: { keyFile: source.path, keyId: key.id },
      });
    }
    if (source.kind === 'file') warnIfReadableByOthers(source.path, events);
    const outcome = await ensureSealed(target, pending ? [key, pending] : [key], now);
    if (outcome.kind === 'wrong-key') {
      throw new CliError(
        'CLI_SECRETS_KEY_WRONG',
        `The secrets key from ${source.label} (id ${key.id}) is not the one this database's secrets are sealed with (id ${outcome.keyId}): ` +
          'start with that key. A backup restored here needs the key it was made with; edgeport secrets rotate-key changes a key (docs/operations.md, The secrets key).',
      );
    }
    if (outcome.kind === 'sealed')
      events.push({
        level: 'info',
        message: 'Sealed the secrets kept in the database with the secrets key.',
        fields: { keyId: outcome.key.id, ...outcome.counts },
      });
    if (pending && pendingPath !== undefined && source.kind === 'file') {
      if (outcome.key === pending) {
        // A rotation committed, then stopped before putting its key in place: finish it.
        renameSync(pendingPath, source.path);
        await syncDirectory(dirname(source.path));
        events.push({
          level: 'warn',
          message: 'Finished an interrupted secrets key rotation: the new key replaced the old one.',
          fields: { keyFile: source.path, keyId: pending.id },
        });
      } else {
        // A rotation that never committed: its key was never used.
        rmSync(pendingPath, { force: true });
      }
    }
    return { box: new SecretBox(outcome.key), key: outcome.key, events };
  } finally {
    await target.close();
  }
}

function warnIfReadableByOthers(path: string, events: OpenedSecrets['events']): void {
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0)
    events.push({
      level: 'warn',
      message: 'The secrets key file can be read by other users: chmod 600 it.',
      fields: { keyFile: path, mode: mode.toString(8) },
    });
}

export function logSecretsEvents(logger: Logger, events: readonly SecretsEvent[]): void {
  for (const { level, message, fields } of events) logger[level](fields, message);
}
