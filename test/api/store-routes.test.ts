/**
 * The object store routes of the management API (the dashboard's buckets page) over plain fetch:
 * buckets, objects listed by prefix and delimiter with a cursor, streamed puts and downloads,
 * multipart uploads under the store's part rules, and the store's refusals in the envelope.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { MAX_BODY_BYTES, startApi, type ApiFixture } from './helpers.ts';

const MiB = 1024 * 1024;

function base(api: ApiFixture): string {
  return `/accounts/${api.admin.accountId}/store/buckets`;
}

function objectPath(api: ApiFixture, bucket: string, key: string): string {
  return `${base(api)}/${bucket}/objects/${encodeURIComponent(key)}`;
}

async function put(api: ApiFixture, bucket: string, key: string, body: BodyInit, headers: Record<string, string> = {}) {
  return api.call(objectPath(api, bucket, key), { method: 'PUT', body, headers });
}

test("buckets: create, list, get, delete; the store's refusals in the envelope; another account's path is not found", { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const created = await api.call(base(api), { method: 'POST', json: { name: 'photos', storage_class: 'InfrequentAccess' } });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.equal(created.body.result.storage_class, 'InfrequentAccess');
  const listed = await api.call(base(api));
  assert.deepEqual(listed.body.result.map((b: { name: string }) => b.name).sort(), ['photos', 'test-bucket']);
  assert.equal((await api.call(`${base(api)}/photos`)).body.result.name, 'photos');

  const again = await api.call(base(api), { method: 'POST', json: { name: 'photos' } });
  assert.equal(again.status, 400);
  assert.equal(again.body.errors[0].code, 10004);
  const invalid = await api.call(base(api), { method: 'POST', json: { name: 'No_Such' } });
  assert.equal(invalid.status, 400);
  assert.equal(invalid.body.errors[0].code, 1002);
  assert.match(invalid.body.errors[0].message, /bucket name is not valid/);
  const missing = await api.call(`${base(api)}/nothing-here`);
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body.errors, [{ code: 10006, message: 'The specified bucket does not exist.' }]);

  assert.equal((await put(api, 'photos', 'a.txt', new TextEncoder().encode('a'))).status, 200);
  const notEmpty = await api.call(`${base(api)}/photos`, { method: 'DELETE' });
  assert.equal(notEmpty.status, 400);
  assert.equal(notEmpty.body.errors[0].code, 10008);
  assert.equal((await api.call(objectPath(api, 'photos', 'a.txt'), { method: 'DELETE' })).status, 200);
  assert.equal((await api.call(`${base(api)}/photos`, { method: 'DELETE' })).status, 200);

  const other = await api.newAccount('other@example.com');
  const foreign = await api.call(base(api), { as: other });
  assert.equal(foreign.status, 404);
  assert.equal(foreign.body.errors[0].code, 7003);
});

test(
  'buckets belong to their account: under its own account id, another account finds none of mine and may reuse the names',
  { timeout: 30_000 },
  async (t) => {
    const api = await startApi(t);
    assert.equal((await put(api, 'test-bucket', 'secret.txt', new TextEncoder().encode('mine'))).status, 200);
    const other = await api.newAccount('other@example.com');
    const theirs = `/accounts/${other.accountId}/store/buckets`;
    assert.deepEqual((await api.call(theirs, { as: other })).body.result, [], 'my buckets are not listed');
    const missing = { code: 10006, message: 'The specified bucket does not exist.' };
    for (const [method, path] of [
      ['GET', `${theirs}/test-bucket`],
      ['GET', `${theirs}/test-bucket/objects`],
      ['GET', `${theirs}/test-bucket/objects/secret.txt`],
      ['DELETE', `${theirs}/test-bucket/objects/secret.txt`],
      ['DELETE', `${theirs}/test-bucket`],
    ] as const) {
      const refused = await api.call(path, { method, as: other });
      assert.deepEqual([refused.status, refused.body.errors], [404, [missing]], `${method} ${path}`);
    }
    const overwrite = await api.call(`${theirs}/test-bucket/objects/secret.txt`, { method: 'PUT', body: 'theirs', as: other });
    assert.deepEqual([overwrite.status, overwrite.body.errors], [404, [missing]]);
    assert.equal((await api.call(theirs, { method: 'POST', json: { name: 'test-bucket' }, as: other })).status, 200, 'the name is theirs to use too');
    assert.equal((await api.call(`${theirs}/test-bucket/objects/secret.txt`, { method: 'PUT', body: 'theirs', as: other })).status, 200);
    const mine = await fetch(api.base + objectPath(api, 'test-bucket', 'secret.txt'), {
      headers: { 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key },
    });
    assert.equal(await mine.text(), 'mine', 'their bucket of the same name is another bucket');
  },
);

test('objects: streamed put with metadata (past the JSON body limit), folders by delimiter, cursor pages, download, delete', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const bytes = randomBytes(MAX_BODY_BYTES * 4);
  const stored = await put(api, 'test-bucket', 'docs/2026/report.bin', bytes, { 'content-type': 'application/x-report', 'x-edgeport-meta-owner': 'ana' });
  assert.equal(stored.status, 200, JSON.stringify(stored.body));
  assert.equal(stored.body.result.size, bytes.length);
  assert.equal(stored.body.result.etag, createHash('md5').update(bytes).digest('hex'));
  assert.deepEqual(stored.body.result.http_metadata, { content_type: 'application/x-report' });
  assert.deepEqual(stored.body.result.custom_metadata, { owner: 'ana' });
  for (const key of ['docs/readme.txt', 'docs/2026/a.txt', 'top.txt']) await put(api, 'test-bucket', key, new TextEncoder().encode(key));

  const root = await api.call(`${base(api)}/test-bucket/objects?delimiter=/`);
  assert.deepEqual(
    root.body.result.map((o: { key: string }) => o.key),
    ['top.txt'],
  );
  assert.deepEqual(root.body.result_info.delimited, ['docs/'], "folders keep the delimiter (S3's form)");
  const docs = await api.call(`${base(api)}/test-bucket/objects?delimiter=/&prefix=${encodeURIComponent('docs/')}`);
  assert.deepEqual(
    docs.body.result.map((o: { key: string }) => o.key),
    ['docs/readme.txt'],
  );
  assert.deepEqual(docs.body.result_info.delimited, ['docs/2026/']);

  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.call(`${base(api)}/test-bucket/objects?per_page=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(page.status, 200);
    keys.push(...page.body.result.map((o: { key: string }) => o.key));
    cursor = page.body.result_info.cursor;
    assert.equal(page.body.result_info.is_truncated, cursor !== undefined);
  } while (cursor);
  assert.deepEqual(keys, ['docs/2026/a.txt', 'docs/2026/report.bin', 'docs/readme.txt', 'top.txt']);
  const badCursor = await api.call(`${base(api)}/test-bucket/objects?cursor=nope`);
  assert.equal(badCursor.status, 400);

  const download = await fetch(api.base + objectPath(api, 'test-bucket', 'docs/2026/report.bin'), {
    headers: { 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key },
  });
  assert.equal(download.status, 200);
  assert.equal(download.headers.get('content-type'), 'application/x-report');
  assert.equal(download.headers.get('content-length'), String(bytes.length));
  assert.equal(download.headers.get('content-disposition'), 'attachment; filename="report.bin"; filename*=UTF-8\'\'report.bin');
  assert.equal(download.headers.get('content-security-policy'), "sandbox; default-src 'none'");
  assert.equal(download.headers.get('x-content-type-options'), 'nosniff');
  assert.ok(Buffer.from(await download.arrayBuffer()).equals(bytes));

  assert.equal((await api.call(objectPath(api, 'test-bucket', 'docs/2026/report.bin'), { method: 'DELETE' })).status, 200);
  const gone = await api.call(objectPath(api, 'test-bucket', 'docs/2026/report.bin'));
  assert.equal(gone.status, 404);
  assert.deepEqual(gone.body.errors, [{ code: 10007, message: 'The specified key does not exist.' }]);
});

test(
  'objects: headers sent as raw UTF-8 are kept as their text and downloaded as the same bytes; other bytes one character a byte',
  { timeout: 10_000 },
  async (t) => {
    const api = await startApi(t);
    /** A header value as the bytes of `text` in UTF-8, one character per byte (what fetch sends as those bytes). */
    const utf8Bytes = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
    const text = { disposition: 'inline; filename="naïve.txt"', type: 'text/plain; title="日本語"', owner: 'Zoë' };
    const stored = await put(api, 'test-bucket', 'naive.txt', new TextEncoder().encode('x'), {
      'content-type': utf8Bytes(text.type),
      'content-disposition': utf8Bytes(text.disposition),
      'x-edgeport-meta-owner': utf8Bytes(text.owner),
    });
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    assert.deepEqual(stored.body.result.http_metadata, { content_type: text.type, content_disposition: text.disposition });
    assert.deepEqual(stored.body.result.custom_metadata, { owner: text.owner });
    const listed = await api.call(`${base(api)}/test-bucket/objects`);
    assert.deepEqual(listed.body.result[0].http_metadata, { content_type: text.type, content_disposition: text.disposition });

    // Out, the text is its UTF-8 again (fetch shows each byte as a character).
    const auth = { 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key };
    const download = await fetch(api.base + objectPath(api, 'test-bucket', 'naive.txt'), { headers: auth });
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), utf8Bytes(text.type));
    await download.arrayBuffer();
    const r2 = await fetch(`${api.base}/accounts/${api.admin.accountId}/r2/buckets/test-bucket/objects/naive.txt`, { headers: auth });
    assert.equal(r2.status, 200);
    assert.deepEqual([r2.headers.get('content-type'), r2.headers.get('content-disposition')], [utf8Bytes(text.type), utf8Bytes(text.disposition)]);
    await r2.arrayBuffer();

    // Bytes that are not UTF-8 (what a browser's fetch sends for Latin-1 text): one character a byte.
    const latin1 = await put(api, 'test-bucket', 'latin1.txt', new TextEncoder().encode('x'), { 'content-disposition': 'inline; filename="\xe9t\xe9.txt"' });
    assert.equal(latin1.status, 200, JSON.stringify(latin1.body));
    assert.equal(latin1.body.result.http_metadata.content_disposition, 'inline; filename="été.txt"');
  },
);

test("usage: a bucket's and a folder's object count and bytes, bounded; a missing bucket is 10006", { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  for (const [key, size] of [
    ['docs/a.txt', 10],
    ['docs/2026/b.txt', 20],
    ['docs0.txt', 40],
    ['top.txt', 80],
  ] as const) {
    assert.equal((await put(api, 'test-bucket', key, new Uint8Array(size))).status, 200);
  }
  const usage = async (query: string) => (await api.call(`${base(api)}/test-bucket/usage${query}`)).body;
  assert.deepEqual((await usage('')).result, {
    prefix: '',
    object_count: 4,
    payload_size: 150,
    metadata_size: (await usage('')).result.metadata_size,
    upload_count: 0,
    complete: true,
  });
  assert.deepEqual([(await usage('?prefix=docs/')).result.object_count, (await usage('?prefix=docs/')).result.payload_size], [2, 30]);
  assert.deepEqual(
    [(await usage(`?prefix=${encodeURIComponent('docs/2026/')}`)).result.object_count, (await usage('?prefix=nothing/')).result.object_count],
    [1, 0],
  );
  const missing = await api.call(`${base(api)}/no-such-bucket/usage`);
  assert.deepEqual([missing.status, missing.body.errors[0].code], [404, 10006]);
  const long = await api.call(`${base(api)}/test-bucket/usage?prefix=${'x'.repeat(1025)}`);
  assert.equal(long.status, 400);
});

test("multipart: create, parts streamed, complete; the store's part rules; abort", { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const key = 'big/video.bin';
  const uploads = `${objectPath(api, 'test-bucket', key)}/uploads`;
  const started = await api.call(uploads, { method: 'POST', json: { http_metadata: { content_type: 'video/mp4' }, custom_metadata: { take: '2' } } });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const id = started.body.result.upload_id as string;
  const parts = [randomBytes(5 * MiB), randomBytes(1234)];
  const etags: string[] = [];
  for (const [i, part] of parts.entries()) {
    const answer = await api.call(`${uploads}/${id}/parts/${i + 1}`, { method: 'PUT', body: part });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.result.etag, createHash('md5').update(part).digest('hex'));
    etags.push(answer.body.result.etag);
  }
  const badNumber = await api.call(`${uploads}/${id}/parts/0`, { method: 'PUT', body: parts[1] });
  assert.equal(badNumber.status, 400);
  assert.match(badNumber.body.errors[0].message, /part_number/);
  const done = await api.call(`${uploads}/${id}/complete`, { method: 'POST', json: { parts: etags.map((etag, i) => ({ part_number: i + 1, etag })) } });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.equal(done.body.result.size, 5 * MiB + 1234);
  assert.match(done.body.result.etag, /-2$/);
  assert.deepEqual(done.body.result.http_metadata, { content_type: 'video/mp4' });
  assert.deepEqual(done.body.result.custom_metadata, { take: '2' });
  const read = await fetch(api.base + objectPath(api, 'test-bucket', key), { headers: { 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key } });
  assert.ok(Buffer.from(await read.arrayBuffer()).equals(Buffer.concat(parts)));

  // A first part smaller than the last breaks the store's rule: refused at completion, nothing written.
  const second = (await api.call(uploads, { method: 'POST' })).body.result.upload_id as string;
  const small = (await api.call(`${uploads}/${second}/parts/1`, { method: 'PUT', body: randomBytes(1000) })).body.result.etag;
  const large = (await api.call(`${uploads}/${second}/parts/2`, { method: 'PUT', body: randomBytes(2000) })).body.result.etag;
  const refused = await api.call(`${uploads}/${second}/complete`, {
    method: 'POST',
    json: {
      parts: [
        { part_number: 1, etag: small },
        { part_number: 2, etag: large },
      ],
    },
  });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.errors[0].code, 1002);
  assert.equal((await api.call(`${uploads}/${second}`, { method: 'DELETE' })).status, 200);
  const afterAbort = await api.call(`${uploads}/${second}/parts/3`, { method: 'PUT', body: randomBytes(10) });
  assert.equal(afterAbort.status, 404);
  assert.deepEqual(afterAbort.body.errors, [{ code: 10024, message: 'The specified multipart upload does not exist.' }]);
  const stillThere = await fetch(api.base + objectPath(api, 'test-bucket', key), { headers: { 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key } });
  assert.equal(Number(stillThere.headers.get('content-length')), 5 * MiB + 1234, 'the refused upload replaced nothing');
  await stillThere.body?.cancel();
});
