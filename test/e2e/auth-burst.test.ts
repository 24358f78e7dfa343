/**
 * A correct key is never answered 429 because of the checks of others still under way, against the
 * real `edgeport start` (no address trusted yet, no verified pair cached):
 *
 * - 64 management API requests at once with the operator's correct key, just after a start (the
 *   SDK's parallel calls): before, each held a place in the address's count (20) and the e-mail's
 *   (10) while the scrypt check ran, and 43 to 54 of the 64 got 429.
 * - On PostgreSQL (the first key lookups wait on the database), just after a restart: an address
 *   that already failed 19 times of its 20 (a neighbour behind the same NAT, here the same loopback
 *   address), then 2,000 S3 GETs with the correct key over 64 connections at once, while 8 other
 *   addresses flood a key id no account has. Before, the lookups under way took the places the
 *   failures left: 3 to 61 of the GETs got 429 SlowDown in 2 runs of 3 (it depends on how many
 *   arrive during the first lookups).
 * - Deterministically, on the default SQLite: an address with 19 failures and one upload of the
 *   correct key under way whose signature is checked when its body ends (no x-amz-content-sha256,
 *   as `curl --aws-sigv4` signs): a GET with the correct key waits for that upload's verdict
 *   (before: 429 at once).
 *
 * Prints the answers by status.
 */
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { startFlood } from '../helpers/flood-process.ts';
import { NodeSha256 } from '../helpers/node-sha256.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'burst@example.test', EDGEPORT_ADMIN_KEY: 'burst-admin-key-0123456789' };
const S3_KEY = { accessKeyId: 'BURSTKEY00000001', secretAccessKey: 'burst-secret-0123456789abcdef' };
/** Each server runs without load shedding: a 503 of a machine running behind answers everyone alike and is not what this counts. */
const ENV = {
  ...ADMIN,
  EDGEPORT_S3_ACCESS_KEY_ID: S3_KEY.accessKeyId,
  EDGEPORT_S3_SECRET_ACCESS_KEY: S3_KEY.secretAccessKey,
};

function count(statuses: Record<string, number>, status: string | number): void {
  statuses[status] = (statuses[status] ?? 0) + 1;
}

test('64 management API requests at once with the correct key, just after a start: none is 429', { timeout: 120_000 }, async (t) => {
  const server = await startEdgeport({ shedding: false, owner: t, dataDir: join(tempDir(t), 'data'), env: ENV });
  const api = server.urls['management API']!;
  const statuses: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      const response = await fetch(`${api}/zones`, { headers: { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY } });
      await response.text();
      count(statuses, response.status);
    }),
  );
  process.stdout.write(`64 concurrent GET /zones with the correct key after a start: ${JSON.stringify(statuses)}\n`);
  assert.deepEqual(statuses, { 200: 64 });
  // A wrong key beside them is still refused, and counted.
  const wrong = await fetch(`${api}/zones`, { headers: { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': 'not-the-key-0123456789' } });
  assert.equal(wrong.status, 403);
  assert.equal(await server.stop(), 0);
});

test(
  'on PostgreSQL, just after a restart: 2,000 S3 GETs with the correct key beside 19 failures from their address and a flood from 8 others: none is 429',
  { timeout: 180_000 },
  async (t) => {
    const dataDir = join(tempDir(t), 'data');
    const env = { ...ENV, EDGEPORT_DB_URL: await pgTestUrl(t) };
    const first = await startEdgeport({ shedding: false, owner: t, dataDir, env });
    const setup = new S3Client({ endpoint: first.urls['S3-compatible API']!, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: S3_KEY });
    await setup.send(new CreateBucketCommand({ Bucket: 'burst' }));
    await setup.send(new PutObjectCommand({ Bucket: 'burst', Key: 'k', Body: 'hello' }));
    setup.destroy();
    assert.equal(await first.stop(), 0);

    const server = await startEdgeport({ shedding: false, owner: t, dataDir, env });
    const endpoint = server.urls['S3-compatible API']!;
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    t.after(() => agent.destroy());
    const s3 = new S3Client({
      endpoint,
      region: 'auto',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: S3_KEY,
      requestHandler: { httpAgent: agent, socketAcquisitionWarningTimeout: 120_000 },
    });
    t.after(() => s3.destroy());
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'burst', Key: 'k' }), { expiresIn: 600 });
    // Another key id, which no account has: the correct key's lookup stays cold until the burst (its cache lasts a second).
    const forged = url.replace(S3_KEY.accessKeyId, 'NOSUCHKEY0000001');
    assert.notEqual(forged, url);
    const neighbour: Record<string, number> = {};
    for (let i = 0; i < 19; i++) {
      const response = await fetch(forged);
      await response.text();
      count(neighbour, response.status);
    }
    assert.deepEqual(neighbour, { 403: 19 });
    // The burst's 64 connections open first (unsigned requests, refused before any key is looked up), so that
    // its requests arrive together; then more than a second, so that no key lookup of this server is cached.
    const target = new URL(endpoint);
    const unsigned = await Promise.all(
      Array.from(
        { length: 64 },
        () =>
          new Promise<number>((resolve, reject) => {
            request({ host: target.hostname, port: target.port, path: '/burst/k', agent }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            })
              .on('error', reject)
              .end();
          }),
      ),
    );
    assert.ok(unsigned.every((status) => status === 403));
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const flood = startFlood(t, [forged, '-', '32', '3000', '8']);
    const statuses: Record<string, number> = {};
    await Promise.all(
      Array.from({ length: 2_000 }, async () => {
        try {
          const got = await s3.send(new GetObjectCommand({ Bucket: 'burst', Key: 'k' }));
          assert.equal(await got.Body!.transformToString(), 'hello');
          count(statuses, 200);
        } catch (error) {
          count(statuses, (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? String(error));
        }
      }),
    );
    const flooded = await flood;
    process.stdout.write(
      `2,000 concurrent S3 GETs with the correct key after a restart (64 connections; their address had failed 19 times): ${JSON.stringify(statuses)}; ` +
        `the wrong-key flood from 8 other addresses sent ${flooded.sent}, answered ${JSON.stringify(flooded.byStatus)}\n`,
    );
    assert.deepEqual(statuses, { 200: 2_000 });
    assert.equal(flooded.byStatus['200'], undefined);
    assert.ok((flooded.byStatus['403'] ?? 0) > 0, "the flood's wrong keys were checked and refused");
    // Failures that fill the address (it has regained some since): then even the correct key waits its turn (429), as documented.
    let refusedAfter = 0;
    while ((await (await fetch(forged)).text()).includes('InvalidAccessKeyId')) assert.ok(++refusedAfter <= 25, 'the address reached its limit');
    const limited = await fetch(url);
    await limited.text();
    assert.equal(limited.status, 429);
    assert.equal(await server.stop(), 0);
  },
);

/** A raw request on its own connection: writes the head and `first`, then `rest` when told; resolves with the status line. */
function heldUpload(port: number, path: string, headers: Record<string, string>, first: Buffer, rest: Buffer): { finish(): void; status: Promise<string> } {
  const socket = connect({ port, host: '127.0.0.1' });
  const status = new Promise<string>((resolve, reject) => {
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.once('close', () => resolve(answer.split('\r\n')[0] ?? ''));
  });
  socket.write(
    `PUT ${path} HTTP/1.1\r\n${Object.entries({ ...headers, connection: 'close' })
      .map(([n, v]) => `${n}: ${v}\r\n`)
      .join('')}\r\n`,
  );
  socket.write(first);
  return { finish: () => socket.write(rest), status };
}

test(
  'a GET with the correct key waits for an upload of that key still being verified, rather than 429, where failures left one place',
  { timeout: 120_000 },
  async (t) => {
    const server = await startEdgeport({ shedding: false, owner: t, dataDir: join(tempDir(t), 'data'), env: ENV });
    const endpoint = new URL(server.urls['S3-compatible API']!);
    // The bucket is made from another address: 127.0.0.1 has not proved the key yet.
    const elsewhere = new S3Client({
      endpoint: endpoint.href,
      region: 'auto',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: S3_KEY,
      requestHandler: { httpAgent: new Agent({ localAddress: '127.0.3.1' }) },
    });
    t.after(() => elsewhere.destroy());
    await elsewhere.send(new CreateBucketCommand({ Bucket: 'held' }));
    await elsewhere.send(new PutObjectCommand({ Bucket: 'held', Key: 'k', Body: 'hello' }));
    const url = await getSignedUrl(elsewhere, new GetObjectCommand({ Bucket: 'held', Key: 'k' }), { expiresIn: 600 });
    for (let i = 0; i < 19; i++) assert.equal((await fetch(url.replace(S3_KEY.accessKeyId, 'NOSUCHKEY0000001'))).status, 403);

    // An upload signed with the correct key, its body hash not declared: its attempt is decided when its body ends.
    const body = Buffer.alloc(1024, 'u');
    const signer = new SignatureV4({ service: 's3', region: 'auto', credentials: S3_KEY, sha256: NodeSha256, applyChecksum: false });
    const signed = await signer.sign({
      method: 'PUT',
      protocol: 'http:',
      hostname: endpoint.hostname,
      port: Number(endpoint.port),
      path: '/held/upload',
      headers: { host: endpoint.host, 'content-length': String(body.length) },
      body,
    });
    const upload = heldUpload(Number(endpoint.port), '/held/upload', signed.headers, body.subarray(0, 512), body.subarray(512));
    await new Promise((resolve) => setTimeout(resolve, 300));

    const client = new S3Client({ endpoint: endpoint.href, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: S3_KEY });
    t.after(() => client.destroy());
    const started = performance.now();
    const get = client.send(new GetObjectCommand({ Bucket: 'held', Key: 'k' })).then(
      async (got) => ({ status: 200, body: await got.Body!.transformToString(), ms: performance.now() - started }),
      (error: { $metadata?: { httpStatusCode?: number } }) => ({
        status: error.$metadata?.httpStatusCode ?? 0,
        body: String(error),
        ms: performance.now() - started,
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    upload.finish();
    const [answer, uploaded] = await Promise.all([get, upload.status]);
    process.stdout.write(
      `GET with the correct key beside 19 failures and an upload under way: ${answer.status} after ${answer.ms.toFixed(0)} ms (the upload's body ended at 500 ms); the upload: ${uploaded}\n`,
    );
    assert.deepEqual([answer.status, answer.body], [200, 'hello']);
    assert.equal(uploaded, 'HTTP/1.1 200 OK');
    assert.equal(await server.stop(), 0);
  },
);
