/**
 * Large bodies stream through `edgeport start`: a streamed PutObject, a lib-storage multipart
 * upload and a GetObject, each much larger than the server's memory growth may be. The server's
 * resident set is sampled from /proc while the bytes move.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { peakRssGrowth } from '../helpers/process-memory.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const MiB = 1024 * 1024;
const KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'EDGEPORTMEMKEY01', EDGEPORT_S3_SECRET_ACCESS_KEY: 'memory-secret-0123456789abcdef' };
/** Growth allowed over the resident set measured before each transfer; every body is bigger. */
const GROWTH_LIMIT = 100 * MiB;

/** `count` blocks of 1 MiB, each a different byte, generated as they are read. */
function blocks(count: number): { stream: () => Readable; md5: string } {
  const md5 = createHash('md5');
  for (let i = 0; i < count; i++) md5.update(Buffer.alloc(MiB, i % 251));
  return {
    stream: () =>
      Readable.from(
        (function* () {
          for (let i = 0; i < count; i++) yield Buffer.alloc(MiB, i % 251);
        })(),
      ),
    md5: md5.digest('hex'),
  };
}

test('large PUT, multipart upload and GET stream through the server without holding the body', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, 'edgeport-s3-memory-');
  const server = await startEdgeport({ owner: t, dataDir: dir, env: KEY });
  const pid = server.child.pid!;
  const client = new S3Client({
    endpoint: server.urls['S3-compatible API'],
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
  });
  t.after(() => client.destroy());
  await client.send(new CreateBucketCommand({ Bucket: 'big' }));
  // Warm the server's code paths, so the baseline is not taken before its first compilation.
  await client.send(new PutObjectCommand({ Bucket: 'big', Key: 'warm', Body: Buffer.alloc(8 * MiB) }));
  await (await client.send(new GetObjectCommand({ Bucket: 'big', Key: 'warm' }))).Body!.transformToByteArray();

  const single = blocks(160);
  const putGrowth = await peakRssGrowth(pid, async () => {
    await client.send(new PutObjectCommand({ Bucket: 'big', Key: 'single', Body: single.stream(), ContentLength: 160 * MiB }));
  });

  const multi = blocks(300);
  let seconds = 0;
  const uploadGrowth = await peakRssGrowth(pid, async () => {
    const started = performance.now();
    await new Upload({ client, params: { Bucket: 'big', Key: 'multi', Body: multi.stream() }, partSize: 16 * MiB, queueSize: 4 }).done();
    seconds = (performance.now() - started) / 1000;
  });

  let downloaded = '';
  const getGrowth = await peakRssGrowth(pid, async () => {
    const got = await client.send(new GetObjectCommand({ Bucket: 'big', Key: 'multi' }));
    const md5 = createHash('md5');
    for await (const chunk of got.Body as AsyncIterable<Uint8Array>) md5.update(chunk);
    downloaded = md5.digest('hex');
  });

  t.diagnostic(
    `server RSS growth: PUT 160 MiB ${(putGrowth / MiB).toFixed(1)} MiB, lib-storage 300 MiB ${(uploadGrowth / MiB).toFixed(1)} MiB ` +
      `(${(300 / seconds).toFixed(0)} MiB/s), GET 300 MiB ${(getGrowth / MiB).toFixed(1)} MiB`,
  );
  assert.equal(downloaded, multi.md5);
  const stored = await client.send(new GetObjectCommand({ Bucket: 'big', Key: 'single', Range: 'bytes=0-0' }));
  assert.equal(stored.ContentRange, `bytes 0-0/${160 * MiB}`);
  assert.ok(putGrowth < GROWTH_LIMIT, `a 160 MiB PUT grew the server by ${putGrowth} bytes`);
  assert.ok(uploadGrowth < GROWTH_LIMIT, `a 300 MiB multipart upload grew the server by ${uploadGrowth} bytes`);
  assert.ok(getGrowth < GROWTH_LIMIT, `a 300 MiB GET grew the server by ${getGrowth} bytes`);
});
