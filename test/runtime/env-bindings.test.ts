import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createScriptEnv } from '../../src/runtime/env-bindings.ts';
import { parseScriptConfig } from '../../src/runtime/script-config.ts';
import { StoreBucket } from '../../src/store/binding/index.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { tempDir } from '../helpers/temp-dir.ts';

async function envFor(t: TestContext, dir: string, config: Record<string, unknown>) {
  writeFileSync(join(dir, 'script.mjs'), 'export default {};\n');
  const script = parseScriptConfig({ name: 's', main: 'script.mjs', ...config }, { baseDir: dir });
  const scriptEnv = await createScriptEnv(script, join(dir, 'data'));
  t.after(() => scriptEnv.close());
  return scriptEnv.env;
}

test('a script without buckets gets an empty frozen env', async (t) => {
  const env = await envFor(t, tempDir(t), { compatibility_date: '2025-01-01' });
  assert.deepEqual(Object.keys(env), []);
  assert.ok(Object.isFrozen(env));
});

test('each store_buckets entry is a StoreBucket under its binding, with the compatibility rule applied', async (t) => {
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
  assert.equal(await listed(flagged), undefined, 'the flag makes list honour include');
  assert.equal(await listed(current), undefined, 'from 2022-08-04, list honours include');
});
