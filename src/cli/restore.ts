/**
 * `edgeport restore <dir> [--config FILE] [--data-dir DIR] [--force]`: puts a backup made by
 * `edgeport backup` into a data dir. It takes the data dir's lock first (data-dir-lock.ts), so it is
 * refused while `edgeport start` or `dev` uses the dir, and no server can start on it half-restored.
 * A data dir that holds anything besides the lock (and the secrets key) is refused unless --force,
 * which replaces what is there (database, bodies, chains, log spools). The data dir's secrets key
 * stays unless the backup holds one (backup-secrets.ts). With `[db] url` (PostgreSQL) only bodies and chains
 * are restored: the database is pg_restore's (or psql's), as the message says. The `log-files`
 * folder (the default file root of file:// log jobs) is neither backed up nor replaced: it holds
 * what jobs delivered, as any other destination directory would.
 *
 * The backup is copied whole into a staging folder inside the data dir, then swapped in for the old
 * data by renames (restore-swap.ts): a restore that fails or is killed at any point leaves the data
 * dir's previous data whole and usable, and the next restore or start removes what it left. The
 * previous data is removed once the swap is done. Bodies kept outside the data dir (`[blobs] url =
 * "file://..."`) are added to that directory before the swap, never written through a link there
 * (restore-external-blobs.ts); a failure leaves only extra files, never a missing one.
 *
 * The backup is read as untrusted: only files and folders are copied (no-follow-dir.ts, tree-copy.ts),
 * a link, fifo, socket or device in it is skipped and named, and a manifest or database that is not
 * a file is refused.
 */
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULTS } from '../config/defaults.ts';
import type { BackupArgs } from './args.ts';
import { loadCommandConfig } from './command-config.ts';
import { BLOBS_DIR, blobsRoot, CHAIN_DIR, DATABASE_FILE, MANIFEST_FILE, type BackupManifest } from './backup-layout.ts';
import { backupHoldsKey, KEY_FILE, restoredKeyNote } from './backup-secrets.ts';
import { CliError } from './cli-errors.ts';
import { optionHint } from './commands.ts';
import { LOCK_FILE, lockDataDir, OWNER_FILE } from './data-dir-lock.ts';
import { NoFollowDir } from './no-follow-dir.ts';
import { addBodies, type AddedBodies } from './restore-external-blobs.ts';
import { isRestoreEntry, recoverInterruptedRestore, stagingName, swapIn } from './restore-swap.ts';
import { CopyReport, copyTree, describeSkipped, printable } from './tree-copy.ts';

export async function runRestore(args: BackupArgs, out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const config = loadCommandConfig(args);
  const backup = openBackup(args.dir);
  try {
    const manifest = readManifest(backup);
    if (manifest.database === 'sqlite' && config.dbUrl !== undefined) {
      throw new CliError(
        'CLI_BACKUP_INVALID',
        `edgeport restore: ${args.dir} holds a SQLite database, but this config uses PostgreSQL ([db] url): restore without [db] url, or copy the data into PostgreSQL yourself.`,
      );
    }
    // Refused before anything is copied (copyDatabase checks it again as it copies it).
    if (manifest.database === 'sqlite' && backup.kind(DATABASE_FILE) !== 'file') throw notADatabase(backup, backup.kind(DATABASE_FILE));
    const withKey = backupHoldsKey(backup);
    const lock = lockDataDir(config.dataDir, { flagHint: optionHint('restore', 'data-dir') });
    try {
      // Leftovers of a restore that was cut short are its own, never data: put back and removed first, unasked.
      if (await recoverInterruptedRestore(config.dataDir))
        out(`edgeport: a restore into ${config.dataDir} was cut short while swapping its data in: the previous data is back in place.`);
      await restoreInto(config.dataDir, blobsRoot(config), backup, { manifest, withKey }, args, out);
    } finally {
      lock.release();
    }
    const keyNote = restoredKeyNote(config, manifest, withKey);
    if (keyNote !== undefined) out(keyNote);
  } finally {
    backup.close();
  }
}

/** `withKey`: the backup holds the secrets key (backupHoldsKey), which then replaces the data dir's. */
async function restoreInto(
  dataDir: string,
  root: string | undefined,
  backup: NoFollowDir,
  { manifest, withKey }: { manifest: BackupManifest; withKey: boolean },
  args: BackupArgs,
  out: (line: string) => void,
): Promise<void> {
  // The secrets key is the operator's, not data: it stays, unless the backup brings its own (then it is set aside like data, so a failed swap puts it back).
  const present = readdirSync(dataDir).filter(
    (name) => name !== LOCK_FILE && name !== OWNER_FILE && name !== KEY_FILE && name !== DEFAULTS.logs.fileRootInDataDir && !isRestoreEntry(name),
  );
  if (present.length > 0 && !args.force) {
    throw new CliError(
      'CLI_DATA_DIR_NOT_EMPTY',
      `edgeport restore: ${dataDir} holds data already (${present.slice(0, 5).join(', ')}${present.length > 5 ? ', ...' : ''}): ` +
        "restore into a new data dir (--data-dir DIR), or add --force to replace its data with the backup's.",
    );
  }
  const data = NoFollowDir.openRoot(dataDir);
  const staging = stagingName();
  const bodies = new CopyReport();
  const chains = new CopyReport();
  let external: AddedBodies | undefined;
  try {
    const into = data.ensureSub(staging);
    if (into === null) throw new Error(`${dataDir}/${staging} is not a folder`);
    try {
      if (manifest.database === 'sqlite') copyDatabase(backup, into);
      if (withKey) backup.copyFile(KEY_FILE, into, KEY_FILE, true);
      if (manifest.blobs && root !== undefined && backup.kind(BLOBS_DIR) !== null) {
        if (resolve(root) === resolve(dataDir)) copyBackupFolder(backup, BLOBS_DIR, into, bodies);
        else external = withFolder(backup, BLOBS_DIR, bodies, (folder) => addBodies(folder, root, bodies));
      }
      copyBackupFolder(backup, CHAIN_DIR, into, chains);
      into.sync();
    } finally {
      into.close();
    }
  } catch (error) {
    data.remove(staging);
    data.close();
    if (error instanceof CliError) throw error;
    throw new CliError(
      'CLI_RESTORE_FAILED',
      `edgeport restore: copying ${args.dir} failed (${(error as Error).message}); ${dataDir} is unchanged. Check the backup and the free space, then run the restore again.`,
      { cause: error },
    );
  }
  data.close();
  await swapIn(dataDir, staging, withKey && readdirSync(dataDir).includes(KEY_FILE) ? [...present, KEY_FILE] : present);
  const kept = external !== undefined && external.kept > 0 ? ` (${external.kept} more were in ${root}/${BLOBS_DIR} already)` : '';
  out(
    `edgeport: restored the backup of ${printable(manifest.created)} into ${dataDir}: ${manifest.database === 'sqlite' ? 'the database, ' : ''}${bodies.files} body files${kept}. Start edgeport on it.`,
  );
  const skipped = [...bodies.skipped, ...chains.skipped];
  if (skipped.length > 0) {
    out(`edgeport: skipped ${skipped.length} entries of the backup that are not files or folders (a link is never followed): ${describeSkipped(skipped)}.`);
  }
  if (external !== undefined && external.replaced.length > 0) {
    out(
      `edgeport: replaced ${external.replaced.length} links or other non-files in ${root}/${BLOBS_DIR} by the backup's bodies (nothing was written through them): ${external.replaced.slice(0, 10).join(', ')}${external.replaced.length > 10 ? ', ...' : ''}.`,
    );
  }
  if (manifest.database === 'postgresql')
    out('edgeport: the metadata was in PostgreSQL: restore it with pg_restore (or psql) from your pg_dump (docs/operations.md, Backup and restore).');
}

/** Copies the backup's database, which must be a file: a link there is refused, not followed. */
function copyDatabase(backup: NoFollowDir, into: NoFollowDir): void {
  const copied = backup.kind(DATABASE_FILE) === null ? null : backup.copyFile(DATABASE_FILE, into, DATABASE_FILE, true);
  if (typeof copied !== 'number') throw notADatabase(backup, copied);
}

function notADatabase(backup: NoFollowDir, kind: string | null): CliError {
  return new CliError(
    'CLI_BACKUP_INVALID',
    `edgeport restore: ${backup.path}/${DATABASE_FILE} is ${kind === null ? 'missing' : `a ${kind}, not a file`}: this is not a backup made by edgeport backup, or it was damaged.`,
  );
}

/** Copies the backup's folder `name` (when there) into the staging folder. */
function copyBackupFolder(backup: NoFollowDir, name: string, into: NoFollowDir, report: CopyReport): void {
  withFolder(backup, name, report, (source) => {
    const target = into.ensureSub(name)!;
    try {
      copyTree(source, target, { prefix: name, report, sync: true });
    } finally {
      target.close();
    }
  });
}

/** Runs `use` on the backup's folder `name`; reports `name` skipped when it is a link or another non-folder. */
function withFolder<T>(backup: NoFollowDir, name: string, report: CopyReport, use: (folder: NoFollowDir) => T): T | undefined {
  const kind = backup.kind(name);
  if (kind === null) return undefined;
  const folder = backup.sub(name);
  if (folder === null) {
    report.skip(name, kind);
    return undefined;
  }
  try {
    return use(folder);
  } finally {
    folder.close();
  }
}

function openBackup(dir: string): NoFollowDir {
  try {
    return NoFollowDir.openRoot(dir);
  } catch (error) {
    throw new CliError('CLI_BACKUP_INVALID', `edgeport restore: ${dir} is not a backup made by edgeport backup (${(error as Error).message}).`, {
      cause: error,
    });
  }
}

function readManifest(backup: NoFollowDir): BackupManifest {
  let manifest: Partial<BackupManifest>;
  try {
    manifest = JSON.parse(backup.readSmallFile(MANIFEST_FILE, 1024 * 1024)) as Partial<BackupManifest>;
  } catch (error) {
    throw new CliError(
      'CLI_BACKUP_INVALID',
      `edgeport restore: ${backup.path} is not a backup made by edgeport backup (${MANIFEST_FILE}: ${(error as Error).message}).`,
      { cause: error },
    );
  }
  if (
    manifest.format !== 1 ||
    (manifest.database !== 'sqlite' && manifest.database !== 'postgresql') ||
    typeof manifest.created !== 'string' ||
    typeof manifest.blobs !== 'boolean'
  ) {
    throw new CliError(
      'CLI_BACKUP_INVALID',
      `edgeport restore: ${backup.path}/${MANIFEST_FILE} is not a manifest this edgeport reads (format ${String(manifest.format)}).`,
    );
  }
  return manifest as BackupManifest;
}
