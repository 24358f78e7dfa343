/**
 * Crash safety of the store: the real `edgeport dev` is SIGKILLed while a 50 MiB put streams in.
 * After a restart on the same data dir the key holds the old object or the new one whole, and no
 * temporary or unreferenced blob file is left.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startDevServer } from '../helpers/dev-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const DRIVER = fileURLToPath(new URL('../../bench/drivers/store-driver.mjs', import.meta.url));
const MiB = 1024 * 1024;
const TOTAL = 50 * MiB;
const chunk = new Uint8Array(MiB).fill(0x6e);

/** Streams a 50 MiB PUT; calls `kill` once `killAfter` bytes are written; resolves when the socket dies or the reply arrives. */
function streamPut(url: string, key: string, killAfter: number, kill: () => void): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`${url}/o/${key}`, { method: 'PUT', headers: { 'content-length': String(TOTAL) } }, (res) => {
      res.resume();
      res.on('end', resolve);
      res.on('error', () => resolve());
    });
    req.on('error', () => resolve());
    let sent = 0;
    const pump = () => {
      while (sent < TOTAL) {
        if (sent >= killAfter) {
          kill();
          return;
        }
        sent += chunk.byteLength;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
      if (killAfter >= TOTAL) setImmediate(kill);
    };
    pump();
  });
}

async function checkAfterRestart(dataDir: string, oldBody: string): Promise<'old' | 'new'> {
  const server = await startDevServer(DRIVER, [{ binding: 'BUCKET', bucket_name: 'crash' }], { dataDir });
  try {
    assert.deepEqual(readdirSync(join(dataDir, 'tmp')), [], 'no temporary file is left behind');
    const res = await fetch(`${server.url}/o/k`);
    assert.equal(res.status, 200);
    const body = Buffer.from(await res.arrayBuffer());
    const blobs = readdirSync(join(dataDir, 'blobs'));
    if (body.toString() === oldBody) {
      assert.deepEqual(blobs, [], 'the interrupted blob was swept');
      return 'old';
    }
    assert.equal(body.byteLength, TOTAL, 'the new object is whole');
    assert.equal(createHash('md5').update(body).digest('hex'), createHash('md5').update(Buffer.alloc(TOTAL, 0x6e)).digest('hex'));
    assert.equal(blobs.length, 1);
    return 'new';
  } finally {
    await server.stop();
  }
}

for (const [name, killAfter] of [
  ['in the middle of the body', 20 * MiB],
  ['just after the last byte', TOTAL],
] as const) {
  test(`SIGKILL ${name} of a 50 MiB put leaves the old object or the new one whole`, { timeout: 60_000 }, async (t) => {
    const dataDir = tempDir(t);
    const server = await startDevServer(DRIVER, [{ binding: 'BUCKET', bucket_name: 'crash' }], { dataDir });
    const oldBody = 'the old object';
    assert.equal((await fetch(`${server.url}/o/k`, { method: 'PUT', body: oldBody })).status, 200);
    await streamPut(server.url, 'k', killAfter, () => server.child.kill('SIGKILL'));
    await new Promise((resolve) => (server.child.exitCode !== null || server.child.signalCode !== null ? resolve(null) : server.child.once('exit', resolve)));
    const outcome = await checkAfterRestart(dataDir, oldBody);
    if (killAfter < TOTAL) assert.equal(outcome, 'old');
  });
}
