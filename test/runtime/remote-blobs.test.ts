/**
 * A script host whose store keeps blobs on an S3-compatible endpoint: the script's binding (in
 * workerd, through the store service) writes there, and bodies are streamed back from the blob
 * store's reads, as there are no files to pipe.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test from 'node:test';
import { silentLogger } from '../../src/core/log.ts';
import { startScriptHost } from '../../src/runtime/host.ts';
import { parseScriptConfig } from '../../src/runtime/script-config.ts';
import { startS3Endpoint } from '../helpers/s3-endpoint.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const SCRIPT = `export default {
  async fetch(request, env) {
    const key = new URL(request.url).pathname.slice(1);
    if (request.method === 'PUT') return new Response((await env.BUCKET.put(key, request.body)).etag);
    const object = await env.BUCKET.get(key, { range: request.headers });
    return object === null ? new Response('not found', { status: 404 }) : new Response(object.body, { status: request.headers.has('range') ? 206 : 200 });
  },
};
`;

test('a script on s3:// blobs: its binding writes there, and bodies stream back from it', { timeout: 60_000 }, async (t) => {
  const endpoint = await startS3Endpoint(t);
  const dir = tempDir(t);
  writeFileSync(join(dir, 'script.mjs'), SCRIPT);
  const script = parseScriptConfig(
    {
      name: 'blobs',
      main: 'script.mjs',
      compatibility_date: '2025-01-01',
      store_buckets: [{ binding: 'BUCKET', bucket_name: 'data' }],
    },
    { baseDir: dir },
  );
  const host = await startScriptHost({ script, accountId: null, dataDir: join(dir, 'data'), blobsUrl: endpoint.blobsUrl('host'), logger: silentLogger });
  const server = createServer(host.handle);
  t.after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await host.close();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const body = Buffer.alloc(3 * 1024 * 1024 + 5);
  for (let i = 0; i < body.length; i++) body[i] = (i * 31) % 253;
  const put = await fetch(`${url}/big`, { method: 'PUT', body });
  assert.equal(await put.text(), createHash('md5').update(body).digest('hex'));
  assert.equal((await endpoint.engine.list('blobs', { prefix: 'host/' })).objects.length, 1, 'the binding wrote the blob to the endpoint');

  const got = await fetch(`${url}/big`);
  assert.equal(got.status, 200);
  assert.ok(body.equals(Buffer.from(await got.arrayBuffer())));
  const ranged = await fetch(`${url}/big`, { headers: { range: 'bytes=1000000-1000009' } });
  assert.ok(body.subarray(1_000_000, 1_000_010).equals(Buffer.from(await ranged.arrayBuffer())));
});
