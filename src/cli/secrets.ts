/**
 * `edgeport secrets rotate-key [--config FILE] [--data-dir DIR] [--new-key-file FILE]`: reseals
 * every secret of the database with a new key, with every instance stopped (it takes the data dir's
 * lock; on PostgreSQL the transaction takes the instance lock exclusively, which every running
 * instance holds shared, so it is refused while one runs, and instances starting meanwhile wait).
 *
 * Crash safety, step by step (a crash at any point loses no secret):
 * 1. the new key is written durably to `<key file>.new` (or `--new-key-file`) before the database
 *    sees it: a crash here leaves the database sealed with the old key, which the key file still
 *    holds (the next start removes the unused `.new`);
 * 2. one transaction opens every value with the old key and seals it with the new one: all or
 *    nothing;
 * 3. `<key file>.new` is renamed over the key file (atomic): a crash between 2 and 3 leaves the
 *    database sealed with the key in `.new`, which the next start finds and puts in place
 *    (secrets-key.ts).
 * A key given as EDGEPORT_SECRETS_KEY cannot be rewritten: the new key goes to `--new-key-file`,
 * and the operator sets the variable from it on every instance.
 */
import { existsSync, rmSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { generateSecretsKey } from '../core/crypto/secret-box.ts';
import { syncDirectory } from '../core/fs/durable-file.ts';
import type { PgDatabase } from '../db/postgres/pg-database.ts';
import { DatabaseInUseError, rotateKey } from '../db/secrets/sealing.ts';
import type { SecretsArgs } from './args.ts';
import { CliError } from './cli-errors.ts';
import { loadCommandConfig } from './command-config.ts';
import { optionHint } from './commands.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { keySource, readKey, sealingTargetFor, writeKeyFile } from './secrets-key.ts';

type Out = (line: string) => void;

export async function runRotateKey(args: SecretsArgs, out: Out = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const config = loadCommandConfig(args);
  const source = keySource(config);
  const newKeyFile = args.newKeyFile === undefined ? undefined : resolve(args.newKeyFile);
  if (source.kind === 'value' && newKeyFile === undefined) {
    throw new CliError(
      'CLI_SECRETS_ROTATION_REFUSED',
      `The secrets key comes from ${source.label}, which edgeport cannot rewrite: name a new file for the new key with --new-key-file FILE, then set the variable from it on every instance.`,
    );
  }
  if (newKeyFile !== undefined && existsSync(newKeyFile)) {
    throw new CliError('CLI_SECRETS_ROTATION_REFUSED', `${newKeyFile} exists already: name a new file with --new-key-file, so no key is overwritten.`);
  }
  // No server on this data dir meanwhile (it holds the old key), and no second rotation.
  const lock = lockDataDir(config.dataDir, { flagHint: optionHint('secrets rotate-key', 'data-dir') });
  let database: PgDatabase | undefined;
  try {
    const current = readKey(source);
    if (!current) throw new CliError('CLI_SECRETS_KEY_MISSING', `${source.label} does not exist: rotate-key needs the key the database is sealed with.`);
    database =
      config.dbUrl === undefined ? undefined : await (await import('../db/postgres/pg-database.ts')).PgDatabase.open({ url: config.dbUrl, now: Date.now() });
    const next = generateSecretsKey();
    const written = newKeyFile ?? `${(source as { path: string }).path}.new`;
    if (existsSync(written)) {
      // Possibly the only copy of the key the database is sealed with, if that rotation committed.
      throw new CliError(
        'CLI_SECRETS_ROTATION_REFUSED',
        `${written} is left from an interrupted rotation: start edgeport once (it puts that key in place if the database took it, else removes it), stop it, then rotate.`,
      );
    }
    // Durable before the database knows the key: a crash after the commit must find it.
    await writeKeyFile(written, next);
    const target = sealingTargetFor(config, database, Date.now());
    let outcome;
    try {
      outcome = await rotateKey(target, current, next, Date.now());
    } catch (error) {
      if (error instanceof DatabaseInUseError) {
        rmSync(written, { force: true });
        throw new CliError(
          'CLI_SECRETS_ROTATION_REFUSED',
          `${error.message}: stop every instance on this database first (they hold the old key), then rotate.`,
          { cause: error },
        );
      }
      // The commit may have happened (a connection lost at COMMIT): the new key stays where a start looks for it.
      throw new Error(
        `The rotation failed (${(error as Error).message}); the new key stays in ${written} in case the database took it: the next start tells which key the database is sealed with.`,
        { cause: error },
      );
    } finally {
      await target.close();
    }
    if (outcome.kind !== 'rotated') {
      rmSync(written, { force: true });
      if (outcome.kind === 'unsealed')
        throw new CliError(
          'CLI_SECRETS_ROTATION_REFUSED',
          'The database holds no sealed secrets yet: start edgeport on it once (the start seals them), then rotate.',
        );
      throw new CliError(
        'CLI_SECRETS_KEY_WRONG',
        `The secrets key from ${source.label} (id ${current.id}) is not the one this database is sealed with (id ${outcome.keyId}); nothing was changed.`,
      );
    }
    const { accessKeys, workerSecrets, logJobs } = outcome.counts;
    const resealed = `${count(workerSecrets, 'worker secret')}, ${count(accessKeys, 'S3 secret key')} and ${count(logJobs, 'log job destination')}`;
    if (source.kind === 'file' && newKeyFile === undefined) {
      await rename(written, source.path);
      await syncDirectory(dirname(source.path));
      out(`edgeport: resealed ${resealed} with the new secrets key ${next.id}, now in ${source.path}; the old key ${current.id} no longer opens them.`);
    } else {
      out(`edgeport: resealed ${resealed} with the new secrets key ${next.id}, written to ${written}; the old key ${current.id} no longer opens them.`);
      out(
        source.kind === 'value'
          ? `edgeport: set EDGEPORT_SECRETS_KEY (or [secrets] key) to the contents of ${written} on every instance before starting them.`
          : `edgeport: put ${written} in place of ${source.path} (on every instance) before starting them.`,
      );
    }
    out(`edgeport: backups made before this need the old key ${current.id}: keep a copy of it with them.`);
  } finally {
    await database?.close();
    lock.release();
  }
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}
