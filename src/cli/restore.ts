/**
 * `edgeport restore <dir> [--config FILE] [--data-dir DIR] [--force]`: puts a backup made by
 * `edgeport backup` into a data dir. It takes the data dir's lock first (data-dir-lock.ts), so it is
 * refused while `edgeport start` or `dev` uses the dir, and no server can start on it half-restored.
 * A data dir that holds anything besides the lock is refused unless --force, which replaces what is
 * there (database, bodies, chains, log spools). With `[db] url` (PostgreSQL) only bodies and chains
 * are restored: the database is pg_restore's (or psql's), as the message says.
 *
 * The backup is copied whole into a staging directory inside the data dir first; only then is the
 * old data moved aside and the staged data renamed into place (renames within one file system), so
 * a restore that fails while copying (a damaged backup, a full disk) leaves the data dir exactly as
 * it was. Bodies kept outside the data dir (`[blobs] url = "file://..."`) are added to that
 * directory before the swap; a failure there leaves only extra files, never a missing one.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BackupArgs } from './args.ts';
import { loadCommandConfig } from './command-config.ts';
import { BLOBS_DIR, blobFilesDir, CHAIN_DIR, copyFiles, DATABASE_FILE, MANIFEST_FILE, type BackupManifest } from './backup-layout.ts';
import { CliError } from './cli-errors.ts';
import { optionHint } from './commands.ts';
import { LOCK_FILE, lockDataDir, OWNER_FILE } from './data-dir-lock.ts';

/** Where a restore stages the backup, and where it moves the old data, inside the data dir. */
const STAGING_PREFIX = '.restore-staging-';
const REPLACED_PREFIX = '.restore-replaced-';

export async function runRestore(args: BackupArgs, out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const config = loadCommandConfig(args);
  const manifest = readManifest(args.dir);
  const sqlite = config.dbUrl === undefined;
  if (manifest.database === 'sqlite' && !sqlite) {
    throw new CliError('CLI_BACKUP_INVALID', `edgeport restore: ${args.dir} holds a SQLite database, but this config uses PostgreSQL ([db] url): restore without [db] url, or copy the data into PostgreSQL yourself.`);
  }
  const lock = lockDataDir(config.dataDir, { flagHint: optionHint('restore', 'data-dir') });
  try {
    // Leftovers of a restore that was killed are its own, never data: they go first, unasked.
    for (const name of readdirSync(config.dataDir)) {
      if (name.startsWith(STAGING_PREFIX) || name.startsWith(REPLACED_PREFIX)) rmSync(join(config.dataDir, name), { recursive: true, force: true });
    }
    const present = readdirSync(config.dataDir).filter((name) => name !== LOCK_FILE && name !== OWNER_FILE);
    if (present.length > 0 && !args.force) {
      throw new CliError('CLI_DATA_DIR_NOT_EMPTY', `edgeport restore: ${config.dataDir} holds data already (${present.slice(0, 5).join(', ')}${present.length > 5 ? ', ...' : ''}): `
        + 'restore into a new data dir (--data-dir DIR), or add --force to replace its data with the backup\'s.');
    }
    const staging = join(config.dataDir, `${STAGING_PREFIX}${process.pid}`);
    const blobsTarget = blobFilesDir(config);
    const blobsInside = blobsTarget === join(config.dataDir, BLOBS_DIR);
    let bodies = 0;
    try {
      mkdirSync(staging);
      if (manifest.database === 'sqlite') copyFileSync(join(args.dir, DATABASE_FILE), join(staging, DATABASE_FILE));
      if (manifest.blobs && blobsTarget !== undefined && existsSync(join(args.dir, BLOBS_DIR))) {
        bodies = copyFiles(join(args.dir, BLOBS_DIR), blobsInside ? join(staging, BLOBS_DIR) : blobsTarget);
      }
      if (existsSync(join(args.dir, CHAIN_DIR))) copyFiles(join(args.dir, CHAIN_DIR), join(staging, CHAIN_DIR));
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      throw new CliError('CLI_RESTORE_FAILED', `edgeport restore: copying ${args.dir} failed (${(error as Error).message}); ${config.dataDir} is unchanged. Check the backup and the free space, then run the restore again.`, { cause: error });
    }
    swapIn(config.dataDir, staging, present);
    out(`edgeport: restored the backup of ${manifest.created} into ${config.dataDir}: ${manifest.database === 'sqlite' ? 'the database, ' : ''}${bodies} body files. Start edgeport on it.`);
    if (manifest.database === 'postgresql') out('edgeport: the metadata was in PostgreSQL: restore it with pg_restore (or psql) from your pg_dump (docs/operations.md, Backup and restore).');
  } finally {
    lock.release();
  }
}

/**
 * Moves the data dir's `present` entries aside (the SQLite -wal and -shm files with the database:
 * an old journal beside a new database would corrupt it), renames the staged entries into place,
 * then removes the old ones. Every step is a rename within the data dir.
 */
function swapIn(dataDir: string, staging: string, present: readonly string[]): void {
  const replaced = join(dataDir, `${REPLACED_PREFIX}${process.pid}`);
  mkdirSync(replaced);
  for (const name of present) renameSync(join(dataDir, name), join(replaced, name));
  for (const name of readdirSync(staging)) renameSync(join(staging, name), join(dataDir, name));
  rmSync(staging, { recursive: true, force: true });
  rmSync(replaced, { recursive: true, force: true });
}

function readManifest(dir: string): BackupManifest {
  let manifest: Partial<BackupManifest>;
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as Partial<BackupManifest>;
  } catch (error) {
    throw new CliError('CLI_BACKUP_INVALID', `edgeport restore: ${dir} is not a backup made by edgeport backup (${MANIFEST_FILE}: ${(error as Error).message}).`, { cause: error });
  }
  if (manifest.format !== 1 || (manifest.database !== 'sqlite' && manifest.database !== 'postgresql')) {
    throw new CliError('CLI_BACKUP_INVALID', `edgeport restore: ${dir}/${MANIFEST_FILE} is not a manifest this edgeport reads (format ${String(manifest.format)}).`);
  }
  return manifest as BackupManifest;
}
