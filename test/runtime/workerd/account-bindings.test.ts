/**
 * A script's bucket bindings name its account's buckets only, in workerd as everywhere: another
 * account's bucket of the same name is another bucket, and the view of no account sees neither.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { accountStore } from '../../../src/store/engine/account-store.ts';
import { openStoreEngine } from '../../../src/store/engine/open-store-engine.ts';
import { onTestEnd } from '../../helpers/cleanup.ts';
import { startTestHost } from '../../helpers/script-host.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const SCRIPT = `
export default {
  async fetch(request, env) {
    try {
      if (request.method === 'PUT') { await env.PHOTOS.put('secret.txt', await request.text()); return new Response('put'); }
      const object = await env.PHOTOS.get('secret.txt');
      return new Response(object === null ? 'null' : await object.text());
    } catch (error) {
      return new Response(String(error), { status: 500 });
    }
  },
};
`;

test("a script's bindings name its account's buckets only: another account's bucket of the same name is another bucket", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const [a, b] = ['a'.repeat(32), 'b'.repeat(32)];
  const engine = await openStoreEngine({ dataDir, recover: true });
  await accountStore(engine, a).ensureBucket('photos');
  await accountStore(engine, b).ensureBucket('photos');
  await accountStore(engine, a).put('photos', 'secret.txt', new TextEncoder().encode('A only'));
  await engine.close();

  const config = { store_buckets: [{ binding: 'PHOTOS', bucket_name: 'photos' }] };
  const read = async (url: string) => (await fetch(url)).text();
  // One host at a time: each opens the data dir's store for its own account, as `edgeport dev` does.
  const hostA = await startTestHost(t, SCRIPT, { config, dataDir, accountId: a });
  assert.equal(await read(hostA.url), 'A only');
  await hostA.stop();

  const hostB = await startTestHost(t, SCRIPT, { config, dataDir, accountId: b });
  assert.equal(await read(hostB.url), 'null', "B's photos is B's own bucket");
  assert.equal(await (await fetch(hostB.url, { method: 'PUT', body: 'B wrote this' })).text(), 'put');
  await hostB.stop();

  const againA = await startTestHost(t, SCRIPT, { config, dataDir, accountId: a });
  assert.equal(await read(againA.url), 'A only', "B's write never reaches A's bucket");
  await againA.stop();

  const unowned = await startTestHost(t, SCRIPT, { config, dataDir, accountId: null });
  assert.equal(await read(unowned.url), 'null', "the buckets of no account are neither A's nor B's");
});

test(
  "an uploaded script's bucket is never made for it: deleted after the upload, it stays deleted and the binding's calls fail",
  { timeout: 60_000 },
  async (t) => {
    const dataDir = join(tempDir(t), 'data');
    const account = 'c'.repeat(32);
    const host = await startTestHost(t, SCRIPT, {
      config: { store_buckets: [{ binding: 'PHOTOS', bucket_name: 'photos' }] },
      dataDir,
      accountId: account,
      uploaded: true,
    });
    const answer = await fetch(host.url);
    assert.equal(answer.status, 500);
    assert.match(await answer.text(), /bucket/i, 'the call names the missing bucket');
    await host.stop();
    const engine = await openStoreEngine({ dataDir, recover: true });
    onTestEnd(t, () => engine.close());
    assert.deepEqual(
      (await accountStore(engine, account).listBuckets()).map((bucket) => bucket.name),
      [],
      'no bucket was made',
    );
  },
);
