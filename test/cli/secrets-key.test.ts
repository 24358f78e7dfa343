/**
 * What a start does with the secrets key before any store opens (src/cli/secrets-key.ts): makes
 * one on a new SQLite data dir and never on PostgreSQL, finishes or discards a rotation that was
 * cut short, and refuses a missing, malformed or wrong key without writing anything.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openSecrets, writeKeyFile } from '../../src/cli/secrets-key.ts';
import { formatSecretsKey, generateSecretsKey, parseSecretsKey } from '../../src/core/crypto/secret-box.ts';
import { loadConfig } from '../../src/config/load.ts';
import { PgDatabase } from '../../src/db/postgres/pg-database.ts';
import { rotateKey, sqliteSealingTarget } from '../../src/db/secrets/sealing.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const configFor = (dataDir: string, env: NodeJS.ProcessEnv = {}) => loadConfig({ env, flags: { data_dir: dataDir } });

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return { code: (error as { code: string }).code, message: (error as Error).message };
  }
  assert.fail('it was not refused');
}

test(
  'sqlite: the first start makes a 0600 key file and seals; later starts find it; a lost key file is refused, not replaced',
  { timeout: 20_000 },
  async (t) => {
    const dataDir = tempDir(t);
    const keyFile = join(dataDir, 'secrets.key');
    const first = await openSecrets(configFor(dataDir), undefined, 1);
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.equal(parseSecretsKey(readFileSync(keyFile, 'utf8'))?.id, first.key.id);
    assert.deepEqual(
      first.events.map((e) => e.message.split(':')[0]),
      ['Made the secrets key', 'Sealed the secrets kept in the database with the secrets key.'],
    );
    const again = await openSecrets(configFor(dataDir), undefined, 2);
    assert.equal(again.key.id, first.key.id);
    assert.deepEqual(again.events, []);

    chmodSync(keyFile, 0o644);
    assert.deepEqual(
      (await openSecrets(configFor(dataDir), undefined, 3)).events.map((e) => [e.level, e.message]),
      [['warn', 'The secrets key file can be read by other users: chmod 600 it.']],
    );
    const kept = readFileSync(keyFile, 'utf8');
    writeFileSync(keyFile, 'not a key\n');
    assert.equal((await refusal(openSecrets(configFor(dataDir), undefined, 4))).code, 'CLI_SECRETS_KEY_INVALID');
    writeFileSync(keyFile, kept);
    const wrong = await refusal(openSecrets(configFor(dataDir, { EDGEPORT_SECRETS_KEY: formatSecretsKey(generateSecretsKey()).trim() }), undefined, 5));
    assert.equal(wrong.code, 'CLI_SECRETS_KEY_WRONG');
    assert.match(wrong.message, new RegExp(`sealed with \\(id ${first.key.id}\\)`));

    rmSync(keyFile);
    const missing = await refusal(openSecrets(configFor(dataDir), undefined, 6));
    assert.equal(missing.code, 'CLI_SECRETS_KEY_MISSING');
    assert.match(missing.message, new RegExp(`sealed with secrets key ${first.key.id}, and the key file .*secrets\\.key does not exist`));
    assert.equal(existsSync(keyFile), false, 'no other key was made in its place');
    const named = await refusal(openSecrets(configFor(tempDir(t), { EDGEPORT_SECRETS_KEY_FILE: join(dataDir, 'elsewhere.key') }), undefined, 7));
    assert.equal(named.code, 'CLI_SECRETS_KEY_MISSING', 'a named key file is never made');
  },
);

test('sqlite: a rotation cut short after its commit is finished by the next start; one cut short before it is discarded', { timeout: 20_000 }, async (t) => {
  const dataDir = tempDir(t);
  const keyFile = join(dataDir, 'secrets.key');
  const { key: old } = await openSecrets(configFor(dataDir), undefined, 1);

  // Cut short before the commit: the new key was written, the database never saw it.
  await writeKeyFile(`${keyFile}.new`, generateSecretsKey());
  assert.equal((await openSecrets(configFor(dataDir), undefined, 2)).key.id, old.id);
  assert.equal(existsSync(`${keyFile}.new`), false, 'the unused key is removed');

  // Cut short after the commit, before the rename: the database is sealed with the key in `.new`.
  const next = generateSecretsKey();
  await writeKeyFile(`${keyFile}.new`, next);
  const target = sqliteSealingTarget(join(dataDir, 'metadata.sqlite'), 3);
  assert.equal((await rotateKey(target, old, next, 3)).kind, 'rotated');
  await target.close();
  const opened = await openSecrets(configFor(dataDir), undefined, 4);
  assert.equal(opened.key.id, next.id);
  assert.deepEqual(
    opened.events.map((e) => e.message),
    ['Finished an interrupted secrets key rotation: the new key replaced the old one.'],
  );
  assert.equal(parseSecretsKey(readFileSync(keyFile, 'utf8'))?.id, next.id);
  assert.equal(existsSync(`${keyFile}.new`), false);
});

test('postgres: a start without a key is refused and makes none; with one, instances share it', { timeout: 30_000 }, async (t) => {
  const database = await PgDatabase.open({ url: await pgTestUrl(t), now: 0 });
  t.after(() => database.close());
  const dataDir = tempDir(t);
  const refused = await refusal(openSecrets(configFor(dataDir), database, 1));
  assert.equal(refused.code, 'CLI_SECRETS_KEY_MISSING');
  assert.match(refused.message, /\[db\] url is PostgreSQL, whose instances must all hold the same secrets key, and none was given/);
  assert.equal(existsSync(join(dataDir, 'secrets.key')), false);
  const key = formatSecretsKey(generateSecretsKey()).trim();
  const a = await openSecrets(configFor(dataDir, { EDGEPORT_SECRETS_KEY: key }), database, 2);
  const b = await openSecrets(configFor(tempDir(t), { EDGEPORT_SECRETS_KEY: key }), database, 3);
  assert.equal(a.key.id, b.key.id);
  assert.equal(
    (await refusal(openSecrets(configFor(tempDir(t), { EDGEPORT_SECRETS_KEY: formatSecretsKey(generateSecretsKey()).trim() }), database, 4))).code,
    'CLI_SECRETS_KEY_WRONG',
  );
});
