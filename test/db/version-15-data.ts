/**
 * What an edgeport of schema version 15 (before account quotas) left in its database, written with
 * plain SQL, and what migration 16 must make of it: each account's usage counted from its objects,
 * its open uploads' parts and its scripts' versions, on SQLite and PostgreSQL alike
 * (sqlite-migrations.test.ts, pg-migrations.test.ts).
 */
import assert from 'node:assert/strict';
import type { MetadataStore } from '../../src/db/metadata-store.ts';
import type { ScriptRegistry } from '../../src/db/scripts/script-registry.ts';

export const FIRST = 'f'.repeat(32);
export const SECOND = 'c'.repeat(32);

type Run = (sql: string, ...values: unknown[]) => unknown;

/** Modules whose base64 contents decode to 10 + 5, 1 and 2 bytes (every padding), and none. */
const VERSIONS: Array<[account: string, id: string, contents: string[]]> = [
  [FIRST, 'v1', [Buffer.alloc(10, 1).toString('base64'), Buffer.alloc(5, 2).toString('base64')]],
  [FIRST, 'v2', [Buffer.from('a').toString('base64')]],
  [FIRST, 'v3', [Buffer.from('ab').toString('base64')]],
  [SECOND, 'w1', ['']],
];

export async function seedVersion15(run: Run, placeholder: (n: number) => string = () => '?'): Promise<void> {
  const p = (count: number) => Array.from({ length: count }, (_, i) => placeholder(i + 1)).join(', ');
  const utf8 = (text: string) => (placeholder(1) === '?' ? text : Buffer.from(text));
  for (const bucket of [`${FIRST}/photos`, `${SECOND}/docs`, 'legacy'])
    await run(`INSERT INTO buckets (name, created, storage_class) VALUES (${p(3)})`, bucket, 5, 'Standard');
  for (const [bucket, key, size] of [
    [`${FIRST}/photos`, 'a', 3],
    [`${FIRST}/photos`, 'b', 1000],
    [`${SECOND}/docs`, 'c', 7],
    ['legacy', 'd', 11],
  ] as const) {
    await run(
      `INSERT INTO objects (bucket, key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums, storage_class, has_inline, blob_id, part_count)
      VALUES (${p(13)})`,
      bucket,
      utf8(key),
      `v-${key}`,
      size,
      'e',
      7,
      '{}',
      '{}',
      '{}',
      'Standard',
      0,
      `blob-${key}`,
      0,
    );
  }
  for (const [id, bucket, state] of [
    ['up-1', `${FIRST}/photos`, 'active'],
    ['up-2', `${SECOND}/docs`, 'active'],
    ['up-3', `${SECOND}/docs`, 'aborted'],
  ] as const) {
    await run(
      `INSERT INTO uploads (upload_id, bucket, key, created, http_metadata, custom_metadata, storage_class, state) VALUES (${p(8)})`,
      id,
      bucket,
      utf8('big'),
      8,
      '{}',
      '{}',
      'Standard',
      state,
    );
  }
  for (const [id, n, size] of [
    ['up-1', 1, 5],
    ['up-1', 2, 6],
    ['up-2', 1, 9],
  ] as const) {
    await run(`INSERT INTO upload_parts (upload_id, part_number, etag, size, blob_id, uploaded) VALUES (${p(6)})`, id, n, 'e', size, `part-${id}-${n}`, 9);
  }
  await run(
    `INSERT INTO worker_scripts (account_id, name, created, modified, settings, dev_enabled, secrets_stamp) VALUES (${p(7)})`,
    FIRST,
    'app',
    1,
    1,
    '{}',
    1,
    1,
  );
  for (const [index, [account, id, contents]] of VERSIONS.entries()) {
    const modules = JSON.stringify(contents.map((content, i) => ({ name: `m${i}.js`, type: 'esm', content })));
    await run(
      `INSERT INTO worker_versions (id, account_id, script, number, created, metadata, modules, etag) VALUES (${p(8)})`,
      id,
      account,
      'app',
      index + 1,
      1,
      '{}',
      modules,
      'etag',
    );
  }
}

/** After migration 16 (applied by opening `store`): each account's usage is what it stored. */
export async function checkUsage(store: MetadataStore, registry: ScriptRegistry): Promise<void> {
  const usage = async (account: string) => {
    const { objectBytes, objectCount, scriptBytes } = await store.accountUsage(account);
    return [objectBytes, objectCount, scriptBytes];
  };
  assert.deepEqual(await usage(FIRST), [3 + 1000 + 5 + 6, 2, 15 + 1 + 2], "objects, open parts, every version's decoded modules");
  assert.deepEqual(await usage(SECOND), [7 + 9, 1, 0], 'an aborted upload holds nothing');
  assert.deepEqual(await usage(''), [11, 1, 0], 'the buckets of no account');
  // Each version got its own bytes: deleting the script frees exactly them.
  assert.equal(await registry.deleteScript(FIRST, 'app'), true);
  await store.deleteObjects(`${FIRST}/photos`, ['b']);
  assert.deepEqual(await usage(FIRST), [14, 1, 0]);
}
