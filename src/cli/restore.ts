/**
 * `edgeport restore <dir> [--config FILE] [--data-dir DIR] [--force]`: puts a backup made by
 * `edgeport backup` into a data dir. It takes the data dir's lock first (data-dir-lock.ts), so it is
 * refused while `edgeport start` or `dev` uses the dir, and no server can start on it half-restored.
 * A data dir that holds anything besides the lock is refused unless --force, which removes what is
 * there (database, bodies, chains, log spools) first. With `[db] url` (PostgreSQL) only bodies and
 * chains are restored: the database is pg_restore's (or psql's), as the message says.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BackupArgs } from './args.ts';
import { loadCommandConfig } from './command-config.ts';
import { BLOBS_DIR, blobFilesDir, CHAIN_DIR, DATABASE_FILE, MANIFEST_FILE, type BackupManifest } from './backup-layout.ts';
import { CliError } from './cli-errors.ts';
import { optionHint } from './commands.ts';
import { LOCK_FILE, lockDataDir, OWNER_FILE } from './data-dir-lock.ts';

export async function runRestore(args: BackupArgs, out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const config = loadCommandConfig(args);
  const manifest = readManifest(args.dir);
  const sqlite = config.dbUrl === undefined;
  if (manifest.database === 'sqlite' && !sqlite) {
    throw new CliError('CLI_BACKUP_INVALID', `edgeport restore: ${args.dir} holds a SQLite database, but this config uses PostgreSQL ([db] url): restore without [db] url, or copy the data into PostgreSQL yourself.`);
  }
  const lock = lockDataDir(config.dataDir, { flagHint: optionHint('restore', 'data-dir') });
  try {
    const present = readdirSync(config.dataDir).filter((name) => name !== LOCK_FILE && name !== OWNER_FILE);
    if (present.length > 0 && !args.force) {
      throw new CliError('CLI_DATA_DIR_NOT_EMPTY', `edgeport restore: ${config.dataDir} holds data already (${present.slice(0, 5).join(', ')}${present.length > 5 ? ', ...' : ''}): `
        + 'restore into a new data dir (--data-dir DIR), or add --force to replace its data with the backup\'s.');
    }
    for (const name of present) rmSync(join(config.dataDir, name), { recursive: true, force: true });
    if (manifest.database === 'sqlite') copyFileSync(join(args.dir, DATABASE_FILE), join(config.dataDir, DATABASE_FILE));
    const target = blobFilesDir(config);
    let bodies = 0;
    if (manifest.blobs && target !== undefined && existsSync(join(args.dir, BLOBS_DIR))) {
      mkdirSync(target, { recursive: true });
      for (const name of readdirSync(join(args.dir, BLOBS_DIR))) {
        copyFileSync(join(args.dir, BLOBS_DIR, name), join(target, name));
        bodies += 1;
      }
    }
    if (existsSync(join(args.dir, CHAIN_DIR))) {
      mkdirSync(join(config.dataDir, CHAIN_DIR), { recursive: true });
      for (const name of readdirSync(join(args.dir, CHAIN_DIR))) copyFileSync(join(args.dir, CHAIN_DIR, name), join(config.dataDir, CHAIN_DIR, name));
    }
    out(`edgeport: restored the backup of ${manifest.created} into ${config.dataDir}: ${manifest.database === 'sqlite' ? 'the database, ' : ''}${bodies} body files. Start edgeport on it.`);
    if (manifest.database === 'postgresql') out('edgeport: the metadata was in PostgreSQL: restore it with pg_restore (or psql) from your pg_dump (docs/operations.md, Backup and restore).');
  } finally {
    lock.release();
  }
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
