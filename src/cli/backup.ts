/**
 * `edgeport backup <dir> [--config FILE] [--data-dir DIR]`: a consistent copy of a data dir's data
 * while `edgeport start` may keep serving (so it takes no data dir lock):
 * 1. the blob files present now are copied (bodies are immutable files: a copy is the body);
 * 2. the SQLite database is snapshotted with SQLite's online backup (db/sqlite/sqlite-backup.ts):
 *    every write acknowledged before this point is in it, with its body copied in step 1 or 3;
 * 3. blob files that appeared since step 1 are copied, then every body the snapshot refers to is
 *    checked to be there (one written and then replaced between steps 2 and 3 is reported).
 * The embedded chains' journals are copied too; undelivered log lines (spools) and the lock are not.
 * With `[db] url` (PostgreSQL) only bodies and journals are copied: the database is pg_dump's.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { backupSqliteDatabase, referencedBlobIds } from '../db/sqlite/sqlite-backup.ts';
import type { BackupArgs } from './args.ts';
import { loadCommandConfig } from './command-config.ts';
import { BLOBS_DIR, blobFilesDir, CHAIN_DIR, copyFiles, DATABASE_FILE, MANIFEST_FILE, type BackupManifest } from './backup-layout.ts';
import { CliError } from './cli-errors.ts';
import { VERSION } from './version.ts';

export async function runBackup(args: BackupArgs, out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const config = loadCommandConfig(args);
  if (existsSync(args.dir) && readdirSync(args.dir).length > 0) {
    throw new CliError('CLI_BACKUP_TARGET_NOT_EMPTY', `edgeport backup: ${args.dir} is not empty: name a new or empty directory.`);
  }
  const sqlite = config.dbUrl === undefined;
  const database = join(config.dataDir, DATABASE_FILE);
  if (sqlite && !existsSync(database)) {
    throw new CliError('CLI_BACKUP_INVALID', `edgeport backup: ${config.dataDir} holds no edgeport database (${DATABASE_FILE}): name the data dir of edgeport start with --data-dir.`);
  }
  mkdirSync(args.dir, { recursive: true });
  const source = blobFilesDir(config);
  const target = join(args.dir, BLOBS_DIR);
  const copied = new Set<string>();
  let bytes = 0;
  const copyBlobs = () => {
    if (source === undefined || !existsSync(source)) return;
    mkdirSync(target, { recursive: true });
    for (const name of readdirSync(source)) {
      if (copied.has(name)) continue;
      try {
        copyFileSync(join(source, name), join(target, name));
        bytes += statSync(join(target, name)).size;
        copied.add(name);
      } catch (error) {
        // Deleted since it was listed: an object replaced or deleted meanwhile.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  };
  copyBlobs();
  const created = new Date().toISOString();
  if (sqlite) await backupSqliteDatabase(database, join(args.dir, DATABASE_FILE));
  copyBlobs();
  const missing = sqlite && source !== undefined ? referencedBlobIds(join(args.dir, DATABASE_FILE)).filter((id) => !copied.has(id)) : [];
  const chains = join(config.dataDir, CHAIN_DIR);
  if (existsSync(chains)) copyFiles(chains, join(args.dir, CHAIN_DIR));
  const manifest: BackupManifest = {
    format: 1, version: VERSION, created, database: sqlite ? 'sqlite' : 'postgresql', blobs: source !== undefined, objects: { blobFiles: copied.size, bytes },
  };
  writeFileSync(join(args.dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  out(`edgeport: backed up ${config.dataDir} into ${args.dir} (snapshot at ${created}): ${sqlite ? 'the database, ' : ''}${copied.size} body files (${bytes} bytes)${existsSync(chains) ? ', the embedded chains' : ''}.`);
  if (!sqlite) out('edgeport: the metadata is in PostgreSQL ([db] url): back it up with pg_dump (docs/operations.md, Backup and restore).');
  if (source === undefined) out('edgeport: object bodies are in an S3 bucket ([blobs] url): back the bucket up with its own tools (versioning, replication).');
  if (missing.length > 0) {
    out(`edgeport: warning: ${missing.length} bodies of objects replaced or deleted while the backup ran are not in it; those objects (written during the backup) will not read back after a restore.`);
  }
}
