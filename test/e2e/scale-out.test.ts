/**
 * Issue 7 end to end: two `edgeport start` instances on one PostgreSQL schema and one shared blob
 * directory, driven by the real clients (@aws-sdk/client-s3, plain HTTP to the edge, fetch to the
 * management API). A write on A is read on B at once; 100 concurrent conditional puts across A and
 * B have exactly one winner; the same zone ruleset created on both leaves one; a multipart upload
 * begun on A is completed on B; a custom-fields change on A shows in B's log lines (within the
 * second its cache may keep the old rule: the test probes until the change shows, rather than
 * sleeping past that second); every request's log line is delivered exactly once per job,
 * whichever instance served it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { fileLines, until } from '../helpers/delivered-logs.ts';
import { startEdgeport, writeScriptConfig, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { managementApi, type ApiClient } from '../helpers/management-api.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { listen } from '../helpers/listen.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'owner@example.test', EDGEPORT_ADMIN_KEY: 'scale-out-admin-key-0123' };
const S3_KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'EDGEPORTSCALEOUT', EDGEPORT_S3_SECRET_ACCESS_KEY: 'scale-out-secret-0123456789' };

interface Pair {
  a: EdgeportServer;
  b: EdgeportServer;
  dir: string;
}

/** Two instances: own data dirs (spools, chain), one database schema, one blob directory. */
async function startPair(t: TestContext): Promise<Pair> {
  const dir = tempDir(t);
  const env = {
    ...ADMIN,
    ...S3_KEY,
    EDGEPORT_DB_URL: await pgTestUrl(t, { pool: 6 }),
    EDGEPORT_BLOBS_URL: `file://${join(dir, 'shared-blobs')}`,
    EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: '200',
    EDGEPORT_LOGS_FILE_ROOTS: dir,
  };
  // A script on both, whose workers reach the same store: the database and blobs above.
  const args = writeScriptConfig(dir, {
    name: 'writer',
    route: 'scale.test/script/*',
    bucket: 'scripted',
    source: `export default {
    async fetch(request, env) {
      const key = new URL(request.url).pathname.slice('/script/'.length);
      await env.BUCKET.put(key, 'written by a script');
      return new Response((await env.BUCKET.head(key)).etag);
    },
  };`,
  });
  const [a, b] = await Promise.all([
    startEdgeport({ owner: t, dataDir: join(dir, 'a'), env, args }),
    startEdgeport({ owner: t, dataDir: join(dir, 'b'), env, args }),
  ]);
  return { a, b, dir };
}

function s3Of(t: TestContext, server: EdgeportServer): S3Client {
  // The SDK's own retries, as users have them: 100 puts at once on a busy machine can meet load
  // shedding, whose 503 SlowDown did nothing and is retried (a 412 is final, never retried).
  const client = new S3Client({
    endpoint: server.urls['S3-compatible API'],
    region: 'auto',
    forcePathStyle: true,
    maxAttempts: 5,
    credentials: { accessKeyId: S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
  });
  t.after(() => client.destroy());
  return client;
}

function apiOf(server: EdgeportServer): ApiClient {
  return managementApi(server.urls['management API']!, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
}

test('two instances share one store: read-after-write, one winner of 100 conditional puts, multipart across instances', { timeout: 120_000 }, async (t) => {
  const { a, b } = await startPair(t);
  const [s3a, s3b] = [s3Of(t, a), s3Of(t, b)];
  await s3a.send(new CreateBucketCommand({ Bucket: 'shared' }));

  // A put on A is read on B at once, with the same body, etag and metadata.
  const put = await s3a.send(new PutObjectCommand({ Bucket: 'shared', Key: 'hello.txt', Body: 'from A', Metadata: { origin: 'a' } }));
  const got = await s3b.send(new GetObjectCommand({ Bucket: 'shared', Key: 'hello.txt' }));
  assert.equal(await got.Body!.transformToString(), 'from A');
  assert.equal(got.ETag, put.ETag);
  assert.deepEqual(got.Metadata, { origin: 'a' });

  // 100 concurrent create-only puts of one key, split across A and B: exactly one wins.
  const outcomes = await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      (i % 2 === 0 ? s3a : s3b).send(new PutObjectCommand({ Bucket: 'shared', Key: 'race', Body: `writer ${i}`, IfNoneMatch: '*' })).then(
        () => i,
        (error: { name?: string; $metadata?: { httpStatusCode?: number } }) => {
          assert.equal(error.$metadata?.httpStatusCode, 412, `writer ${i}: ${error.name}`);
          return -1;
        },
      ),
    ),
  );
  const winners = outcomes.filter((i) => i >= 0);
  assert.equal(winners.length, 1, `exactly one conditional put wins, got ${winners.length}`);
  const stored = await s3a.send(new GetObjectCommand({ Bucket: 'shared', Key: 'race' }));
  assert.equal(await stored.Body!.transformToString(), `writer ${winners[0]}`);

  // 100 concurrent compare-and-swap puts (If-Match the current etag): exactly one wins too.
  const current = stored.ETag!;
  const swaps = await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      (i % 2 === 0 ? s3a : s3b).send(new PutObjectCommand({ Bucket: 'shared', Key: 'race', Body: `swap ${i}`, IfMatch: current })).then(
        () => 1,
        () => 0,
      ),
    ),
  );
  assert.equal(
    swaps.reduce((sum, won) => sum + won, 0),
    1,
  );

  // A multipart upload begun on A takes a part on A and one on B and is completed on B.
  const partA = Buffer.alloc(5 * 1024 * 1024, 'a');
  const partB = Buffer.from('tail from B');
  const { UploadId } = await s3a.send(new CreateMultipartUploadCommand({ Bucket: 'shared', Key: 'multi.bin' }));
  const one = await s3a.send(new UploadPartCommand({ Bucket: 'shared', Key: 'multi.bin', UploadId, PartNumber: 1, Body: partA }));
  const two = await s3b.send(new UploadPartCommand({ Bucket: 'shared', Key: 'multi.bin', UploadId, PartNumber: 2, Body: partB }));
  await s3b.send(
    new CompleteMultipartUploadCommand({
      Bucket: 'shared',
      Key: 'multi.bin',
      UploadId,
      MultipartUpload: {
        Parts: [
          { PartNumber: 1, ETag: one.ETag! },
          { PartNumber: 2, ETag: two.ETag! },
        ],
      },
    }),
  );
  const whole = await s3a.send(new GetObjectCommand({ Bucket: 'shared', Key: 'multi.bin' }));
  assert.ok(Buffer.from(await whole.Body!.transformToByteArray()).equals(Buffer.concat([partA, partB])));
  assert.match(whole.ETag!, /-2"$/);
});

test(
  "two instances share one control plane: one ruleset per phase, changes on A apply to B's log lines, each line delivered once",
  { timeout: 60_000 },
  async (t) => {
    const { a, b, dir } = await startPair(t);
    const origin = await startOrigin(t);
    const [apiA, apiB] = [apiOf(a), apiOf(b)];
    const [account] = await apiA.call<Array<{ id: string }>>('GET', '/accounts');
    const zone = await apiA.call<{ id: string }>('POST', '/zones', { name: 'scale.test', account: { id: account!.id }, origin: origin.url });

    // The zone's custom-fields ruleset created on A and on B at the same moment: exactly one exists.
    const create = (server: EdgeportServer): Promise<{ success: boolean }> =>
      fetch(`${server.urls['management API']}/zones/${zone.id}/rulesets`, {
        method: 'POST',
        headers: { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'custom fields',
          kind: 'zone',
          phase: 'http_log_custom_fields',
          rules: [{ action: 'log_custom_field', expression: 'true', action_parameters: { request_fields: [{ name: 'x-first' }] } }],
        }),
      }).then((response) => response.json() as Promise<{ success: boolean }>);
    const created = await Promise.all([create(a), create(b), create(a), create(b)]);
    assert.equal(created.filter((answer) => answer.success).length, 1, JSON.stringify(created));
    const rulesets = await apiB.call<Array<{ phase: string }>>('GET', `/zones/${zone.id}/rulesets`);
    assert.equal(rulesets.filter((ruleset) => ruleset.phase === 'http_log_custom_fields').length, 1);

    // One job (created on B), delivering to a file:// directory.
    const logs = join(dir, 'logs');
    const destination = `file://${logs}`;
    const challenge = await apiB.call<{ filename: string }>('POST', `/zones/${zone.id}/logshipping/ownership`, { destination_conf: destination });
    const token = readFileSync(challenge.filename.startsWith('/') ? challenge.filename : join(logs, challenge.filename), 'utf8').trim();
    await apiB.call('POST', `/zones/${zone.id}/logshipping/jobs`, {
      destination_conf: destination,
      dataset: 'http_requests',
      enabled: true,
      ownership_challenge: token,
      output_options: { field_names: ['RayID', 'ClientRequestPath', 'RequestHeaders'] },
    });
    // The job was made on B: A picks it up within its cache's second. Probes through A until one is logged.
    await probeUntilLogged(a, logs, '/probe-job/', {}, () => true);

    // Requests alternate between the two edges.
    const served = new Set<string>();
    for (let i = 0; i < 200; i++) served.add((await getVia(i % 2 === 0 ? a : b, `/before/${i}`, { 'x-first': `f${i}`, 'x-second': `s${i}` })).ray);

    // A script's bucket binding on B's edge writes where A's S3 API reads.
    const written = await getVia(b, '/script/from-b.txt', {});
    const readOnA = await s3Of(t, a).send(new GetObjectCommand({ Bucket: 'scripted', Key: 'from-b.txt' }));
    assert.equal(await readOnA.Body!.transformToString(), 'written by a script');
    served.add(written.ray);

    // The custom fields change on A; B logs the new header from its next requests on (within a second).
    await apiA.call('PUT', `/zones/${zone.id}/rulesets/phases/http_log_custom_fields/entrypoint`, {
      rules: [{ action: 'log_custom_field', expression: 'true', action_parameters: { request_fields: [{ name: 'x-second' }] } }],
    });
    // B logs by the new rule once its cache has it (within a second): probes through B until one shows x-second.
    await probeUntilLogged(b, logs, '/probe-fields/', { 'x-first': 'f', 'x-second': 's' }, (line) => 'x-second' in line.RequestHeaders);
    for (let i = 0; i < 20; i++) served.add((await getVia(b, `/after/${i}`, { 'x-first': `f${i}`, 'x-second': `s${i}` })).ray);

    const probe = (line: LogLine) => line.ClientRequestPath.startsWith('/probe-');
    const all = await until(
      () => fileLines<LogLine>(logs),
      (found) => found.filter((line) => !probe(line)).length >= served.size,
      `${served.size} delivered lines`,
    );
    const rays = all.map((line) => line.RayID);
    assert.equal(new Set(rays).size, rays.length, 'no line delivered twice');
    const lines = all.filter((line) => !probe(line));
    assert.deepEqual(new Set(lines.map((line) => line.RayID)), served, 'every served request delivered');
    for (const line of lines) {
      if (line.ClientRequestPath.startsWith('/script/')) continue;
      if (line.ClientRequestPath.startsWith('/before/')) assert.deepEqual(Object.keys(line.RequestHeaders), ['x-first'], line.ClientRequestPath);
      else assert.deepEqual(line.RequestHeaders, { 'x-second': `s${line.ClientRequestPath.split('/')[2]}` }, line.ClientRequestPath);
    }
  },
);

/** An origin that answers 200 "ok". */
test('two instances share dashboard sessions: signed in on A, used on B, signed out on B, refused on A', { timeout: 60_000 }, async (t) => {
  const { a, b } = await startPair(t);
  const api = (server: EdgeportServer) => server.urls['management API']!;
  const signIn = await fetch(`${api(a)}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ADMIN.EDGEPORT_ADMIN_EMAIL, key: ADMIN.EDGEPORT_ADMIN_KEY }),
  });
  assert.equal(signIn.status, 200);
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
  const csrf = ((await signIn.json()) as { result: { csrf_token: string } }).result.csrf_token;
  const onB = await fetch(`${api(b)}/sessions/current`, { headers: { cookie } });
  assert.equal(onB.status, 200, 'the session made on A is known to B');
  assert.equal(((await onB.json()) as { result: { csrf_token: string } }).result.csrf_token, csrf);
  const zone = await fetch(`${api(b)}/zones`, {
    method: 'POST',
    headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'session.test', account: { id: (await apiOf(a).call<Array<{ id: string }>>('GET', '/accounts'))[0]!.id } }),
  });
  assert.equal(zone.status, 200, 'a write on B with the cookie and its CSRF token');
  assert.equal((await fetch(`${api(b)}/sessions/current`, { method: 'DELETE', headers: { cookie, 'x-csrf-token': csrf } })).status, 200);
  assert.equal((await fetch(`${api(a)}/sessions/current`, { headers: { cookie } })).status, 401, 'signed out on B is signed out on A');
});

async function startOrigin(t: TestContext): Promise<{ url: string }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  const port = await listen(server, t);
  return { url: `http://127.0.0.1:${port}` };
}

/** GET through an instance's edge for host scale.test; resolves with the request's RayID and body. */
function getVia(server: EdgeportServer, path: string, headers: Record<string, string>): Promise<{ ray: string; body: string }> {
  const edge = new URL(server.urls.edge!);
  return new Promise((resolve, reject) => {
    const req = request({ host: edge.hostname, port: edge.port, path, headers: { host: 'scale.test', ...headers } });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        if (res.statusCode === 200) resolve({ ray: String(res.headers['edgeport-ray']), body });
        else reject(new Error(`${path}: ${res.statusCode} ${body}`));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

interface LogLine {
  RayID: string;
  ClientRequestPath: string;
  RequestHeaders: Record<string, string>;
}

/**
 * Sends requests through `server`'s edge at `<prefix><n>`, one after another, until a delivered line
 * of one of them satisfies `applied`: the instance's edge has the change another instance made.
 */
async function probeUntilLogged(
  server: EdgeportServer,
  logs: string,
  prefix: string,
  headers: Record<string, string>,
  applied: (line: LogLine) => boolean,
): Promise<void> {
  let n = 0;
  await until(
    async () => {
      await getVia(server, `${prefix}${n++}`, headers);
      return fileLines<LogLine>(logs);
    },
    (lines) => lines.some((line) => line.ClientRequestPath.startsWith(prefix) && applied(line)),
    `a logged ${prefix} request`,
  );
}
