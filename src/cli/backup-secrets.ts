/**
 * The secrets key and backups. A backup's database holds its secrets sealed; the key that opens
 * them stays out of the backup unless `edgeport backup --include-secrets-key` (then the backup is
 * as sensitive as the key). The manifest names the key the database was sealed with, so a restore
 * can say which key the data dir needs. A restore copies a key the backup holds into the data
 * dir (`secrets.key`) and otherwise keeps the data dir's own: the key is the operator's, not data.
 */
import { join } from 'node:path';
import { parseSecretsKey } from '../core/crypto/secret-box.ts';
import type { Config } from '../config/schema.ts';
import { sealedKeyIdIn } from '../db/secrets/sealing.ts';
import { DATABASE_FILE } from './backup-layout.ts';
import { CliError } from './cli-errors.ts';
import type { NoFollowDir } from './no-follow-dir.ts';
import { dataDirKeyFile, KEY_FILE, keySource, readKey, writeKeyFile } from './secrets-key.ts';

export { KEY_FILE };

/** What the manifest records of the key. */
export interface BackupSecretsKey {
  /** The id of the key the backup's SQLite database is sealed with (absent on PostgreSQL, or a database never sealed). */
  secretsKeyId?: string;
  /** Whether `<backup>/secrets.key` holds the key. */
  secretsKeyIncluded: boolean;
}

/** After the database snapshot: copies the key into the backup when asked; answers the manifest's fields and the lines to print. */
export async function backUpSecretsKey(
  config: Readonly<Config>,
  dir: string,
  include: boolean,
  sqlite: boolean,
): Promise<{ manifest: BackupSecretsKey; lines: string[] }> {
  const source = keySource(config);
  const key = readKey(source);
  const sealedWith = sqlite ? sealedKeyIdIn(join(dir, DATABASE_FILE)) : null;
  const id = sealedWith ?? key?.id;
  const manifest: BackupSecretsKey = { ...(sealedWith === null ? {} : { secretsKeyId: sealedWith }), secretsKeyIncluded: false };
  if (include) {
    if (!key)
      throw new CliError('CLI_SECRETS_KEY_MISSING', `edgeport backup --include-secrets-key: ${source.label} does not exist, so there is no key to include.`);
    if (sealedWith !== null && key.id !== sealedWith) {
      throw new CliError(
        'CLI_SECRETS_KEY_WRONG',
        `edgeport backup --include-secrets-key: the key from ${source.label} (id ${key.id}) is not the one the database is sealed with (id ${sealedWith}).`,
      );
    }
    await writeKeyFile(join(dir, KEY_FILE), key);
    return {
      manifest: { ...manifest, secretsKeyIncluded: true },
      lines: [`edgeport: the secrets key ${key.id} is in the backup (${KEY_FILE}): guard the backup as you guard the key.`],
    };
  }
  if (id === undefined) return { manifest, lines: [] };
  return {
    manifest,
    lines: [
      `edgeport: the secrets key ${id} is not in the backup: a restore needs it (${source.label}); keep a copy apart, or back up with --include-secrets-key.`,
    ],
  };
}

/** Whether a backup holds a key: a file holding one (a link there, or anything else, is refused, never followed). */
export function backupHoldsKey(backup: NoFollowDir): boolean {
  if (backup.kind(KEY_FILE) === null) return false;
  let text: string;
  try {
    text = backup.readSmallFile(KEY_FILE, 4096);
  } catch (error) {
    throw new CliError(
      'CLI_BACKUP_INVALID',
      `edgeport restore: ${backup.path}/${KEY_FILE} is ${(error as Error).message}: a backup's key is a file edgeport backup wrote.`,
      { cause: error },
    );
  }
  if (!parseSecretsKey(text))
    throw new CliError('CLI_BACKUP_INVALID', `edgeport restore: ${backup.path}/${KEY_FILE} is not a secrets key: the backup was damaged.`);
  return true;
}

/** The line a restore prints about the key the restored database needs. */
export function restoredKeyNote(config: Readonly<Config>, manifest: Partial<BackupSecretsKey>, restoredKey: boolean): string | undefined {
  const source = keySource(config);
  if (restoredKey) {
    const path = dataDirKeyFile(config.dataDir);
    return source.kind === 'file' && !source.configured
      ? `edgeport: the backup's secrets key is now ${path}.`
      : `edgeport: the backup's secrets key is in ${path}, but this config takes its key from ${source.label}: give that one the backup's key before starting.`;
  }
  if (manifest.secretsKeyId === undefined) return undefined;
  let held;
  try {
    held = readKey(source);
  } catch {
    // A malformed key is the start's to report; the restore is done.
    held = undefined;
  }
  return held?.id === manifest.secretsKeyId
    ? `edgeport: the database's secrets are sealed with key ${manifest.secretsKeyId}, which ${source.label} holds.`
    : `edgeport: the database's secrets are sealed with key ${manifest.secretsKeyId}: ${source.kind === 'value' ? `start with that key in ${source.label}` : `put that key in ${source.label} (or give it as EDGEPORT_SECRETS_KEY) before starting`}.`;
}
