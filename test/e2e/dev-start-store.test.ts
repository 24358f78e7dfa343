/**
 * `edgeport dev --data-dir` on `edgeport start`'s data dir serves the same buckets: an object put
 * through start's S3 API is read by the dev script's binding, and what the script writes is read
 * back over S3 by start; while start runs, dev on its data dir is refused, naming start.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { runEdgeport } from '../helpers/edgeport-cli.ts';
import { startDevServer } from '../helpers/dev-server.ts';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ENV = { EDGEPORT_S3_ACCESS_KEY_ID: 'EDGEPORTDEVSTORE', EDGEPORT_S3_SECRET_ACCESS_KEY: 'dev-store-secret-0123456789' };

const SCRIPT = `export default {
  async fetch(request, env) {
    const key = new URL(request.url).pathname.slice(1);
    if (request.method === 'PUT') return new Response(String((await env.BUCKET.put(key, request.body)).size));
    const object = await env.BUCKET.get(key);
    return object === null ? new Response('not found', { status: 404 }) : new Response(object.body);
  },
};
`;

test("edgeport dev --data-dir <start's data dir> serves start's buckets; refused while start holds it", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const scriptPath = join(dir, 'script.mjs');
  writeFileSync(scriptPath, SCRIPT);
  const start = async () => {
    const server = await startEdgeport({ owner: t, dataDir, env: ENV });
    const s3 = new S3Client({
      endpoint: server.urls['S3-compatible API']!,
      region: 'auto',
      forcePathStyle: true,
      credentials: { accessKeyId: ENV.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: ENV.EDGEPORT_S3_SECRET_ACCESS_KEY },
    });
    t.after(() => s3.destroy());
    return { server, s3 };
  };
  const first = await start();
  await first.s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
  await first.s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'cats/tom.txt', Body: 'put over S3' }));
  const config = join(dir, 'dev.toml');
  writeFileSync(
    config,
    'name = "dev"\nmain = "script.mjs"\ncompatibility_date = "2025-01-01"\nstore_buckets = [{ binding = "BUCKET", bucket_name = "photos" }]\n',
  );
  const refused = await runEdgeport(['dev', config, '--port', '0', '--data-dir', dataDir]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /edgeport start/, 'names the process that holds the data dir');
  assert.equal(await first.server.stop(), 0);

  const dev = await startDevServer(scriptPath, [{ binding: 'BUCKET', bucket_name: 'photos' }], { owner: t, dataDir });
  assert.equal(await (await fetch(`${dev.url}/cats/tom.txt`)).text(), 'put over S3', 'the same bucket');
  assert.equal(await (await fetch(`${dev.url}/cats/felix.txt`, { method: 'PUT', body: 'put by the script' })).text(), '17');
  await dev.stop();

  const second = await start();
  const object = await second.s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'cats/felix.txt' }));
  assert.equal(await object.Body!.transformToString(), 'put by the script');
});
