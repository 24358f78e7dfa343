/**
 * One process per data dir: `edgeport start` and `edgeport dev` lock `<data-dir>/edgeport.lock`
 * before they read or write anything else there (migrations, the startup sweep, spools), and a
 * second process refuses at once, naming the first and the flag that picks another dir.
 * `edgeport accounts create` takes no lock: it only adds a row to the database, which SQLite's WAL
 * (or PostgreSQL) shares safely with a running server.
 *
 * The lock is an operating-system lock, not a pid file: SQLite's POSIX (fcntl) lock, through
 * better-sqlite3, which edgeport already uses (Node has no flock/fcntl of its own). The lock file
 * is an empty SQLite database held in an open `BEGIN EXCLUSIVE` transaction without a journal
 * file; another process's attempt fails with SQLITE_BUSY at once. Why not a pid file:
 * - the kernel drops the lock when its process ends, however it ends (kill -9, out of memory), so
 *   there is no stale lock to judge: no guessing whether a pid was reused, and no race between
 *   two starts that both decide to take over a stale file;
 * - a pid means nothing across pid namespaces (two containers sharing a volume), a lock does;
 * - NFS carries fcntl locks between machines (NLM, NFSv4).
 * Beside it, `edgeport.owner.json` names the holder (pid, command, since when) for the refusal;
 * it is written once the lock is held, removed on release, and believed only while the process
 * it names runs (a killed holder leaves it behind until the next holder replaces it).
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { currentProcess, isRunning, type ProcessIdentity } from '../core/process-identity.ts';
import { retainNative } from '../db/sqlite/open-sqlite.ts';
import { CliError } from './cli-errors.ts';

export const LOCK_FILE = 'edgeport.lock';
export const OWNER_FILE = 'edgeport.owner.json';

/** Who holds a data dir, as `edgeport.owner.json` records it. */
export interface LockOwner extends ProcessIdentity {
  /** The command line, e.g. `edgeport start --api-port 9081`. */
  command: string;
  /** When the lock was taken (ms since the epoch). */
  since: number;
  /** The machine (a data dir on NFS may be locked from another). */
  host: string;
}

export interface DataDirLock {
  readonly dataDir: string;
  /** Removes the owner file and drops the lock (idempotent). Exiting drops it too. */
  release(): void;
}

export interface LockOptions {
  /** How the user picks another data dir, e.g. `--data-dir DIR`. */
  flagHint: string;
  /** This process's command line, for others' refusals (default: `edgeport` and its arguments). */
  command?: string;
  /** Now, for the owner record and the refusal's "for 3 min" (default: the wall clock). */
  now?: () => number;
}

/** Locks held by this process, referenced so the database handles are never garbage-collected (which would drop the lock). */
const HELD = new Set<Database.Database>();

/**
 * Locks `dataDir` (creating it if needed) for this process, or throws CLI_DATA_DIR_IN_USE
 * naming the holder, having written nothing.
 */
export function lockDataDir(dataDir: string, options: LockOptions): DataDirLock {
  const now = options.now ?? Date.now;
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (error) {
    throw new CliError(
      'CLI_DATA_DIR_UNUSABLE',
      `The data dir ${dataDir} cannot be created: ${(error as Error).message}. Pick another with ${options.flagHint}.`,
      { cause: error },
    );
  }
  let db: Database.Database | undefined;
  try {
    // Kept reachable even once closed: Node 24 aborts when V8 collects a better-sqlite3 object (open-sqlite.ts).
    db = retainNative(new Database(join(dataDir, LOCK_FILE), { timeout: 0 }));
    // No journal file: the transaction never writes; it exists only to hold the lock (exec: no Statement object).
    db.exec('PRAGMA journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db?.close();
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') throw inUse(dataDir, options.flagHint, now());
    throw new CliError(
      'CLI_DATA_DIR_UNUSABLE',
      `The data dir ${dataDir} cannot be locked: ${(error as Error).message}. Pick another with ${options.flagHint}.`,
      { cause: error },
    );
  }
  const held = db;
  HELD.add(held);
  const owner: LockOwner = { ...currentProcess(), command: options.command ?? commandLine(), since: now(), host: hostname() };
  const ownerFile = join(dataDir, OWNER_FILE);
  // Half-written records of holders killed mid-write: only a holder writes them, and this one holds the lock now.
  for (const name of readdirSync(dataDir)) if (name.startsWith(`${OWNER_FILE}.`) && name.endsWith('.tmp')) rmSync(join(dataDir, name), { force: true });
  // Replaced whole (rename), so a reader never sees half a record.
  const partial = `${ownerFile}.${owner.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify(owner)}\n`);
  renameSync(partial, ownerFile);
  let released = false;
  return {
    dataDir,
    release() {
      if (released) return;
      released = true;
      if (readOwner(ownerFile)?.pid === owner.pid) rmSync(ownerFile, { force: true });
      held.exec('ROLLBACK');
      held.close();
      HELD.delete(held);
    },
  };
}

/** The refusal: who holds the dir (when its record is current), and how to pick another. */
function inUse(dataDir: string, flagHint: string, now: number): CliError {
  const owner = readOwner(join(dataDir, OWNER_FILE));
  // A record left by a killed holder names a process that is gone: the holder is a newer one, still starting.
  const elsewhere = owner !== null && owner.host !== hostname();
  const who =
    owner !== null && (elsewhere || isRunning(owner))
      ? `another edgeport process: pid ${owner.pid}${elsewhere ? ` on ${owner.host}` : ''} (${owner.command}), running since ${formatTime(owner.since)} (${formatAge(now - owner.since)})`
      : 'another edgeport process (still starting, so not named yet)';
  return new CliError(
    'CLI_DATA_DIR_IN_USE',
    `The data dir ${dataDir} is in use by ${who}. Stop that one first, or give this one a data dir of its own: ${flagHint}.`,
  );
}

function readOwner(file: string): LockOwner | null {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    if (
      typeof owner.pid !== 'number' ||
      typeof owner.start !== 'string' ||
      typeof owner.boot !== 'string' ||
      typeof owner.command !== 'string' ||
      typeof owner.since !== 'number' ||
      typeof owner.host !== 'string'
    )
      return null;
    return owner as LockOwner;
  } catch {
    return null;
  }
}

/** `edgeport start --data-dir "my dir"`: this process's arguments, quoted where a shell would need it. */
function commandLine(): string {
  return ['edgeport', ...process.argv.slice(2).map((arg) => (/^[\w./:=@%+,-]+$/.test(arg) ? arg : JSON.stringify(arg)))].join(' ');
}

/** `2026-11-25 13:10:31 UTC`. */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** `12 s ago`, `3 min ago`, `5 h ago`, `2 days ago`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 48 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}
