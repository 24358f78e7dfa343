/**
 * Two accounts on one `edgeport start`, each driven by the real clients a user would use (the
 * official cloudflare SDK and plain fetch for the management API, the AWS SDK for S3, traffic
 * through the edge to a script): every attempt of one account on the other's things (buckets,
 * objects, keys, the dashboard's store routes, a script's bucket, zone names, origins, log
 * destinations, sessions) is refused, exactly like a thing that does not exist where it is one,
 * and changes nothing.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import Cloudflare from 'cloudflare';
import { startEdgeport, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const A = { email: 'alice@example.com', key: 'alice-key-0123456789abcdef' };
const S3_A = { accessKeyId: 'ALICEKEY0001', secretAccessKey: 'alice-s3-secret-0123456789' };

/** Bob's script reads and writes `env.BUCKET`, which his config binds to "photos". */
const SCRIPT = `export default {
  async fetch(request, env) {
    const key = new URL(request.url).pathname.slice(1);
    if (request.method === 'PUT') {
      await env.BUCKET.put(key, await request.text());
      return new Response('stored');
    }
    const object = await env.BUCKET.get(key);
    return object ? new Response(object.body) : new Response('no such object', { status: 404 });
  },
};
`;

interface Account {
  email: string;
  key: string;
  id: string;
  cf: Cloudflare;
  /** fetch below /client/v4 with the account's credentials. */
  call(path: string, init?: RequestInit): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- envelope shapes vary
}

async function account(server: EdgeportServer, email: string, key: string): Promise<Account> {
  const base = server.urls['management API']!;
  const cf = new Cloudflare({
    baseURL: base,
    apiEmail: email,
    apiKey: key,
    apiToken: null,
    userServiceKey: null,
    maxRetries: 0,
    fetch: (url, init) => fetch(String(url).replace('/logpush/', '/logshipping/'), init),
  });
  const id = (await cf.accounts.list()).result[0]!.id;
  return {
    email,
    key,
    id,
    cf,
    async call(path, init = {}) {
      const headers = new Headers(init.headers);
      headers.set('x-auth-email', email);
      headers.set('x-auth-key', key);
      const response = await fetch(`${base}${path}`, { ...init, headers });
      const text = await response.text();
      return { status: response.status, body: text === '' ? null : JSON.parse(text) };
    },
  };
}

/** A request to the edge with a Host header of our choosing (fetch does not let one be set). */
function edgeRequest(
  server: EdgeportServer,
  host: string,
  path: string,
  method = 'GET',
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(server.urls.edge!);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function s3(server: EdgeportServer, credentials: { accessKeyId: string; secretAccessKey: string }): S3Client {
  return new S3Client({ endpoint: server.urls['S3-compatible API'], region: 'auto', forcePathStyle: true, credentials, maxAttempts: 1 });
}

const s3Error = (name: string, status: number) => (error: unknown) => {
  assert.ok(error instanceof S3ServiceException, String(error));
  assert.deepEqual([error.name, error.$metadata.httpStatusCode], [name, status]);
  return true;
};

test("two accounts: buckets, S3 keys, the dashboard's store routes and scripts each stay in their account", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const env = {
    EDGEPORT_ADMIN_EMAIL: A.email,
    EDGEPORT_ADMIN_KEY: A.key,
    EDGEPORT_S3_ACCESS_KEY_ID: S3_A.accessKeyId,
    EDGEPORT_S3_SECRET_ACCESS_KEY: S3_A.secretAccessKey,
  };
  // Alice is the first account (the operator); Bob is made with the CLI, and his script names him.
  const first = await startEdgeport({ owner: t, dataDir, env });
  await first.stop();
  const { stdout } = await promisify(execFile)(process.execPath, [
    join(ROOT, 'bin/edgeport.js'),
    'accounts',
    'create',
    'bob@example.com',
    '--data-dir',
    dataDir,
  ]);
  const bobKey = /X-Auth-Key: +(\S+)/.exec(stdout)![1]!;
  writeFileSync(join(dir, 'bob.mjs'), SCRIPT);
  writeFileSync(
    join(dir, 'edgeport.toml'),
    `[[scripts]]
name = "bob"
main = "bob.mjs"
compatibility_date = "2025-01-01"
routes = ["bob.test/*"]
store_buckets = [{ binding = "BUCKET", bucket_name = "photos" }]
account = "bob@example.com"
`,
  );
  const server = await startEdgeport({ owner: t, dataDir, env, args: ['--config', join(dir, 'edgeport.toml')] });
  const alice = await account(server, A.email, A.key);
  const bob = await account(server, 'bob@example.com', bobKey);
  assert.notEqual(alice.id, bob.id);

  // Alice's bucket "photos" holds a secret; Bob's script binds a "photos" of his own.
  const aliceS3 = s3(server, S3_A);
  t.after(() => aliceS3.destroy());
  await aliceS3.send(new CreateBucketCommand({ Bucket: 'photos' }));
  await aliceS3.send(new CreateBucketCommand({ Bucket: 'private' }));
  await aliceS3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'secret.txt', Body: 'alice only' }));
  await aliceS3.send(new PutObjectCommand({ Bucket: 'private', Key: 'ledger.csv', Body: 'a,b' }));

  // Bob's own S3 key, made through the API: it sees only his buckets.
  const made = await bob.call(`/accounts/${bob.id}/store/access-keys`, { method: 'POST' });
  assert.equal(made.status, 200);
  const bobS3 = s3(server, { accessKeyId: made.body.result.access_key_id, secretAccessKey: made.body.result.secret_access_key });
  t.after(() => bobS3.destroy());
  assert.deepEqual(
    (await bobS3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name),
    ['photos'],
    'only the bucket his script binds',
  );
  assert.deepEqual((await bobS3.send(new ListObjectsV2Command({ Bucket: 'photos' }))).Contents ?? [], [], 'his photos is not hers');
  await assert.rejects(bobS3.send(new GetObjectCommand({ Bucket: 'private', Key: 'ledger.csv' })), s3Error('NoSuchBucket', 404));
  await assert.rejects(bobS3.send(new PutObjectCommand({ Bucket: 'private', Key: 'ledger.csv', Body: 'bob was here' })), s3Error('NoSuchBucket', 404));
  await assert.rejects(bobS3.send(new DeleteObjectCommand({ Bucket: 'private', Key: 'ledger.csv' })), s3Error('NoSuchBucket', 404));
  await assert.rejects(bobS3.send(new ListObjectsV2Command({ Bucket: 'private' })), s3Error('NoSuchBucket', 404));
  await assert.rejects(bobS3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'stolen', CopySource: 'private/ledger.csv' })), s3Error('NoSuchBucket', 404));

  // Bob's script through the edge: his zone, his bucket.
  await bob.cf.zones.create({ account: { id: bob.id }, name: 'bob.test' });
  const viaEdge = (path: string, method = 'GET', body?: string) => edgeRequest(server, 'bob.test', path, method, body);
  assert.equal((await viaEdge('/secret.txt')).status, 404, "the script's photos is Bob's");
  assert.equal((await viaEdge('/secret.txt', 'PUT', 'bob wrote this')).body, 'stored');
  assert.equal((await viaEdge('/secret.txt')).body, 'bob wrote this');
  assert.equal(
    await (await aliceS3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'secret.txt' }))).Body!.transformToString(),
    'alice only',
    "Bob's script never touched Alice's photos",
  );

  // The dashboard's store routes under Bob's own account id: Alice's buckets do not exist there.
  const bobBuckets = `/accounts/${bob.id}/store/buckets`;
  assert.deepEqual(
    (await bob.call(bobBuckets)).body.result.map((b: { name: string }) => b.name),
    ['photos'],
  );
  for (const [method, path] of [
    ['GET', `${bobBuckets}/private/objects/ledger.csv`],
    ['DELETE', `${bobBuckets}/private/objects/ledger.csv`],
    ['GET', `${bobBuckets}/private`],
    ['DELETE', `${bobBuckets}/private`],
  ] as const) {
    const refused = await bob.call(path, { method });
    assert.deepEqual([refused.status, refused.body.errors[0].code], [404, 10006], `${method} ${path}`);
  }
  // ...and Alice's account id in the path is not his.
  assert.equal((await bob.call(`/accounts/${alice.id}/store/buckets/private/objects/ledger.csv`)).status, 404);
  assert.equal(await (await aliceS3.send(new GetObjectCommand({ Bucket: 'private', Key: 'ledger.csv' }))).Body!.transformToString(), 'a,b', 'nothing changed');

  // Keys are per account too: Bob cannot list or revoke Alice's.
  const aliceKeys = await alice.call(`/accounts/${alice.id}/store/access-keys`);
  assert.deepEqual(
    aliceKeys.body.result.map((k: { access_key_id: string }) => k.access_key_id),
    [S3_A.accessKeyId],
  );
  const revoke = await bob.call(`/accounts/${bob.id}/store/access-keys/${S3_A.accessKeyId}`, { method: 'DELETE' });
  assert.equal(revoke.status, 404);
  await aliceS3.send(new ListBucketsCommand({}));

  // A bucket-scoped read-only key of Alice's reads photos and nothing else, and writes nowhere.
  const scoped = await alice.call(`/accounts/${alice.id}/store/access-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ permission: 'object_read_only', buckets: ['photos'] }),
  });
  const reader = s3(server, { accessKeyId: scoped.body.result.access_key_id, secretAccessKey: scoped.body.result.secret_access_key });
  t.after(() => reader.destroy());
  assert.equal(await (await reader.send(new GetObjectCommand({ Bucket: 'photos', Key: 'secret.txt' }))).Body!.transformToString(), 'alice only');
  await assert.rejects(reader.send(new PutObjectCommand({ Bucket: 'photos', Key: 'secret.txt', Body: 'x' })), s3Error('AccessDenied', 403));
  await assert.rejects(reader.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'secret.txt' })), s3Error('AccessDenied', 403));
  await assert.rejects(reader.send(new GetObjectCommand({ Bucket: 'private', Key: 'ledger.csv' })), s3Error('AccessDenied', 403));
  await assert.rejects(reader.send(new CreateBucketCommand({ Bucket: 'another' })), s3Error('AccessDenied', 403));
  assert.equal(await (await aliceS3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'secret.txt' }))).Body!.transformToString(), 'alice only');
});

test('two accounts: zones, origins, log destinations and sessions cannot be taken over', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const logRoot = join(dir, 'logs');
  const env = { EDGEPORT_ADMIN_EMAIL: A.email, EDGEPORT_ADMIN_KEY: A.key, EDGEPORT_LOGS_FILE_ROOTS: logRoot };
  const server = await startEdgeport({ owner: t, dataDir, env });
  const { stdout } = await promisify(execFile)(process.execPath, [
    join(ROOT, 'bin/edgeport.js'),
    'accounts',
    'create',
    'bob@example.com',
    '--data-dir',
    dataDir,
  ]);
  const alice = await account(server, A.email, A.key);
  const bob = await account(server, 'bob@example.com', /X-Auth-Key: +(\S+)/.exec(stdout)![1]!);
  const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const apiPort = new URL(server.urls['management API']!).port;

  // Zones: Bob can take neither Alice's name, nor a name under it, nor one above it.
  const shop = await alice.cf.zones.create({ account: { id: alice.id }, name: 'shop.example.test' });
  for (const name of ['shop.example.test', 'www.shop.example.test', 'example.test']) {
    await assert.rejects(
      bob.cf.zones.create({ account: { id: bob.id }, name }),
      (error: unknown) => {
        assert.ok(error instanceof Cloudflare.APIError, String(error));
        assert.ok([1061, 1116].includes((error.errors as Array<{ code: number }>)[0]!.code), JSON.stringify(error.errors));
        return true;
      },
      name,
    );
  }
  assert.equal((await bob.cf.zones.list()).result.length, 0, 'nothing was created');

  // Origins: Bob's zone cannot point at edgeport's own management API or the metadata address.
  for (const origin of [`http://127.0.0.1:${apiPort}`, 'http://169.254.169.254', 'http://localhost:8545']) {
    const refused = await bob.call('/zones', json({ name: `bob-${Math.random().toString(16).slice(2, 8)}.test`, origin }));
    assert.deepEqual([refused.status, refused.body.errors[0].code, refused.body.errors[0].source.pointer], [400, 1002, '/origin'], origin);
  }

  // file:// destinations: Alice's challenge is hers; Bob's challenge there is refused and writes nothing.
  const aliceLogs = `file://${logRoot}/alice/{DATE}`;
  const issued = await alice.call(`/zones/${shop.id}/logshipping/ownership`, json({ destination_conf: aliceLogs }));
  assert.equal(issued.body.result.valid, true, JSON.stringify(issued.body));
  const token = readFileSync(join(logRoot, 'alice', 'ownership-challenge.txt'), 'utf8');
  const bobZone = (await bob.call('/zones', json({ name: 'bob.test' }))).body.result.id;
  const overwrite = await bob.call(`/zones/${bobZone}/logshipping/ownership`, json({ destination_conf: `file://${logRoot}/alice` }));
  assert.deepEqual([overwrite.body.result.valid, overwrite.body.result.filename], [false, null]);
  assert.equal(readFileSync(join(logRoot, 'alice', 'ownership-challenge.txt'), 'utf8'), token, "Alice's challenge is untouched");
  // Even holding Alice's token, Bob's zone cannot ship into her directory; nor into the data dir or outside the roots.
  const stolen = await bob.call(`/zones/${bobZone}/logshipping/jobs`, json({ destination_conf: aliceLogs, ownership_challenge: token }));
  assert.deepEqual([stolen.status, stolen.body.errors[0].message], [400, 'incorrect ownership challenge']);
  for (const destination of [`file://${dataDir}/blobs`, 'file:///etc/edgeport', `file://${logRoot}/../escape`]) {
    const refused = await bob.call(`/zones/${bobZone}/logshipping/ownership`, json({ destination_conf: destination }));
    assert.deepEqual([refused.status, refused.body.errors?.[0]?.code], [400, 1002], destination);
  }
  // store:// names Bob's own buckets; http(s):// may not reach inside.
  const store = await bob.call(`/zones/${bobZone}/logshipping/ownership`, json({ destination_conf: 'store://alice-bucket/logs' }));
  assert.equal(store.body.result.valid, false);
  const internal = await bob.call(`/zones/${bobZone}/logshipping/jobs`, json({ destination_conf: `http://127.0.0.1:${apiPort}/client/v4/zones` }));
  assert.deepEqual([internal.status, internal.body.errors[0].code], [400, 1002]);
  // edgeport's own listener on loopback is refused in the words of any loopback port: nothing says it is edgeport's.
  assert.match(internal.body.errors[0].message, /127\.0\.0\.1 is a loopback address/);
  assert.doesNotMatch(internal.body.errors[0].message, /edgeport|listener/);

  // Sessions: Bob signing in far past the cap never signs Alice out.
  const api = server.urls['management API']!;
  const signIn = async (email: string, key: string) => {
    const response = await fetch(`${api}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, key }) });
    assert.equal(response.status, 200);
    return response.headers.get('set-cookie')!.split(';')[0]!;
  };
  const aliceCookie = await signIn(A.email, A.key);
  for (let i = 0; i < 110; i++) await signIn(bob.email, bob.key);
  assert.equal((await fetch(`${api}/sessions/current`, { headers: { cookie: aliceCookie } })).status, 200, 'Alice is still signed in');
});
