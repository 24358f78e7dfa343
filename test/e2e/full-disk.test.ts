/**
 * A full disk under the embedded default, for real: `edgeport start` with its data dir (SQLite,
 * blobs, spools) on a 64 MiB tmpfs of its own (helpers/small-disk.ts), filled from outside until
 * the file system refuses. Then, through the AWS SDK and the edge: a PUT is refused at once with
 * the full-disk error (503 InsufficientStorage, Retry-After), /readyz is 503 naming disk space,
 * DELETEs go through (with the reserve if SQLite needs room), log shipping does not spin; once
 * space is freed everything recovers by itself, every acknowledged object reads back byte-exact
 * and `PRAGMA integrity_check` is ok.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, rmSync, writeSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { until } from '../helpers/delivered-logs.ts';
import { ADMIN, S3_KEY, apiOf, createFileJob, createZone, fileLines, getVia } from '../helpers/edge-logs-setup.ts';
import { startOnSmallDisk } from '../helpers/small-disk.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const MiB = 1024 * 1024;
const md5 = (data: Uint8Array): string => createHash('md5').update(data).digest('hex');

/** Writes `path` in 1 MiB chunks until the file system refuses (ENOSPC); returns the bytes written. */
function fill(path: string): number {
  const fd = openSync(path, 'w');
  const chunk = randomBytes(MiB);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return written;
}

test(
  'a full data dir: PUT refused at once, DELETE works, /readyz names disk space; freed, all recovers and nothing is lost',
  { timeout: 180_000 },
  async (t) => {
    const dir = tempDir(t);
    writeFileSync(join(dir, 'edgeport.toml'), '[disk]\nmin_free_bytes = 1048576\nreserve_bytes = 4194304\n');
    const server = await startOnSmallDisk(t, {
      dir,
      sizeMiB: 64,
      args: ['--config', join(dir, 'edgeport.toml')],
      env: { ...ADMIN, ...S3_KEY, EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: '200', EDGEPORT_LOGS_FILE_ROOTS: dir, EDGEPORT_LIMITS_MAX_EVENT_LOOP_DELAY_MS: '0' },
    });
    const dataDir = join(dir, 'data');
    const api = apiOf(server);
    const readyz = async () => {
      const response = await fetch(`${new URL(server.urls['management API']!).origin}/readyz`);
      return { status: response.status, body: (await response.json()) as { checks: Record<string, string> } };
    };
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
    const job = await createFileJob(api, zoneId, join(dir, 'logs'), { output_options: { field_names: ['RayID', 'ClientRequestPath', 'EdgeResponseStatus'] } });
    const edge = server.urls.edge!;
    // The zone is in use: its job's spool is there when the disk fills.
    assert.equal((await getVia(edge, 'example.test', '/before')).status, 200);
    // The SDK as a user has it, with one try: we see each answer as it is.
    const s3 = new S3Client({
      endpoint: server.urls['S3-compatible API'],
      region: 'auto',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: { accessKeyId: S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
    });
    t.after(() => s3.destroy());
    await s3.send(new CreateBucketCommand({ Bucket: 'full' }));
    const acknowledged = new Map<string, string>();
    for (let i = 0; i < 5; i++) {
      const body = randomBytes(2 * MiB);
      await s3.send(new PutObjectCommand({ Bucket: 'full', Key: `k${i}`, Body: body }));
      acknowledged.set(`k${i}`, md5(body));
    }
    assert.equal((await readyz()).status, 200);

    // Something else fills the disk to the last byte.
    const filler = server.inside(join(dataDir, 'filler'));
    t.diagnostic(`filled the 64 MiB disk with ${Math.round(fill(filler) / MiB)} MiB from outside`);

    const table: string[] = [];
    let started = performance.now();
    await assert.rejects(s3.send(new PutObjectCommand({ Bucket: 'full', Key: 'refused', Body: randomBytes(MiB) })), (error: unknown) => {
      const ms = Math.round(performance.now() - started);
      assert.ok(error instanceof S3ServiceException);
      assert.equal(error.$metadata.httpStatusCode, 503);
      assert.equal(error.name, 'InsufficientStorage');
      assert.match(error.message, /^The object store is out of space: the disk is full\. Writes are refused until space is freed; deletes still work\.$/);
      const retryAfter = (error.$response as { headers?: Record<string, string> } | undefined)?.headers?.['retry-after'];
      assert.equal(retryAfter, '5');
      table.push(`PUT on the full disk: ${error.$metadata.httpStatusCode} ${error.name}, Retry-After ${retryAfter}, in ${ms} ms`);
      return true;
    });
    const notReady = await readyz();
    assert.equal(notReady.status, 503);
    assert.match(notReady.body.checks.disk!, /^disk space: [\d.]+ MiB free under the data dir, writes refused below \[disk\] min_free_bytes \(1\.0 MiB\)$/);
    table.push(`/readyz: ${notReady.status} ${JSON.stringify(notReady.body.checks)}`);

    // Visitors keep being served; their lines cannot be spooled and are counted, without a log line each.
    for (let i = 0; i < 20; i++) {
      const answer = await getVia(edge, 'example.test', `/during/${i}`);
      assert.equal(answer.status, 200, answer.body);
    }

    started = performance.now();
    await s3.send(new DeleteObjectCommand({ Bucket: 'full', Key: 'k0' }));
    const deleted = await s3.send(new DeleteObjectsCommand({ Bucket: 'full', Delete: { Objects: [{ Key: 'k1' }] } }));
    assert.deepEqual(deleted.Errors ?? [], []);
    acknowledged.delete('k0');
    acknowledged.delete('k1');
    table.push(
      `DELETE and DeleteObjects on the full disk: ok in ${Math.round(performance.now() - started)} ms; reserve released: ${/released the reserve/.test(server.stderr()) ? 'yes' : 'no (SQLite found room)'}`,
    );

    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const log = server.stderr();
    const count = (pattern: RegExp) => log.split('\n').filter((line) => pattern.test(line)).length;
    const shippingFailures = count(/Log shipping failed/);
    const spoolFailures = count(/Could not write log lines to the spool/);
    table.push(
      `server log in the 3 s after: ${shippingFailures} "Log shipping failed", ${spoolFailures} "Could not write log lines to the spool", ` +
        `${count(/Disk full: writes are refused/)} "Disk full: writes are refused", ${log.split('\n').length - 1} lines in all`,
    );
    assert.ok(shippingFailures <= 2, `${shippingFailures} lines`);
    assert.ok(spoolFailures <= 1, `${spoolFailures} lines`);

    // Space is freed: edgeport notices by itself.
    rmSync(filler);
    started = performance.now();
    for (;;) {
      if ((await readyz()).status === 200) break;
      assert.ok(performance.now() - started < 15_000, 'ready again within 15 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    table.push(`ready again ${Math.round(performance.now() - started)} ms after the space was freed`);
    const again = randomBytes(MiB);
    await s3.send(new PutObjectCommand({ Bucket: 'full', Key: 'after', Body: again }));
    acknowledged.set('after', md5(again));
    assert.match(server.stderr(), /Disk space is back: writes are accepted again/);

    for (const [key, digest] of acknowledged) {
      const got = await s3.send(new GetObjectCommand({ Bucket: 'full', Key: key }));
      assert.equal(md5(await got.Body!.transformToByteArray()), digest, key);
    }
    for (const key of ['k0', 'k1']) await assert.rejects(s3.send(new GetObjectCommand({ Bucket: 'full', Key: key })), { name: 'NoSuchKey' });
    const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    assert.equal(
      server.nodeInside(`const Database = require(${JSON.stringify(sqlite)});
    const db = new Database(${JSON.stringify(join(dataDir, 'metadata.sqlite'))}, { readonly: true });
    process.stdout.write(String(db.pragma('integrity_check', { simple: true })));`),
      'ok',
    );
    table.push(`after: ${acknowledged.size} acknowledged objects byte-exact, 2 deleted ones gone, integrity_check ok`);

    // Log lines: those of requests while the disk was full could not be spooled, and the job says so;
    // lines spooled before and after arrive.
    for (let i = 0; i < 5; i++) assert.equal((await getVia(edge, 'example.test', `/after/${i}`)).status, 200);
    const paths = await until(
      () => fileLines(join(dir, 'logs')).map((line) => line.ClientRequestPath),
      (found) => found.filter((p) => p.startsWith('/after/')).length === 5,
      'the lines after recovery',
    );
    assert.ok(paths.includes('/before'));
    const status = await api.call<{ error_message: string | null }>('GET', `/zones/${zoneId}/logshipping/jobs/${job.id}`);
    table.push(
      `log lines delivered: ${paths.length} (/before, ${paths.filter((p) => p.startsWith('/during/')).length} of 20 /during, 5 /after); job error_message: ${status.error_message}`,
    );
    for (const line of table) t.diagnostic(line);
  },
);
