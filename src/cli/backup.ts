/**
 * `edgeport backup <dir> [--config FILE] [--data-dir DIR]`: a consistent copy of a data dir's data
 * while `edgeport start` may keep serving (so it takes no data dir lock):
 * 1. the blob files present now are copied (bodies are immutable files: a copy is the body);
 * 2. the SQLite database is snapshotted with SQLite's online backup (db/sqlite/sqlite-backup.ts):
 *    every write acknowledged before this point is in it, with its body copied in step 1 or 3;
 * 3. blob files that appeared since step 1 are copied, then every body the snapshot refers to is
 *    checked to be there (one written and then replaced between steps 2 and 3 is reported).
 * The embedded chains' journals are copied too; undelivered log lines (spools) and the lock are not,
 * nor the secrets key unless `--include-secrets-key` (backup-secrets.ts).
 * Only files and folders are copied, at any depth, and no link is followed (no-follow-dir.ts): a
 * link, fifo, socket or device in `blobs/` or `gateway/` is skipped, named on the output and listed
 * in the manifest. Every file is fsynced, and the manifest written last, so a backup is whole once
 * its manifest is there.
 * With `[db] url` (PostgreSQL) only bodies and journals are copied: the database is pg_dump's.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { backupSqliteDatabase, referencedBlobIds } from '../db/sqlite/sqlite-backup.ts';
import type { BackupArgs } from './args.ts';
import { loadCommandConfig } from './command-config.ts';
import { BLOBS_DIR, blobsRoot, CHAIN_DIR, DATABASE_FILE, MANIFEST_FILE, type BackupManifest } from './backup-layout.ts';
import { backUpSecretsKey } from './backup-secrets.ts';
import { CliError } from './cli-errors.ts';
import { NoFollowDir } from './no-follow-dir.ts';
import { CopyReport, copyTree, describeSkipped, MAX_SKIPPED_LISTED } from './tree-copy.ts';
import { VERSION } from './version.ts';

export async function runBackup(args: BackupArgs, out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const config = loadCommandConfig(args);
  if (existsSync(args.dir) && readdirSync(args.dir).length > 0) {
    throw new CliError('CLI_BACKUP_TARGET_NOT_EMPTY', `edgeport backup: ${args.dir} is not empty: name a new or empty directory.`);
  }
  const sqlite = config.dbUrl === undefined;
  const database = join(config.dataDir, DATABASE_FILE);
  if (sqlite && !existsSync(database)) {
    throw new CliError(
      'CLI_BACKUP_INVALID',
      `edgeport backup: ${config.dataDir} holds no edgeport database (${DATABASE_FILE}): name the data dir of edgeport start with --data-dir.`,
    );
  }
  mkdirSync(args.dir, { recursive: true });
  const root = blobsRoot(config);
  const blobs = new CopyReport();
  const others = new CopyReport();
  const copied = new Set<string>();
  if (root !== undefined) copyDataFolder(root, BLOBS_DIR, args.dir, blobs, copied);
  const created = new Date().toISOString();
  if (sqlite) await backupSqliteDatabase(database, join(args.dir, DATABASE_FILE));
  if (root !== undefined) copyDataFolder(root, BLOBS_DIR, args.dir, blobs, copied);
  const missing = sqlite && root !== undefined ? referencedBlobIds(join(args.dir, DATABASE_FILE)).filter((id) => !copied.has(id)) : [];
  const chains = copyDataFolder(config.dataDir, CHAIN_DIR, args.dir, others, new Set());
  const skipped = [...blobs.skipped, ...others.skipped];
  const secrets = await backUpSecretsKey(config, args.dir, args.includeSecretsKey === true, sqlite);
  writeManifest(args.dir, {
    format: 1,
    version: VERSION,
    created,
    database: sqlite ? 'sqlite' : 'postgresql',
    blobs: root !== undefined,
    objects: { blobFiles: blobs.files, bytes: blobs.bytes },
    ...(skipped.length > 0 ? { skipped: { count: skipped.length, entries: skipped.slice(0, MAX_SKIPPED_LISTED) } } : {}),
    ...secrets.manifest,
  });
  out(
    `edgeport: backed up ${config.dataDir} into ${args.dir} (snapshot at ${created}): ${sqlite ? 'the database, ' : ''}${blobs.files} body files (${blobs.bytes} bytes)${chains ? ', the embedded chains' : ''}.`,
  );
  if (skipped.length > 0) {
    out(
      `edgeport: skipped ${skipped.length} entries that are not files or folders (a link is never followed): ${describeSkipped(skipped)}; ${MANIFEST_FILE} lists them.`,
    );
  }
  if (!sqlite) out('edgeport: the metadata is in PostgreSQL ([db] url): back it up with pg_dump (docs/operations.md, Backup and restore).');
  if (root === undefined) out('edgeport: object bodies are in an S3 bucket ([blobs] url): back the bucket up with its own tools (versioning, replication).');
  for (const line of secrets.lines) out(line);
  if (missing.length > 0) {
    out(
      `edgeport: warning: ${missing.length} bodies of objects replaced or deleted while the backup ran are not in it; those objects (written during the backup) will not read back after a restore.`,
    );
  }
}

/**
 * Copies `<rootPath>/<name>/` into the backup's `<name>/` (files and folders; every other entry is
 * reported in `report`, `<name>` itself when it is a link); answers whether there was such a folder.
 * Paths in `copied` are passed over and those copied are added, so a second call copies only what
 * appeared since the first; files removed meanwhile (objects deleted by the server) are passed over.
 */
function copyDataFolder(rootPath: string, name: string, backupDir: string, report: CopyReport, copied: Set<string>): boolean {
  if (!existsSync(rootPath)) return false;
  const root = NoFollowDir.openRoot(rootPath);
  const target = NoFollowDir.openRoot(backupDir);
  try {
    const kind = root.kind(name);
    if (kind === null) return false;
    const source = root.sub(name);
    if (source === null) {
      report.skip(name, kind);
      return false;
    }
    try {
      const into = target.ensureSub(name);
      if (into === null) throw new Error(`${backupDir}/${name} is not a folder`);
      try {
        copyTree(source, into, { prefix: name, report, sync: true, copied, live: true });
      } finally {
        into.close();
      }
    } finally {
      source.close();
    }
    target.sync();
    return true;
  } finally {
    target.close();
    root.close();
  }
}

/** Written last, and fsynced as every file before it: a backup with a manifest is whole. */
function writeManifest(backupDir: string, manifest: BackupManifest): void {
  const target = NoFollowDir.openRoot(backupDir);
  try {
    target.writeNewFile(MANIFEST_FILE, `${JSON.stringify(manifest, null, 2)}\n`);
    target.sync();
  } finally {
    target.close();
  }
}
