/**
 * How `edgeport restore` puts the data it staged into a data dir so that, wherever it stops (an
 * error, kill -9, a power loss), the data dir holds its previous data whole, or the restored data
 * whole; and how the next restore, `edgeport start` or `edgeport dev` puts the previous data back
 * when one stopped half-way.
 *
 * 1. The backup is copied into `.restore-staging-<pid>/`, fsynced; the data dir's data is untouched.
 * 2. The plan, `.restore-swap.json` (the staging and set-aside folders, the entries to set aside and
 *    those to move in), is written durably (a temporary file renamed into place, then fsynced).
 * 3. The data dir's entries are renamed into `.restore-replaced-<pid>/`, then the staged ones into
 *    the data dir (renames within one directory tree: each is atomic).
 * 4. The plan is removed and the data dir fsynced: that is the commit, the restore is done.
 * 5. The previous data and the emptied staging folder are removed (not kept: the backup just
 *    restored is the copy the operator chose; take a backup first to keep the previous data too).
 * A plan still there means the swap never committed: it is rolled back (what was moved in goes back
 * into staging, what was set aside comes back), then every `.restore-*` leftover is removed.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFileDurably, syncDirectory } from '../core/fs/durable-file.ts';
import { CliError } from './cli-errors.ts';

const STAGING_PREFIX = '.restore-staging-';
const REPLACED_PREFIX = '.restore-replaced-';
const PLAN_FILE = '.restore-swap.json';

/** The swap under way, as `.restore-swap.json` records it. */
interface SwapPlan {
  format: 1;
  /** The staging folder's name in the data dir. */
  staging: string;
  /** The folder the previous entries are set aside in. */
  replaced: string;
  /** The data dir's entries set aside, in order. */
  setAside: string[];
  /** The staged entries moved in, in order. */
  moveIn: string[];
}

/** Whether `name` (in a data dir) is something a restore made: never the data dir's data. */
export function isRestoreEntry(name: string): boolean {
  return name.startsWith(STAGING_PREFIX) || name.startsWith(REPLACED_PREFIX) || name === PLAN_FILE || name === `${PLAN_FILE}.tmp`;
}

/** The staging folder's name for this process. */
export function stagingName(): string {
  return `${STAGING_PREFIX}${process.pid}`;
}

/**
 * Moves the data dir's `setAside` entries out and the staged entries in, as the file header says;
 * `onRename` is called before each rename and before the commit (tests stop the process there).
 * A failure before the commit rolls back before it is reported (CLI_RESTORE_FAILED), so the data
 * dir holds its previous data.
 */
export async function swapIn(dataDir: string, staging: string, setAside: readonly string[], onRename?: (step: number) => void): Promise<void> {
  const plan: SwapPlan = {
    format: 1,
    staging,
    replaced: `${REPLACED_PREFIX}${process.pid}`,
    setAside: [...setAside],
    moveIn: readdirSync(join(dataDir, staging)).sort(),
  };
  let step = 0;
  const rename = (from: string, to: string): void => {
    onRename?.(step++);
    renameSync(from, to);
  };
  try {
    await replaceFileDurably(join(dataDir, PLAN_FILE), `${JSON.stringify(plan)}\n`);
    mkdirSync(join(dataDir, plan.replaced));
    for (const name of plan.setAside) rename(join(dataDir, name), join(dataDir, plan.replaced, name));
    for (const name of plan.moveIn) rename(join(dataDir, staging, name), join(dataDir, name));
    await syncDirectory(dataDir);
    onRename?.(step);
    rmSync(join(dataDir, PLAN_FILE));
  } catch (error) {
    const failed = `edgeport restore: moving the restored data into ${dataDir} failed (${(error as Error).message})`;
    try {
      await rollBack(dataDir, plan);
    } catch (again) {
      throw new CliError(
        'CLI_RESTORE_FAILED',
        `${failed}, and putting its previous data back failed too (${(again as Error).message}): fix the cause; the next edgeport restore, start or dev puts it back.`,
        { cause: error },
      );
    }
    throw new CliError('CLI_RESTORE_FAILED', `${failed}; its previous data is back in place. Fix the cause, then run the restore again.`, { cause: error });
  }
  try {
    await syncDirectory(dataDir);
  } catch (error) {
    throw new CliError(
      'CLI_RESTORE_FAILED',
      `edgeport restore: the restored data is in ${dataDir}, but syncing it to disk failed (${(error as Error).message}): check the disk before starting edgeport on it.`,
      { cause: error },
    );
  }
  rmSync(join(dataDir, plan.replaced), { recursive: true, force: true });
  rmSync(join(dataDir, staging), { recursive: true, force: true });
}

/**
 * Run by restore, start and dev once they hold the data dir's lock: rolls back a swap that never
 * committed, then removes every restore leftover. Answers whether there was a swap to roll back.
 */
export async function recoverInterruptedRestore(dataDir: string): Promise<boolean> {
  let names: string[];
  try {
    names = readdirSync(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  const rolledBack = names.includes(PLAN_FILE);
  if (rolledBack) await rollBack(dataDir, readPlan(dataDir));
  for (const name of names) if (isRestoreEntry(name)) rmSync(join(dataDir, name), { recursive: true, force: true });
  return rolledBack;
}

/** Undoes whatever part of `plan` was done (each step is checked, so it may run again after a crash of its own). */
async function rollBack(dataDir: string, plan: SwapPlan): Promise<void> {
  // A staged entry is in the data dir only once its rename happened, and every set-aside rename came before.
  for (const name of plan.moveIn) {
    if (!there(join(dataDir, plan.staging, name)) && there(join(dataDir, name))) renameSync(join(dataDir, name), join(dataDir, plan.staging, name));
  }
  for (const name of plan.setAside) {
    if (there(join(dataDir, plan.replaced, name)) && !there(join(dataDir, name))) renameSync(join(dataDir, plan.replaced, name), join(dataDir, name));
  }
  await syncDirectory(dataDir);
  rmSync(join(dataDir, PLAN_FILE), { force: true });
  await syncDirectory(dataDir);
}

function readPlan(dataDir: string): SwapPlan {
  const file = join(dataDir, PLAN_FILE);
  let plan: Partial<SwapPlan>;
  try {
    plan = JSON.parse(readFileSync(file, 'utf8')) as Partial<SwapPlan>;
  } catch (error) {
    throw damaged(file, (error as Error).message);
  }
  const plain = (name: unknown): boolean => typeof name === 'string' && name !== '' && name !== '.' && name !== '..' && !name.includes('/');
  if (
    plan.format !== 1 ||
    !plain(plan.staging) ||
    !plan.staging!.startsWith(STAGING_PREFIX) ||
    !plain(plan.replaced) ||
    !plan.replaced!.startsWith(REPLACED_PREFIX) ||
    !Array.isArray(plan.setAside) ||
    !plan.setAside.every(plain) ||
    !Array.isArray(plan.moveIn) ||
    !plan.moveIn.every(plain)
  ) {
    throw damaged(file, 'not a plan this edgeport wrote');
  }
  return plan as SwapPlan;
}

function damaged(file: string, why: string): CliError {
  return new CliError(
    'CLI_RESTORE_FAILED',
    `${file} (the plan of a restore that was cut short) cannot be read (${why}): the previous data of the data dir is in its .restore-replaced-* folder; ` +
      'move those entries back into the data dir, then remove the plan and the .restore-* folders.',
  );
}

/** Whether an entry is at `path` (a link counts; nothing is followed). */
function there(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
