/**
 * The MetadataStore contract on PostgreSQL (metadata-store.case.ts), then what only a shared
 * database has to prove: two instances (two PgDatabases on one schema, two engines on one blob
 * directory) see each other's writes at once, conditional puts and multipart completions are
 * decided once across them, an account's quota holds across them, and listing stays on the primary key. Always on PostgreSQL: fails, never
 * skips, when it is down.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import type { AccountQuotas } from '../../src/config/quotas.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { PgDatabase } from '../../src/db/postgres/pg-database.ts';
import { PgMetadataStore } from '../../src/db/postgres/pg-metadata-store.ts';
import { PG_SQL } from '../../src/db/postgres/pg-metadata-statements.ts';
import { StoreError } from '../../src/store/engine/errors.ts';
import type { ObjectEngine } from '../../src/store/engine/object-engine.ts';
import { openStoreEngine, type OpenStoreEngineOptions } from '../../src/store/engine/open-store-engine.ts';
import type { ObjectMeta } from '../../src/store/engine/types.ts';
import { bytes, readAll } from '../helpers/engine.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { runAccountUsageSuite } from './account-usage.case.ts';
import { GRACE_MS, objectMeta, runMetadataStoreSuite } from './metadata-store.case.ts';
import { TEST_SECRETS } from '../helpers/secrets.ts';

const START = Date.UTC(2026, 0, 1);
const MiB = 1024 * 1024;

async function openDatabase(t: TestContext, url?: string): Promise<PgDatabase> {
  const database = await PgDatabase.open({ url: url ?? (await pgTestUrl(t)), now: START });
  t.after(() => database.close());
  return database;
}

const suite = {
  clock: () => new FakeClock(START),
  async open(t: TestContext, clock: FakeClock, quotas?: AccountQuotas) {
    const store = new PgMetadataStore({
      database: await openDatabase(t),
      clock,
      reclaimGraceMs: GRACE_MS,
      ...(quotas ? { quotas } : {}),
      secrets: TEST_SECRETS,
    });
    t.after(() => store.close());
    return store;
  },
};
runMetadataStoreSuite(suite);
runAccountUsageSuite(suite);

/** Two instances of one deployment: one schema, one blob directory, a PgDatabase and an engine each. */
async function twoInstances(t: TestContext, options: Partial<OpenStoreEngineOptions> = {}) {
  const url = await pgTestUrl(t, { pool: 6 });
  const dataDir = tempDir(t);
  const clock = new FakeClock(START);
  const dbA = await PgDatabase.open({ url, now: START });
  const dbB = await PgDatabase.open({ url, now: START });
  const a = await openStoreEngine({ dataDir, clock, database: dbA, recover: true, ...options });
  const b = await openStoreEngine({ dataDir, clock, database: dbB, ...options });
  t.after(async () => {
    await Promise.all([a.close(), b.close()]);
    await Promise.all([dbA.close(), dbB.close()]);
  });
  await a.createBucket('shared');
  return { a, b, dbA, dbB, clock, dataDir, bucket: 'shared', blobFiles: () => readdirSync(join(dataDir, 'blobs')).length };
}

async function text(engine: ObjectEngine, bucket: string, key: string): Promise<string | null> {
  const got = await engine.get(bucket, key);
  return got ? (await readAll(got.body?.stream())).toString() : null;
}

test('close() leaves the shared database open; a closed store refuses work', { timeout: 10_000 }, async (t) => {
  const database = await openDatabase(t);
  const store = new PgMetadataStore({ database, clock: new FakeClock(START), reclaimGraceMs: GRACE_MS });
  await store.insertBucket({ name: 'b1', created: 1, storageClass: 'Standard' });
  await store.close();
  assert.deepEqual(await database.query('SELECT name FROM buckets'), [{ name: 'b1' }]);
  await assert.rejects(store.getBucket('b1'), /closed/);
});

test('listing reads a range of the primary key, never the whole bucket', { timeout: 10_000 }, async (t) => {
  const database = await openDatabase(t);
  await database.query(`INSERT INTO objects (bucket, key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums,
    storage_class, has_inline, blob_id, part_count)
    SELECT b, convert_to('k/' || lpad(i::text, 6, '0'), 'UTF8'), b || i, 1, 'e', 1, '{}', '{}', '{}', 'Standard', 0, 'x', 0
    FROM generate_series(1, 20000) i, unnest(ARRAY['b1', 'b2']) b`);
  await database.query('ANALYZE objects');
  const bounds = [Buffer.from('k/0123'), Buffer.from('k/0124')];
  for (const statement of [PG_SQL.listFrom, PG_SQL.listAfterWithMetadata]) {
    const [row] = await database.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(`EXPLAIN (FORMAT JSON) ${statement}`, [
      'b1',
      ...bounds,
      1000,
    ]);
    const plan = JSON.stringify(row!['QUERY PLAN']);
    assert.match(plan, /"Index Name":"objects_pkey"/, plan);
    assert.match(
      plan,
      /"Index Cond":"\(\(bucket = 'b1'::text\) AND \(key [>=]+ '\\\\x6b2f30313233'::bytea\) AND \(key < '\\\\x6b2f30313234'::bytea\)\)"/,
      plan,
    );
    assert.doesNotMatch(plan, /Seq Scan|"Filter"/, plan);
  }
  // The store prepares its statements; their generic plan (no values known) is the same range scan.
  const generic = await database.transaction(async (client) => {
    await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE explained_list (text, bytea, bytea, bigint) AS ${PG_SQL.listFrom}`);
    const [from, to] = bounds.map((bound) => `'\\x${bound.toString('hex')}'::bytea`);
    const { rows } = await client.query(`EXPLAIN (FORMAT JSON) EXECUTE explained_list ('b1', ${from}, ${to}, 1000)`);
    await client.query('DEALLOCATE explained_list');
    return JSON.stringify(rows);
  });
  assert.match(generic, /"Index Name":"objects_pkey"/, generic);
  assert.match(generic, /"Index Cond":"\(\(bucket = \$1\) AND \(key >= \$2\) AND \(key < \$3\)\)"/, generic);
});

test('two instances: a write on A is read on B at once, and the other way round', { timeout: 10_000 }, async (t) => {
  const { a, b, bucket } = await twoInstances(t, { inlineMaxBytes: 16 });
  for (let i = 0; i < 20; i++) {
    const [writer, reader] = i % 2 === 0 ? [a, b] : [b, a];
    const body = i % 4 < 2 ? `small ${i}` : `a body longer than the inline limit, ${i}`;
    const meta = await writer.put(bucket, `k/${i}`, bytes(body));
    assert.equal((await reader.head(bucket, `k/${i}`))?.etag, meta?.etag);
    assert.equal(await text(reader, bucket, `k/${i}`), body);
    await reader.put(bucket, `k/${i}`, bytes(`${body} (again)`));
    assert.equal(await text(writer, bucket, `k/${i}`), `${body} (again)`);
  }
  assert.equal((await b.list(bucket, { prefix: 'k/' })).objects.length, 20);
  await b.delete(bucket, ['k/0', 'k/1']);
  assert.equal(await a.head(bucket, 'k/0'), null);
  assert.equal((await a.list(bucket, { prefix: 'k/' })).objects.length, 18);
  await a.createBucket('from-a');
  assert.ok(await b.getBucket('from-a'));
});

test('two instances: of 100 concurrent If-None-Match: * puts of a new key, exactly one wins', { timeout: 10_000 }, async (t) => {
  const { a, b, bucket, blobFiles } = await twoInstances(t, { inlineMaxBytes: 0 });
  for (const key of ['race-1', 'race-2', 'race-3']) {
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        (i % 2 === 0 ? a : b).put(bucket, key, bytes(`writer ${i}`), { onlyIf: { etagDoesNotMatch: [{ type: 'wildcard' }] } }),
      ),
    );
    const winners = results.flatMap((meta, i) => (meta ? [{ meta, i }] : []));
    assert.equal(winners.length, 1, `${key}: ${winners.length} winners`);
    assert.equal(await text(b, bucket, key), `writer ${winners[0]!.i}`);
    assert.equal((await a.head(bucket, key))?.etag, winners[0]!.meta.etag);
  }
  assert.equal(blobFiles(), 3, "the losers' blobs are gone");
});

test('two instances: of 100 concurrent If-Match puts on one etag (compare-and-swap), exactly one wins', { timeout: 10_000 }, async (t) => {
  const { a, b, bucket } = await twoInstances(t);
  let current = (await a.put(bucket, 'counter', bytes('0')))!;
  for (let round = 1; round <= 3; round++) {
    const etag = current.etag;
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        (i % 2 === 0 ? b : a).put(bucket, 'counter', bytes(`${round}:${i}`), { onlyIf: { etagMatches: [{ type: 'strong', value: etag }] } }),
      ),
    );
    const winners = results.filter((meta): meta is ObjectMeta => meta !== null);
    assert.equal(winners.length, 1, `round ${round}: ${winners.length} winners`);
    current = winners[0]!;
    assert.equal((await b.head(bucket, 'counter'))?.etag, current.etag);
    assert.match((await text(a, bucket, 'counter'))!, new RegExp(`^${round}:`));
  }
});

test('two instances: concurrent unconditional puts of one new key all land, and every replaced blob is reclaimed', { timeout: 10_000 }, async (t) => {
  const { a, b, bucket, clock, blobFiles } = await twoInstances(t, { inlineMaxBytes: 0 });
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).put(bucket, 'contended', bytes(`v${i}`))));
  assert.ok(results.every((meta) => meta !== null));
  const last = await a.head(bucket, 'contended');
  assert.ok(results.some((meta) => meta!.etag === last?.etag));
  assert.equal(blobFiles(), 40);
  assert.equal((await b.metadata.referencedBlobIds()).size, 1);
  clock.advance(GRACE_MS + 1);
  assert.equal(await b.reclaimBlobs(), 39, 'each replaced blob was queued exactly once');
  assert.equal(blobFiles(), 1);
  assert.equal(await text(b, bucket, 'contended'), `v${results.findIndex((meta) => meta!.etag === last?.etag)}`);
});

test('two instances: deleting a bucket on A while B puts into it: exactly one of the two succeeds', { timeout: 10_000 }, async (t) => {
  const { a, b } = await twoInstances(t);
  for (let round = 0; round < 20; round++) {
    const name = `doomed-${round}`;
    await a.createBucket(name);
    const [deleted, written] = await Promise.allSettled([a.deleteBucket(name), b.put(name, 'k', bytes('kept'))]);
    assert.ok((deleted.status === 'fulfilled') !== (written.status === 'fulfilled'), `round ${round}: delete ${deleted.status}, write ${written.status}`);
    if (written.status === 'fulfilled') {
      assert.ok(await b.getBucket(name), 'the bucket holding the write survives');
      assert.ok(deleted.status === 'rejected' && (deleted.reason as StoreError).code === 'STORE_BUCKET_NOT_EMPTY');
    } else {
      assert.equal((written.reason as StoreError).code, 'STORE_NO_SUCH_BUCKET');
      assert.equal(await a.getBucket(name), null);
      assert.equal(await a.metadata.headObject(name, 'k'), null, 'no object was left in the deleted bucket');
    }
  }
});

test(
  'two instances: deleting a bucket on A while B starts an upload and sends parts: the bucket goes, no upload or part outlives it',
  { timeout: 10_000 },
  async (t) => {
    const { a, b } = await twoInstances(t);
    for (let round = 0; round < 20; round++) {
      const name = `doomed-upload-${round}`;
      await a.createBucket(name);
      const started = b.createMultipartUpload(name, 'k').then(async (id) => {
        await b.uploadPart(name, 'k', id, 1, bytes('part')).catch((error: unknown) => {
          assert.equal((error as StoreError).code, 'STORE_NO_SUCH_UPLOAD');
        });
        return id;
      });
      const [deleted, upload] = await Promise.allSettled([a.deleteBucket(name), started]);
      assert.equal(deleted.status, 'fulfilled', `round ${round}: an upload never keeps a bucket`);
      if (upload.status === 'rejected') assert.equal((upload.reason as StoreError).code, 'STORE_NO_SUCH_BUCKET');
      else {
        // Deleted with the bucket, or created first and aborted by the deletion; a part racing it lands nowhere.
        assert.equal(await a.metadata.getUpload(name, 'k', upload.value), null, `round ${round}: no upload row is left`);
        assert.deepEqual(await a.metadata.listParts(upload.value), [], `round ${round}: no part row is left`);
      }
      assert.equal(await a.getBucket(name), null);
    }
  },
);

test('two instances: a multipart upload begun on A is continued on both and completed on B', { timeout: 10_000 }, async (t) => {
  const { a, b, bucket } = await twoInstances(t);
  const uploadId = await a.createMultipartUpload(bucket, 'big', { customMetadata: { from: 'a' } });
  assert.deepEqual((await b.getUpload(bucket, 'big', uploadId))?.customMetadata, { from: 'a' });
  const first = new Uint8Array(5 * MiB).fill(1);
  const parts = [await a.uploadPart(bucket, 'big', uploadId, 1, first), await b.uploadPart(bucket, 'big', uploadId, 2, bytes('tail'))];
  assert.deepEqual(
    (await a.listParts(bucket, 'big', uploadId)).map((p) => p.partNumber),
    [1, 2],
  );
  assert.deepEqual(
    (await b.listUploads(bucket)).map((u) => u.uploadId),
    [uploadId],
  );
  const meta = await b.completeMultipartUpload(bucket, 'big', uploadId, parts);
  assert.match(meta.etag, /-2$/);
  const body = await readAll((await a.get(bucket, 'big'))?.body?.stream());
  assert.equal(body.length, 5 * MiB + 4);
  assert.equal(body.subarray(5 * MiB).toString(), 'tail');
  assert.deepEqual((await a.head(bucket, 'big'))?.customMetadata, { from: 'a' });
  assert.deepEqual(await a.listUploads(bucket), []);
});

test(
  'two instances: of two concurrent completions of one upload, exactly one writes; the same one sent again answers its object',
  { timeout: 10_000 },
  async (t) => {
    const { a, b, bucket } = await twoInstances(t);
    for (let round = 0; round < 10; round++) {
      const key = `done-${round}`;
      const uploadId = await a.createMultipartUpload(bucket, key);
      const one = await b.uploadPart(bucket, key, uploadId, 1, bytes(`part one ${round}`));
      const two = await b.uploadPart(bucket, key, uploadId, 2, bytes(`part two ${round}`));
      // The same parts: one completes, the other is its repeat and answers the same object.
      const same = round % 2 === 0;
      const outcomes = await Promise.allSettled([
        a.completeMultipartUpload(bucket, key, uploadId, [one], { answerRepeat: true }),
        b.completeMultipartUpload(bucket, key, uploadId, [same ? one : two], { answerRepeat: true }),
      ]);
      const made = outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value);
      if (same) {
        assert.equal(made.length, 2, `round ${round}`);
        assert.equal(made[0]!.version, made[1]!.version, `round ${round}: one object, answered twice`);
        assert.equal(await text(a, bucket, key), `part one ${round}`);
        continue;
      }
      assert.equal(made.length, 1, `round ${round}`);
      const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      assert.ok(refused.reason instanceof StoreError && refused.reason.code === 'STORE_NO_SUCH_UPLOAD', String(refused.reason));
      assert.equal((await a.head(bucket, key))?.version, made[0]!.version);
    }
  },
);

test('two instances: a part written while another instance aborts the upload is refused or reclaimed, never kept', { timeout: 10_000 }, async (t) => {
  const { a, b, bucket, clock, blobFiles } = await twoInstances(t);
  const uploadId = await a.createMultipartUpload(bucket, 'aborted');
  const writes = Array.from({ length: 10 }, (_, i) =>
    b.uploadPart(bucket, 'aborted', uploadId, i + 1, bytes(`part ${i}`)).then(
      () => 'ok',
      (e: unknown) => e,
    ),
  );
  await a.abortMultipartUpload(bucket, 'aborted', uploadId);
  for (const outcome of await Promise.all(writes)) {
    assert.ok(outcome === 'ok' || (outcome instanceof StoreError && outcome.code === 'STORE_NO_SUCH_UPLOAD'), String(outcome));
  }
  assert.equal((await a.metadata.referencedBlobIds()).size, 0);
  clock.advance(GRACE_MS + 1);
  await a.reclaimBlobs();
  assert.equal(blobFiles(), 0);
});

test("two instances: puts racing near the account's quota never take it past; usage stays exactly what is stored", { timeout: 60_000 }, async (t) => {
  const quota = 50 * 1000;
  const { a, b, bucket } = await twoInstances(t, {
    inlineMaxBytes: 0,
    quotas: { maxObjectBytes: quota, maxObjects: 60, maxScriptBytes: 0, maxVersionsPerScript: 100 },
  });
  const stored = async () => (await a.list(bucket, { limit: 1000 })).objects;
  const outcomes = async (writes: Array<Promise<unknown>>) => {
    const settled = await Promise.allSettled(writes);
    for (const outcome of settled) {
      if (outcome.status === 'rejected') assert.equal((outcome.reason as StoreError).code, 'STORE_QUOTA_EXCEEDED', String(outcome.reason));
    }
    return { written: settled.filter((o) => o.status === 'fulfilled').length, refused: settled.filter((o) => o.status === 'rejected').length };
  };
  // Round 1: 120 puts of 1000 bytes, half on each instance, for room for 50.
  const first = await outcomes(
    Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? a : b).put(bucket, `k/${String(i).padStart(3, '0')}`, new Uint8Array(1000))),
  );
  const usage1 = await b.accountUsage(null);
  console.log(
    `quota race 1: ${first.written} written, ${first.refused} refused; usage ${usage1.objectBytes} bytes / ${usage1.objectCount} objects (quota ${quota} bytes)`,
  );
  assert.deepEqual([first.written, first.refused], [50, 70]);
  assert.equal(usage1.objectBytes, quota);
  assert.equal((await stored()).length, 50);

  // Round 2: deletes, overwrites that grow and new keys, all at once from both instances.
  const keys = (await stored()).map((object) => object.key);
  const second = await outcomes([
    ...keys.slice(0, 20).map((key, i) => (i % 2 === 0 ? a : b).delete(bucket, [key])),
    ...keys.slice(20, 40).map((key, i) => (i % 2 === 0 ? b : a).put(bucket, key, new Uint8Array(1500))),
    ...Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).put(bucket, `n/${i}`, new Uint8Array(700))),
  ]);
  const usage2 = await a.accountUsage(null);
  const after = await stored();
  const bytes = after.reduce((sum, object) => sum + object.size, 0);
  console.log(
    `quota race 2: ${second.written} writes done, ${second.refused} refused; ${after.length} objects of ${bytes} bytes stored, usage says ${usage2.objectBytes} / ${usage2.objectCount}`,
  );
  assert.ok(bytes <= quota, `${bytes} bytes stored past the quota of ${quota}`);
  assert.deepEqual([usage2.objectBytes, usage2.objectCount], [bytes, after.length], 'usage is exactly what is stored');
  assert.ok(second.refused > 0 && second.written > 20, 'some writes fit and some did not');

  // Parts race too: an open upload's parts count, and never pass the quota either.
  await a.delete(
    bucket,
    after.map((object) => object.key),
  );
  const uploadId = await a.createMultipartUpload(bucket, 'big');
  const parts = await outcomes(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).uploadPart(bucket, 'big', uploadId, i + 1, new Uint8Array(2000))));
  const usage3 = await b.accountUsage(null);
  console.log(`quota race 3: ${parts.written} parts of 2000 bytes recorded, ${parts.refused} refused; usage ${usage3.objectBytes} bytes`);
  assert.deepEqual([parts.written, usage3.objectBytes], [25, quota]);
  await b.abortMultipartUpload(bucket, 'big', uploadId);
  assert.deepEqual([(await a.accountUsage(null)).objectBytes, (await a.accountUsage(null)).objectCount], [0, 0]);
});

test('property: on PostgreSQL, paginated listing returns exactly the keys in UTF-8 byte order', { timeout: 10_000 }, async (t) => {
  const database = await openDatabase(t);
  const engine = await openStoreEngine({ dataDir: tempDir(t), database, clock: new FakeClock(START) });
  t.after(() => engine.close());
  const alphabet = fc.constantFrom('a', 'b', '/', '\u0000', 'é', 'e\u0301', '\uFF61', '\uE000', '\u{1F600}', '\u{10000}', '\u{10FFFF}');
  const key = fc.array(alphabet, { maxLength: 5 }).map((chars) => chars.join(''));
  const byteOrder = (x: string, y: string) => Buffer.compare(Buffer.from(x), Buffer.from(y));
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(key, { maxLength: 30 }),
      fc.array(alphabet, { maxLength: 2 }).map((c) => c.join('')),
      fc.option(key, { nil: undefined }),
      fc.integer({ min: 1, max: 7 }),
      async (keys, prefix, startAfter, limit) => {
        const bucket = `prop-${run++}`;
        await engine.createBucket(bucket);
        await Promise.all(keys.map((k) => engine.put(bucket, k, bytes(k))));
        const got: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await engine.list(bucket, { prefix, limit, ...(startAfter !== undefined ? { startAfter } : {}), ...(cursor ? { cursor } : {}) });
          assert.ok(page.objects.length <= limit);
          got.push(...page.objects.map((o) => o.key));
          cursor = page.truncated ? page.cursor : undefined;
        } while (cursor);
        const want = keys.filter((k) => k.startsWith(prefix) && (startAfter === undefined || byteOrder(k, startAfter) > 0)).sort(byteOrder);
        assert.deepEqual(got, want);
      },
    ),
    { numRuns: 40 },
  );
});

test('keys are stored as their UTF-8 bytes, so U+0000 and any other code point round-trip', { timeout: 10_000 }, async (t) => {
  const database = await openDatabase(t);
  const store = new PgMetadataStore({ database, clock: new FakeClock(START), reclaimGraceMs: GRACE_MS });
  await store.insertBucket({ name: 'b1', created: 1, storageClass: 'Standard' });
  const key = 'nul\u0000é\u{1F600}';
  await store.putObject('b1', objectMeta(key), { kind: 'inline', bytes: bytes('x') });
  const [row] = await database.query<{ key: Buffer }>('SELECT key FROM objects');
  assert.deepEqual(row?.key, Buffer.from(key, 'utf8'));
  assert.equal((await store.headObject('b1', key))?.key, key);
});
