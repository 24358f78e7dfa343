/**
 * The log pipeline end to end through `edgeport start`, what the jobs get: a zone with a local
 * origin, custom fields for request headers, response headers and cookies (configured through
 * the management API), three jobs — a nested filter X AND (Y OR Z) to file://, everything to
 * store:// and to s3:// (edgeport's own S3 API) — and 10,000 requests from autocannon; the
 * delivered batches hold exactly the matching requests with the right custom fields and rfc3339
 * timestamps. A script routed on the zone is logged beside the origin's requests.
 * (Sampling: edge-logs-sampling.test.ts; delivery through failures: edge-logs-delivery.test.ts.)
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { gunzipLines, until } from '../helpers/delivered-logs.ts';
import {
  FIELDS,
  S3_KEY,
  apiOf,
  createFileJob,
  createZone,
  fileLines,
  getVia,
  load,
  raw,
  startOrigin,
  startServer,
  type LogLine,
} from '../helpers/edge-logs-setup.ts';
import { writeScriptConfig } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

async function bucketLines(s3: S3Client, bucket: string): Promise<LogLine[]> {
  const buffers: Buffer[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      if (!object.Key!.endsWith('.log.gz')) continue;
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key! }));
      buffers.push(Buffer.from(await got.Body!.transformToByteArray()));
    }
    token = page.NextContinuationToken;
  } while (token);
  return gunzipLines<LogLine>(buffers);
}

test('10,000 requests: each job gets exactly its requests, with custom fields and rfc3339 timestamps', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  const origin = await startOrigin(t);
  const server = await startServer(t, join(dir, 'data'));
  const api = apiOf(server);
  const zoneId = await createZone(api, origin.url);
  const s3 = new S3Client({
    endpoint: server.urls['S3-compatible API'],
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
  });
  t.after(() => s3.destroy());
  await s3.send(new CreateBucketCommand({ Bucket: 'store-logs' }));
  await s3.send(new CreateBucketCommand({ Bucket: 's3-logs' }));

  const filter = {
    where: {
      and: [
        { key: 'ClientRequestHost', operator: 'eq', value: 'example.test' },
        {
          or: [
            { key: 'EdgeResponseStatus', operator: 'eq', value: 500 },
            { key: 'ClientRequestPath', operator: 'startsWith', value: '/api' },
          ],
        },
      ],
    },
  };
  const output = { field_names: FIELDS, timestamp_format: 'rfc3339' };
  await createFileJob(api, zoneId, join(dir, 'file-logs'), { filter: JSON.stringify(filter), output_options: output });
  const storeChallenge = await api.call<{ filename: string }>('POST', `/zones/${zoneId}/logshipping/ownership`, {
    destination_conf: 'store://store-logs/edge',
  });
  const storeToken = await (
    await s3.send(new GetObjectCommand({ Bucket: 'store-logs', Key: storeChallenge.filename.replace(/^store-logs\//, '') }))
  ).Body!.transformToString();
  await api.call('POST', `/zones/${zoneId}/logshipping/jobs`, {
    name: 'store-job',
    destination_conf: 'store://store-logs/edge',
    dataset: 'http_requests',
    enabled: true,
    ownership_challenge: storeToken.trim(),
    output_options: output,
  });
  const s3Conf = `s3://s3-logs/edge?region=auto&endpoint=${encodeURIComponent(server.urls['S3-compatible API']!)}&access-key-id=${S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID}&secret-access-key=${S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY}`;
  await api.call('POST', `/zones/${zoneId}/logshipping/jobs`, {
    name: 's3-job',
    destination_conf: s3Conf,
    dataset: 'http_requests',
    enabled: true,
    output_options: output,
  });

  await load(server.urls.edge!, 10_000);
  const edgePort = Number(new URL(server.urls.edge!).port);
  const duplicateRay = await raw(edgePort, ['X-Trace', 'first', 'x-trace', 'second', 'Cookie', 'session=one', 'Cookie', 'session=two']);
  const bigRay = await raw(edgePort, ['X-Trace', 'x'.repeat(6000), 'User-Agent', 'y'.repeat(6000)]);
  const total = origin.seen.size;
  assert.equal(total, 10_002);

  const expected = new Set(
    [...origin.seen].filter(([, s]) => s.host === 'example.test' && (s.status === 500 || s.path.startsWith('/api'))).map(([ray]) => ray),
  );
  const fileResult = await until(
    () => fileLines(join(dir, 'file-logs')),
    (lines) => lines.length >= expected.size,
    'the file job',
  );
  assert.equal(fileResult.length, expected.size, 'no extra lines');
  assert.deepEqual(new Set(fileResult.map((l) => l.RayID)), expected, 'exactly the matching requests');
  for (const line of fileResult) {
    assert.deepEqual(Object.keys(line), FIELDS);
    assert.match(line.EdgeStartTimestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    if (line.RayID !== bigRay) assert.deepEqual(line.ResponseHeaders, { 'set-cookie': 'a=1', 'x-origin': 'origin-1' }, 'first set-cookie');
    if (line.RayID === duplicateRay) {
      assert.deepEqual(line.RequestHeaders, { 'x-trace': 'first' });
      assert.deepEqual(line.Cookies, { session: 'one' });
    } else if (line.RayID === bigRay) {
      const bytes = (m: Record<string, string>) => Object.entries(m).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
      assert.equal(line.RequestHeaders['x-trace'], 'x'.repeat(6000));
      assert.ok(line.RequestHeaders['user-agent']!.length < 6000, 'the value crossing 8 KB is cut');
      assert.equal(bytes(line.RequestHeaders) + bytes(line.Cookies) + bytes(line.ResponseHeaders), 8192, 'the excess is truncated, exactly at 8 KB');
      assert.deepEqual(line.ResponseHeaders, {}, 'nothing is left for the response headers');
    } else {
      assert.match(line.RequestHeaders['x-trace']!, /^t\d+$/);
      assert.equal(line.RequestHeaders['user-agent'], 'autocannon-e2e');
      assert.equal(line.Cookies.session, `s${line.RequestHeaders['x-trace']!.slice(1)}`);
    }
  }
  for (const bucket of ['store-logs', 's3-logs']) {
    const lines: LogLine[] = await until(
      () => bucketLines(s3, bucket),
      (l) => l.length >= total,
      `the ${bucket} job`,
    );
    assert.equal(lines.length, total, `${bucket}: every request once`);
    assert.equal(new Set(lines.map((l) => l.RayID)).size, total);
  }
});

test('a script routed on the zone serves its paths with its bucket binding; the origin serves the rest; both are logged', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const args = writeScriptConfig(dir, {
    name: 'counter',
    route: 'example.test/api/*',
    bucket: 'script-data',
    source: `export default {
    async fetch(request, env) {
      const key = new URL(request.url).pathname;
      await env.BUCKET.put(key, 'seen');
      const listed = await env.BUCKET.list();
      return new Response('script:' + listed.objects.length, { headers: { 'x-from': 'script', 'set-cookie': 'sc=1' } });
    },
  };`,
  });
  const origin = await startOrigin(t);
  const server = await startServer(t, join(dir, 'data'), { args, batchIntervalMs: 100 });
  assert.match(server.banner, /script "counter" on example\.test\/api\/\*/);
  const api = apiOf(server);
  const zoneId = await createZone(api, origin.url);
  await createFileJob(api, zoneId, join(dir, 'logs'), {
    output_options: { field_names: ['ClientRequestPath', 'EdgeResponseStatus', 'OriginResponseStatus', 'ResponseHeaders'] },
  });

  const edge = server.urls.edge!;
  const viaScript = await getVia(edge, 'example.test', '/api/one');
  assert.equal(viaScript.body, 'script:1');
  assert.equal(viaScript.headers['x-from'], 'script');
  const viaOrigin = await getVia(edge, 'example.test', '/home');
  assert.equal(viaOrigin.body, 'ok');
  const lines = await until(
    () => fileLines(join(dir, 'logs')),
    (l) => l.length >= 2,
    'both records',
  );
  const byPath = Object.fromEntries(lines.map((l) => [l.ClientRequestPath, l]));
  assert.deepEqual(byPath['/api/one'], {
    ClientRequestPath: '/api/one',
    EdgeResponseStatus: 200,
    OriginResponseStatus: 0,
    ResponseHeaders: { 'set-cookie': 'sc=1' },
  });
  assert.deepEqual(byPath['/home'], {
    ClientRequestPath: '/home',
    EdgeResponseStatus: 200,
    OriginResponseStatus: 200,
    ResponseHeaders: { 'set-cookie': 'a=1', 'x-origin': 'origin-1' },
  });
});
