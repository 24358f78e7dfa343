import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createScriptEnv } from '../../src/runtime/env-bindings.ts';
import { parseScriptConfig } from '../../src/runtime/script-config.ts';
import { StoreBucket } from '../../src/store/binding/index.ts';
import { accountStore } from '../../src/store/engine/account-store.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { tempDir } from '../helpers/temp-dir.ts';

async function envFor(t: TestContext, dir: string, config: Record<string, unknown>, accountId: string | null = null) {
  writeFileSync(join(dir, 'script.mjs'), 'export default {};\n');
  const script = parseScriptConfig({ name: 's', main: 'script.mjs', ...config }, { baseDir: dir });
  const scriptEnv = await createScriptEnv(script, join(dir, 'data'), { accountId });
  t.after(() => scriptEnv.close());
  return scriptEnv.env;
}

test('a script without buckets gets an empty frozen env', { timeout: 10_000 }, async (t) => {
  const env = await envFor(t, tempDir(t), { compatibility_date: '2025-01-01' });
  assert.deepEqual(Object.keys(env), []);
  assert.ok(Object.isFrozen(env));
});

test('each store_buckets entry is a StoreBucket under its binding, with the compatibility rule applied', { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  const engine = await openStoreEngine({ dataDir: join(dir, 'data'), recover: true });
  await engine.ensureBucket('photos');
  await engine.put('photos', 'cat.jpg', new Uint8Array([1]), { httpMetadata: { contentType: 'image/jpeg' } });
  await engine.close();

  const buckets = [{ binding: 'PHOTOS', bucket_name: 'photos' }];
  const old = await envFor(t, dir, { compatibility_date: '2022-08-03', store_buckets: buckets });
  const flagged = await envFor(t, dir, { compatibility_date: '2022-08-03', compatibility_flags: ['store_list_honor_include'], store_buckets: buckets });
  const current = await envFor(t, dir, { compatibility_date: '2022-08-04', store_buckets: buckets });
  assert.ok(old.PHOTOS instanceof StoreBucket);
  const listed = async (env: Readonly<Record<string, unknown>>) => (await (env.PHOTOS as StoreBucket).list({ include: [] })).objects[0]!.httpMetadata;
  assert.deepEqual(await listed(old), { contentType: 'image/jpeg' }, 'before 2022-08-04, include is ignored');
  assert.deepEqual(await listed(flagged), {}, 'the flag makes list honour include');
  assert.deepEqual(await listed(current), {}, 'from 2022-08-04, list honours include');
});

test("a script's bindings name its account's buckets only: another account's bucket of the same name is another bucket", { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  const [a, b] = ['a'.repeat(32), 'b'.repeat(32)];
  const engine = await openStoreEngine({ dataDir: join(dir, 'data'), recover: true });
  await accountStore(engine, a).ensureBucket('photos');
  await accountStore(engine, b).ensureBucket('photos');
  await accountStore(engine, a).put('photos', 'secret.txt', new TextEncoder().encode('A only'));
  await engine.close();

  const buckets = [{ binding: 'PHOTOS', bucket_name: 'photos' }];
  const envA = await envFor(t, dir, { compatibility_date: '2025-01-01', store_buckets: buckets }, a);
  const envB = await envFor(t, dir, { compatibility_date: '2025-01-01', store_buckets: buckets }, b);
  const unowned = await envFor(t, dir, { compatibility_date: '2025-01-01', store_buckets: buckets }, null);
  const text = async (env: Readonly<Record<string, unknown>>) => {
    const object = await (env.PHOTOS as StoreBucket).get('secret.txt');
    return object && 'text' in object ? object.text() : null;
  };
  assert.equal(await text(envA), 'A only');
  assert.equal(await (envB.PHOTOS as StoreBucket).get('secret.txt'), null, "B's photos is B's own bucket");
  await (envB.PHOTOS as StoreBucket).put('secret.txt', 'B wrote this');
  assert.equal(await text(envA), 'A only', "B's write never reaches A's bucket");
  await assert.rejects((unowned.PHOTOS as StoreBucket).head('secret.txt'), /bucket does not exist/, 'the view of no account sees neither');
});
