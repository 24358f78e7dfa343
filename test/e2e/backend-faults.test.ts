/**
 * Backend faults injected into the real `edgeport start`, seen by the clients users have (the AWS
 * SDK with one try, fetch on the management API, HTTP on the edge, a script's bucket binding):
 * - PostgreSQL away, through a TCP proxy the test cuts (never the shared server): reset, then
 *   silent. Every answer comes at once or within the deadline, 503 with Retry-After; known zones
 *   keep being served; once it is back everything works, nothing acknowledged is lost, and every
 *   edge request made its log line.
 * - The s3:// blob store (s3rver, a third-party S3 server, behind a fault injector): silent, 503
 *   SlowDown, 507 full. S3 clients get 503 ServiceUnavailable / InsufficientStorage, the binding a
 *   thrown error, /readyz 503 naming the blob store; nothing acknowledged is lost.
 * - edgeport starts on s3rver as it is (it lacks ListMultipartUploads) and serves bodies byte-exact.
 * - A file:// blob store whose file hangs its reader (a FIFO, as a mount that hangs): 503 within the
 *   deadline, then calls refused at once and /readyz 503 while two hang; answering again, all served.
 * Each test prints what the clients saw (status, code, Retry-After, time to answer).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { until } from '../helpers/delivered-logs.ts';
import { ADMIN, S3_KEY, apiOf, createFileJob, createZone, fileLines, getVia } from '../helpers/edge-logs-setup.ts';
import { startEdgeport, TEST_PG_SECRETS_KEY, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { hasExited } from '../helpers/child-processes.ts';
import { startFaultyS3 } from '../helpers/faulty-s3.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ENV = { ...ADMIN, ...S3_KEY, EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: '200' };
const md5 = (data: Uint8Array): string => createHash('md5').update(data).digest('hex');

function s3Of(t: TestContext, server: EdgeportServer): S3Client {
  const client = new S3Client({
    endpoint: server.urls['S3-compatible API'],
    region: 'auto',
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
  });
  t.after(() => client.destroy());
  return client;
}

/** What an S3 call answered: `200 in 12 ms`, or `503 ServiceUnavailable, Retry-After 1, in 12 ms`. */
async function s3Answer(call: () => Promise<unknown>): Promise<{ text: string; status: number; code: string; retryAfter: string | undefined; ms: number }> {
  const started = performance.now();
  try {
    const out = (await call()) as { Body?: { transformToByteArray(): Promise<Uint8Array> } } | undefined;
    // A body is read to its end: one left open would be cut when the test ends.
    await out?.Body?.transformToByteArray();
    const ms = Math.round(performance.now() - started);
    return { text: `200 in ${ms} ms`, status: 200, code: '', retryAfter: undefined, ms };
  } catch (error) {
    const ms = Math.round(performance.now() - started);
    if (!(error instanceof S3ServiceException)) throw error;
    const retryAfter = (error.$response as { headers?: Record<string, string> } | undefined)?.headers?.['retry-after'];
    return {
      text: `${error.$metadata.httpStatusCode} ${error.name}, Retry-After ${retryAfter ?? '-'}, in ${ms} ms`,
      status: error.$metadata.httpStatusCode ?? 0,
      code: error.name,
      retryAfter,
      ms,
    };
  }
}

/** A fetch's answer in the same words. */
async function httpAnswer(
  call: () => Promise<{ status: number; retryAfter: string | null | undefined; detail: string }>,
): Promise<{ text: string; status: number; retryAfter: string | null | undefined; ms: number }> {
  const started = performance.now();
  const { status, retryAfter, detail } = await call();
  const ms = Math.round(performance.now() - started);
  return { text: `${status}${detail ? ` ${detail}` : ''}, Retry-After ${retryAfter ?? '-'}, in ${ms} ms`, status, retryAfter, ms };
}

test(
  'PostgreSQL away (reset, then silent): 503 with Retry-After at once or within the deadline, known zones served; back, nothing lost',
  { timeout: 180_000 },
  async (t) => {
    const dir = tempDir(t);
    const url = new URL(await pgTestUrl(t, { pool: 6 }));
    const proxy = await startTcpProxy(t, { host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    writeFileSync(join(dir, 'edgeport.toml'), `[db]\nurl = "${url}"\ntimeout_ms = 1500\n`);
    const server = await startEdgeport({
      shedding: false,
      owner: t,
      dataDir: join(dir, 'data'),
      env: { ...ENV, EDGEPORT_LOGS_FILE_ROOTS: dir, EDGEPORT_SECRETS_KEY: TEST_PG_SECRETS_KEY },
      args: ['--config', join(dir, 'edgeport.toml')],
    });
    const s3 = s3Of(t, server);
    const api = apiOf(server);
    const apiBase = server.urls['management API']!;
    const origin = createServer((_req, res) => res.end('origin'));
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    t.after(
      () =>
        new Promise<void>((resolve) => {
          origin.closeAllConnections();
          origin.close(() => resolve());
        }),
    );
    const zoneId = await createZone(api, `http://127.0.0.1:${(origin.address() as AddressInfo).port}`);
    await createFileJob(api, zoneId, join(dir, 'logs'), {
      output_options: { field_names: ['RayID', 'ClientRequestHost', 'ClientRequestPath', 'EdgeResponseStatus'] },
    });
    await s3.send(new CreateBucketCommand({ Bucket: 'pg-away' }));
    const acknowledged = randomBytes(300_000);
    await s3.send(new PutObjectCommand({ Bucket: 'pg-away', Key: 'acknowledged', Body: acknowledged }));
    const edge = server.urls.edge!;
    assert.equal((await getVia(edge, 'www.example.test', '/warm')).status, 200);
    const edgePaths: string[] = ['/warm'];

    const table: string[] = [];
    for (const how of ['reset', 'blackhole'] as const) {
      proxy.cut(how);
      // Past the edge's one-second cache: every read goes to the database now.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const put = await s3Answer(() => s3.send(new PutObjectCommand({ Bucket: 'pg-away', Key: `during-${how}`, Body: randomBytes(1000) })));
      const get = await s3Answer(() => s3.send(new GetObjectCommand({ Bucket: 'pg-away', Key: 'acknowledged' })));
      const zones = await httpAnswer(async () => {
        const response = await fetch(`${apiBase}/zones`, { headers: { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY } });
        const body = (await response.json()) as { errors: Array<{ code: number }> };
        return { status: response.status, retryAfter: response.headers.get('retry-after'), detail: `code ${body.errors[0]?.code}` };
      });
      const known = await httpAnswer(async () => {
        const answer = await getVia(edge, 'www.example.test', `/known-${how}`);
        return { status: answer.status, retryAfter: answer.headers['retry-after'] as string | undefined, detail: '' };
      });
      // Right after: the last known config answers without waiting on the database's deadline again.
      const knownAgain = await httpAnswer(async () => {
        const answer = await getVia(edge, 'www.example.test', `/known-again-${how}`);
        return { status: answer.status, retryAfter: answer.headers['retry-after'] as string | undefined, detail: '' };
      });
      const unknown = await httpAnswer(async () => {
        const answer = await getVia(edge, `api.example.test`, `/unknown-${how}`);
        return { status: answer.status, retryAfter: answer.headers['retry-after'] as string | undefined, detail: '' };
      });
      edgePaths.push(`/known-${how}`, `/known-again-${how}`, `/unknown-${how}`);
      const ready = await fetch(`${new URL(apiBase).origin}/readyz`);
      const readyBody = (await ready.json()) as { checks: Record<string, string> };
      table.push(
        `PostgreSQL ${how}: S3 PUT ${put.text}; S3 GET ${get.text}; API GET /zones ${zones.text}; edge known zone ${known.text}, again ${knownAgain.text}; ` +
          `edge host never looked up ${unknown.text}; /readyz ${ready.status} database: ${readyBody.checks.database}`,
      );
      for (const answer of [put, get]) {
        assert.equal(answer.status, 503, `${how}: ${answer.text}`);
        assert.equal(answer.code, 'ServiceUnavailable');
        assert.equal(answer.retryAfter, '1');
      }
      assert.equal(zones.status, 503, zones.text);
      assert.equal(zones.retryAfter, '1');
      assert.equal(known.status, 200, 'a zone it served keeps being served');
      assert.equal(knownAgain.status, 200, knownAgain.text);
      // Below the database's 1.5 s deadline: this request did not wait on it.
      assert.ok(knownAgain.ms < 1_500, `the next request to a known zone: ${knownAgain.text}`);
      assert.equal(unknown.status, 503, unknown.text);
      assert.equal(ready.status, 503);
      // Reset: at once. Silent: within the deadline (1.5 s; a transaction may try a second statement).
      for (const answer of [put, get, zones, unknown]) assert.ok(answer.ms < (how === 'reset' ? 3_000 : 8_000), `${how}: ${answer.text}`);
    }

    proxy.restore();
    const started = performance.now();
    await until(
      async () => (await fetch(`${new URL(apiBase).origin}/readyz`)).status,
      (status) => status === 200,
      'ready again',
      30_000,
    );
    table.push(`PostgreSQL back: ready after ${Math.round(performance.now() - started)} ms`);
    const back = await s3.send(new GetObjectCommand({ Bucket: 'pg-away', Key: 'acknowledged' }));
    assert.equal(md5(await back.Body!.transformToByteArray()), md5(acknowledged), 'the acknowledged object, byte-exact');
    for (const how of ['reset', 'blackhole']) {
      await assert.rejects(s3.send(new GetObjectCommand({ Bucket: 'pg-away', Key: `during-${how}` })), { name: 'NoSuchKey' }, 'a refused write left nothing');
    }
    await s3.send(new PutObjectCommand({ Bucket: 'pg-away', Key: 'after', Body: 'after' }));
    const lines = await until(
      () => fileLines(join(dir, 'logs')),
      (found) => edgePaths.every((path) => found.some((line) => line.ClientRequestPath === path)),
      "every edge request's line",
      30_000,
    );
    const statuses = lines.map((line) => `${line.ClientRequestPath} ${String(line.EdgeResponseStatus)}`).sort();
    table.push(`edge log lines delivered: ${statuses.join(', ')}`);
    assert.equal(lines.length, edgePaths.length, 'each request once');
    for (const line of table) t.diagnostic(line);
  },
);

test(
  'the s3:// blob store (s3rver) silent, 503 SlowDown, 507 full: S3 clients get 503s, the binding an error, /readyz names it; nothing lost',
  { timeout: 180_000 },
  async (t) => {
    const dir = tempDir(t);
    const s3rver = await startS3rver(t);
    const faulty = await startFaultyS3(t, s3rver.endpoint);
    const blobsUrl = s3rver.blobsUrl('e2e').replace(s3rver.endpoint, faulty.endpoint);
    writeFileSync(
      join(dir, 'script.mjs'),
      `export default {
    async fetch(request, env) {
      try {
        await env.BUCKET.put('from-script', 'x'.repeat(100000));
        return new Response('stored');
      } catch (error) {
        return new Response(String(error.message), { status: 503 });
      }
    },
  };`,
    );
    writeFileSync(
      join(dir, 'edgeport.toml'),
      `[blobs]\nurl = "${blobsUrl}"\ntimeout_ms = 1500\n\n[[scripts]]\nname = "writer"\nmain = "script.mjs"\n` +
        'compatibility_date = "2025-01-01"\nroutes = ["script.test/*"]\nstore_buckets = [{ binding = "BUCKET", bucket_name = "scripted" }]\n',
    );
    const server = await startEdgeport({ shedding: false, owner: t, dataDir: join(dir, 'data'), env: ENV, args: ['--config', join(dir, 'edgeport.toml')] });
    const s3 = s3Of(t, server);
    await s3.send(new CreateBucketCommand({ Bucket: 'blobs-away' }));
    const acknowledged = randomBytes(200_000);
    await s3.send(new PutObjectCommand({ Bucket: 'blobs-away', Key: 'acknowledged', Body: acknowledged }));
    const readyz = `${new URL(server.urls['management API']!).origin}/readyz`;

    const table: string[] = [];
    const faults = [
      { name: 'silent', fault: { kind: 'hang' as const }, code: 'ServiceUnavailable' },
      { name: '503 SlowDown', fault: { kind: 'answer' as const, status: 503, code: 'SlowDown' }, code: 'ServiceUnavailable' },
      // As MinIO when full: writes refused, reads served.
      {
        name: '507 XMinioStorageFull on writes',
        fault: { kind: 'answer' as const, status: 507, code: 'XMinioStorageFull' },
        code: 'InsufficientStorage',
        writesOnly: true,
      },
    ];
    for (const { name, fault, code, writesOnly } of faults) {
      faulty.set(fault, writesOnly ? (method) => method === 'PUT' || method === 'POST' : undefined);
      const put = await s3Answer(() => s3.send(new PutObjectCommand({ Bucket: 'blobs-away', Key: `during-${name}`, Body: randomBytes(200_000) })));
      const get = await s3Answer(() => s3.send(new GetObjectCommand({ Bucket: 'blobs-away', Key: 'acknowledged' })));
      const started = performance.now();
      const script = await getVia(server.urls.edge!, 'script.test', '/');
      const scriptMs = Math.round(performance.now() - started);
      // The probe's result is kept 2 s while it fails: poll past that.
      const ready = await until(
        async () => {
          const response = await fetch(readyz);
          return { status: response.status, blobs: ((await response.json()) as { checks: Record<string, string> }).checks.blobs };
        },
        (answer) => answer.status === 503,
        '/readyz failing',
        15_000,
      );
      table.push(
        `blob store ${name}: S3 PUT ${put.text}; S3 GET ${get.text}; binding put ${script.status} "${script.body.trim()}" in ${scriptMs} ms; /readyz 503 blobs: ${ready.blobs}`,
      );
      assert.equal(put.status, 503, `${name}: ${put.text}`);
      assert.equal(put.code, code);
      assert.ok(put.retryAfter === '1' || put.retryAfter === '5');
      assert.equal(get.status, writesOnly ? 200 : 503, `${name}: ${get.text}`);
      assert.match(script.body, /^put: The object store is (temporarily unavailable|out of space): the blob store .*\(10043\)$/);
      // Silent: two tries of 1.5 s at most; answered: at once.
      for (const answer of [put, get]) assert.ok(answer.ms < (name === 'silent' ? 10_000 : 5_000), `${name}: ${answer.text}`);
      faulty.set({ kind: 'pass' });
      await until(
        async () => (await fetch(readyz)).status,
        (status) => status === 200,
        'ready again',
        15_000,
      );
    }
    const back = await s3.send(new GetObjectCommand({ Bucket: 'blobs-away', Key: 'acknowledged' }));
    assert.equal(md5(await back.Body!.transformToByteArray()), md5(acknowledged), 'the acknowledged object, byte-exact');
    const script = await getVia(server.urls.edge!, 'script.test', '/');
    assert.equal(script.body, 'stored');
    table.push(`blob store back: the acknowledged object byte-exact; the binding's put works (${script.status})`);
    for (const line of table) t.diagnostic(line);
  },
);

test('edgeport starts on s3rver as it is (no ListMultipartUploads) and serves bodies byte-exact through the AWS SDK', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const s3rver = await startS3rver(t);
  const server = await startEdgeport({
    shedding: false,
    owner: t,
    dataDir: join(dir, 'data'),
    env: { ...ENV, EDGEPORT_BLOBS_URL: s3rver.blobsUrl('started'), EDGEPORT_LOG_LEVEL: 'warn' },
  });
  const s3 = s3Of(t, server);
  await s3.send(new CreateBucketCommand({ Bucket: 'on-s3rver' }));
  for (const size of [10, 100_000, 9 * 1024 * 1024]) {
    const body = randomBytes(size);
    await s3.send(new PutObjectCommand({ Bucket: 'on-s3rver', Key: `k${size}`, Body: body }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'on-s3rver', Key: `k${size}` }));
    assert.equal(md5(await got.Body!.transformToByteArray()), md5(body), `${size} bytes`);
  }
});

test(
  'a file:// blob store whose file hangs its reader (a FIFO): 503 within the deadline, then refused at once and /readyz 503; answering again, all served',
  { timeout: 120_000 },
  async (t) => {
    const dir = tempDir(t);
    const shared = join(dir, 'shared');
    writeFileSync(join(dir, 'edgeport.toml'), `[blobs]\nurl = "file://${shared}"\ntimeout_ms = 800\n`);
    const server = await startEdgeport({ shedding: false, owner: t, dataDir: join(dir, 'data'), env: ENV, args: ['--config', join(dir, 'edgeport.toml')] });
    const s3 = s3Of(t, server);
    await s3.send(new CreateBucketCommand({ Bucket: 'mounted' }));
    const blobFiles = () => readdirSync(join(shared, 'blobs'));
    const hungBytes = randomBytes(200_000);
    await s3.send(new PutObjectCommand({ Bucket: 'mounted', Key: 'hung', Body: hungBytes }));
    const [hungFile] = blobFiles();
    const fineBytes = randomBytes(200_000);
    await s3.send(new PutObjectCommand({ Bucket: 'mounted', Key: 'fine', Body: fineBytes }));
    assert.equal(blobFiles().length, 2);
    // The hung object's file becomes a FIFO with no writer: a read's open() blocks in a worker thread, as on a mount that hangs.
    const hungPath = join(shared, 'blobs', hungFile!);
    rmSync(hungPath);
    execFileSync('mkfifo', [hungPath]);
    const release = () => {
      try {
        closeSync(openSync(hungPath, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // No reader left, or the file is back: nothing blocked.
      }
    };
    t.after(release);
    const readyz = `${new URL(server.urls['management API']!).origin}/readyz`;
    const get = (key: string) => s3Answer(() => s3.send(new GetObjectCommand({ Bucket: 'mounted', Key: key })));

    const first = await get('hung');
    const fine = await get('fine');
    const second = await get('hung');
    // Two reads hang now: the store refuses calls at once rather than give the mount more threads.
    const refusedGet = await get('fine');
    const refusedPut = await s3Answer(() => s3.send(new PutObjectCommand({ Bucket: 'mounted', Key: 'during', Body: randomBytes(200_000) })));
    const ready = await fetch(readyz);
    const readyBody = (await ready.json()) as { checks: Record<string, string> };
    t.diagnostic(
      `GET of the hung object ${first.text}, then ${second.text}; another object meanwhile ${fine.text}; with two hung: GET ${refusedGet.text}, PUT ${refusedPut.text}; /readyz ${ready.status} blobs: ${readyBody.checks.blobs}`,
    );
    for (const answer of [first, second]) {
      assert.equal(answer.status, 503, answer.text);
      assert.equal(answer.code, 'ServiceUnavailable');
      assert.equal(answer.retryAfter, '1');
      assert.ok(answer.ms >= 700 && answer.ms < 5_000, answer.text);
    }
    assert.equal(fine.status, 200, fine.text);
    for (const answer of [refusedGet, refusedPut]) {
      assert.equal(answer.status, 503, answer.text);
      assert.equal(answer.retryAfter, '1');
      assert.ok(answer.ms < 700, `refused at once: ${answer.text}`);
    }
    assert.equal(ready.status, 503);
    assert.match(readyBody.checks.blobs!, /blob store has 2 calls unanswered/);

    // The mount answers again (the FIFO gets a writer), and the file comes back.
    release();
    rmSync(hungPath);
    writeFileSync(hungPath, hungBytes);
    await until(
      async () => (await fetch(readyz)).status,
      (status) => status === 200,
      'ready again',
      15_000,
    );
    for (const [key, bytes] of [
      ['hung', hungBytes],
      ['fine', fineBytes],
    ] as const) {
      const back = await s3.send(new GetObjectCommand({ Bucket: 'mounted', Key: key }));
      assert.equal(md5(await back.Body!.transformToByteArray()), md5(bytes), `${key}, byte-exact`);
    }
    await s3.send(new PutObjectCommand({ Bucket: 'mounted', Key: 'after', Body: randomBytes(200_000) }));
    assert.equal(hasExited(server.child), false);
  },
);
