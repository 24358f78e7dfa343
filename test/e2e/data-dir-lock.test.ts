/**
 * One process per data dir, with the real binary: a second `edgeport start` (or `dev`) on a dir in
 * use refuses at once, naming the first, while the first's S3 upload in flight completes; `edgeport
 * accounts create` still works beside it; after kill -9 a new start takes the dir at once and
 * sweeps the killed process's temporary files; `start` and `dev` defaults do not collide.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { join, relative } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { spawnNode } from '../helpers/child-processes.ts';
import { runEdgeport, type CliRun } from '../helpers/edgeport-cli.ts';
import { startEdgeport, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/edgeport.js');
const S3 = 'S3-compatible API';
const MiB = 1024 * 1024;
const KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'EPLOCKTEST00000001', EDGEPORT_S3_SECRET_ACCESS_KEY: 'lock-test-secret-0123456789' };
const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'ops@example.com', EDGEPORT_ADMIN_KEY: 'lock-test-admin-key' };
const PORTS = ['--edge-port', '0', '--api-port', '0', '--gateway-port', '0', '--s3-port', '0'];

/** Runs the real binary to its end. */
function run(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  return runEdgeport(args, options);
}

function s3(server: EdgeportServer): S3Client {
  return new S3Client({
    endpoint: server.urls[S3],
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
  });
}

/** Every file under `dir` with its size and mtime. */
function snapshot(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).sort().map((name) => {
    const info = statSync(join(dir, name));
    return `${name} ${info.isDirectory() ? 'dir' : `${info.size} ${info.mtimeMs}`}`;
  });
}

/** A presigned PUT of `size` bytes whose body is written by the test, half now and the rest on `finish()`. */
async function upload(t: TestContext, server: EdgeportServer, key: string, body: Buffer) {
  const client = s3(server);
  t.after(() => client.destroy());
  await client.send(new CreateBucketCommand({ Bucket: 'uploads' }));
  const url = await getSignedUrl(client, new PutObjectCommand({ Bucket: 'uploads', Key: key }), { expiresIn: 600 });
  let req!: ClientRequest;
  const answered = new Promise<{ status: number; text: string } | Error>((resolve) => {
    req = request(url, { method: 'PUT', headers: { 'content-length': String(body.length) } }, (res: IncomingMessage) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', (error) => resolve(error));
  });
  const half = Math.floor(body.length / 2);
  req.write(body.subarray(0, half));
  return {
    answered,
    finish() {
      req.end(body.subarray(half));
      return answered;
    },
  };
}

/** Waits until `dir/tmp` holds a temporary file of the process `pid` with at least `bytes` bytes. */
async function temporaryFileOf(dataDir: string, pid: number, bytes: number): Promise<string> {
  for (let tries = 0; tries < 600; tries++) {
    const tmp = join(dataDir, 'tmp');
    const own = existsSync(tmp) ? readdirSync(tmp).find((name) => name.startsWith(`${pid}-`)) : undefined;
    const file = own === undefined ? undefined : readdirSync(join(tmp, own)).map((name) => join(tmp, own, name))[0];
    if (file !== undefined && statSync(file, { throwIfNoEntry: false })?.size !== undefined && statSync(file).size >= bytes) return file;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`no temporary file of pid ${pid} in ${dataDir}/tmp`);
}

test(
  "a second start on a data dir in use refuses at once, naming the first, and the first one's upload in flight completes",
  { timeout: 120_000 },
  async (t) => {
    const dir = tempDir(t);
    const dataDir = join(dir, 'data');
    const first = await startEdgeport({ dataDir, env: { ...KEY, ...ADMIN } });
    t.after(() => first.stop());
    const body = Buffer.alloc(6 * MiB, 0x5a);
    const put = await upload(t, first, 'six-mib.bin', body);
    const temporary = await temporaryFileOf(dataDir, first.child.pid!, 2 * MiB);
    const before = snapshot(join(dataDir, 'tmp'));

    const second = await run(['start', '--data-dir', dataDir, ...PORTS], { env: { ...KEY, ...ADMIN } });
    process.stdout.write(`# the second start refused after ${second.ms.toFixed(0)} ms (process start included)\n`);
    assert.equal(second.code, 1, second.stderr);
    assert.equal(second.stdout, '');
    assert.equal(
      second.stderr,
      `edgeport: The data dir ${dataDir} is in use by another edgeport process: pid ${first.child.pid} ` +
        `(edgeport start --data-dir ${dataDir} ${PORTS.join(' ')}), running since ${/running since (.+? UTC)/.exec(second.stderr)?.[1]} ` +
        `(${/UTC \((\d+ s ago)\)/.exec(second.stderr)?.[1]}). Stop that one first, or give this one a data dir of its own: ` +
        '--data-dir DIR (or data_dir in edgeport.toml, EDGEPORT_DATA_DIR).\n',
    );
    assert.ok(existsSync(temporary), "the upload's temporary file is still there");
    // The upload's own file may still grow (the server drains what was sent); the rest must not move.
    const others = (lines: string[]) => lines.filter((line) => !line.startsWith(`${relative(join(dataDir, 'tmp'), temporary)} `));
    assert.deepEqual(others(snapshot(join(dataDir, 'tmp'))), others(before), 'nothing else in tmp changed');

    // edgeport dev on the same dir refuses alike (its script binds a bucket, so it needs the dir).
    writeFileSync(join(dir, 'script.mjs'), 'export default { fetch: () => new Response("hi") };\n');
    writeFileSync(
      join(dir, 'script.toml'),
      'name = "s"\nmain = "script.mjs"\ncompatibility_date = "2025-01-01"\n[[store_buckets]]\nbinding = "B"\nbucket_name = "bits"\n',
    );
    const dev = await run(['dev', join(dir, 'script.toml'), '--port', '0', '--data-dir', dataDir]);
    assert.equal(dev.code, 1, dev.stderr);
    assert.match(
      dev.stderr,
      new RegExp(
        `^edgeport: The data dir .* is in use by another edgeport process: pid ${first.child.pid} \\(edgeport start .*\\)` +
          ', running since .* UTC \\(.* ago\\)\\. Stop that one first, or give this one a data dir of its own: --data-dir DIR\\.\\n$',
      ),
    );

    // accounts create takes no lock: it works beside the server, and the server knows the account at once.
    const created = await run(['accounts', 'create', 'bob@example.com', '--data-dir', dataDir]);
    assert.equal(created.code, 0, created.stderr);
    const bobKey = /X-Auth-Key: +(\S+)/.exec(created.stdout)?.[1];
    const zones = await fetch(`${first.urls['management API']}/zones`, { headers: { 'x-auth-email': 'bob@example.com', 'x-auth-key': bobKey! } });
    assert.equal(zones.status, 200);

    const answer = await put.finish();
    assert.ok(!(answer instanceof Error), String(answer));
    assert.equal(answer.status, 200, answer.text);
    const client = s3(first);
    t.after(() => client.destroy());
    const stored = Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: 'uploads', Key: 'six-mib.bin' }))).Body!.transformToByteArray());
    assert.equal(createHash('md5').update(stored).digest('hex'), createHash('md5').update(body).digest('hex'));
    assert.equal(await first.stop(), 0);
  },
);

test("after kill -9 a new start takes the data dir at once and sweeps the killed process's temporary files", { timeout: 120_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const first = await startEdgeport({ dataDir, env: { ...KEY, ...ADMIN } });
  t.after(() => first.stop());
  const put = await upload(t, first, 'killed.bin', Buffer.alloc(4 * MiB, 1));
  const temporary = await temporaryFileOf(dataDir, first.child.pid!, MiB);
  const exited = new Promise((resolve) => first.child.once('exit', resolve));
  first.child.kill('SIGKILL');
  await exited;
  assert.ok((await put.answered) instanceof Error, 'the killed server never answered');
  assert.ok(existsSync(temporary), 'kill -9 left the temporary file');

  const began = performance.now();
  const second = await startEdgeport({ dataDir, env: { ...KEY, ...ADMIN } });
  t.after(() => second.stop());
  process.stdout.write(`# a start after kill -9 was ready in ${(performance.now() - began).toFixed(0)} ms\n`);
  assert.equal(existsSync(temporary), false, "the dead process's temporary file was swept");
  assert.deepEqual(
    readdirSync(join(dataDir, 'tmp')).filter((name) => name.startsWith(`${first.child.pid}-`)),
    [],
    'and its directory',
  );
  const client = s3(second);
  t.after(() => client.destroy());
  await client.send(new PutObjectCommand({ Bucket: 'uploads', Key: 'after.bin', Body: Buffer.alloc(MiB, 2) }));
  assert.equal(await second.stop(), 0);
});

test('start and dev with their default data dirs run side by side', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'script.mjs'), 'export default { async fetch(request, env) { await env.B.put("k", "v"); return new Response("ok"); } };\n');
  writeFileSync(
    join(dir, 'script.toml'),
    'name = "s"\nmain = "script.mjs"\ncompatibility_date = "2025-01-01"\n[[store_buckets]]\nbinding = "B"\nbucket_name = "bits"\n',
  );
  const spawned = (args: string[]) => {
    const child = spawnNode([BIN, ...args], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, EDGEPORT_DATA_DIR: '', ...KEY, ...ADMIN, EDGEPORT_LOG_LEVEL: 'warn' },
    });
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let out = '';
    let err = '';
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const ready = new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (/; ready\n|edgeport dev: serving/.test(out)) resolve(out);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}${err}`)));
    });
    return { child, ready };
  };
  const start = spawned(['start', ...PORTS]);
  const dev = spawned(['dev', 'script.toml', '--port', '0']);
  await Promise.all([start.ready, dev.ready]);
  const url = /http:\/\/127\.0\.0\.1:\d+/.exec(await dev.ready)![0];
  assert.equal(await (await fetch(url)).text(), 'ok');
  assert.ok(existsSync(join(dir, '.edgeport', 'edgeport.lock')), 'start uses ./.edgeport');
  assert.ok(existsSync(join(dir, '.edgeport-dev', 'edgeport.lock')), 'dev uses ./.edgeport-dev');
  for (const { child } of [start, dev]) {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    assert.equal(await exited, 0, 'Ctrl-C (SIGINT) stops cleanly with exit code 0');
  }
});
