/**
 * A public bucket's answers, as a visitor's fetch() sees them, over a real listener on a real
 * engine (the hosts that reach it, pub-<id>.r2.localhost and custom domains, are
 * test/e2e/public-buckets.test.ts): the object's HTTP metadata as headers, keys decoded once,
 * GET ranges (HEAD ignores them), the RFC 9110 preconditions in every combination, writes refused,
 * and the bucket's CORS rules for browsers.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test, type TestContext } from 'node:test';
import { servePublicObject } from '../../../src/store/public/public-object-server.ts';
import { openTestEngine } from '../../helpers/engine.ts';
import { listen } from '../../helpers/listen.ts';

async function startPublic(t: TestContext) {
  const fixture = await openTestEngine(t);
  const { engine, bucket } = fixture;
  const server = createServer((req, res) => {
    servePublicObject(engine, bucket, req, res).catch((error: unknown) => {
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  const base = `http://127.0.0.1:${await listen(server, t)}`;
  const put = async (key: string, body: string, httpMetadata = {}) => {
    const meta = await engine.put(bucket, key, Buffer.from(body), { httpMetadata, customMetadata: { secret: 'not for visitors' } });
    return { etag: `"${meta!.etag}"`, uploaded: meta!.uploaded };
  };
  return { ...fixture, base, put };
}

test('an object with its HTTP metadata as headers; none of its custom metadata; a plain GET is a whole 200', { timeout: 10_000 }, async (t) => {
  const { base, put } = await startPublic(t);
  const expires = Date.UTC(2030, 0, 1);
  const stored = await put('doc.json', '{"a":1}', {
    contentType: 'application/json',
    contentLanguage: 'en-US',
    contentDisposition: 'attachment; filename="doc.json"',
    contentEncoding: 'identity',
    cacheControl: 'max-age=3600',
    cacheExpiry: expires,
  });
  const res = await fetch(`${base}/doc.json`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), '{"a":1}');
  const headers = Object.fromEntries(
    [
      'content-type',
      'content-language',
      'content-disposition',
      'content-encoding',
      'cache-control',
      'expires',
      'etag',
      'last-modified',
      'accept-ranges',
      'content-length',
    ].map((name) => [name, res.headers.get(name)]),
  );
  assert.deepEqual(headers, {
    'content-type': 'application/json',
    'content-language': 'en-US',
    'content-disposition': 'attachment; filename="doc.json"',
    'content-encoding': 'identity',
    'cache-control': 'max-age=3600',
    expires: new Date(expires).toUTCString(),
    etag: stored.etag,
    'last-modified': new Date(stored.uploaded).toUTCString(),
    'accept-ranges': 'bytes',
    'content-length': '7',
  });
  assert.equal(res.headers.get('content-range'), null, 'a whole object is no range');
  assert.deepEqual(
    [...res.headers.keys()].filter((name) => name.startsWith('x-amz-meta') || name.includes('secret')),
    [],
  );

  await put('untyped', '0123456789');
  const untyped = await fetch(`${base}/untyped`);
  assert.deepEqual([untyped.status, untyped.headers.get('content-type'), await untyped.text()], [200, 'application/octet-stream', '0123456789']);
});

test('the path is the key, decoded exactly once; the root, a missing key and a broken escape are not objects', { timeout: 10_000 }, async (t) => {
  const { base, put } = await startPublic(t);
  await put('my folder/a file.txt', 'spaced');
  await put('100%/a%2Bb.txt', 'percent');
  await put('100%/a+b.txt', 'decoded twice');
  const spaced = await fetch(`${base}/my%20folder/a%20file.txt?download=1`);
  assert.deepEqual([spaced.status, await spaced.text()], [200, 'spaced'], 'the query is not part of the key');
  const percent = await fetch(`${base}/100%25/a%252Bb.txt`);
  assert.deepEqual([percent.status, await percent.text()], [200, 'percent']);
  for (const [path, status] of [
    ['/', 404],
    ['/missing', 404],
    ['/bad%G1', 400],
  ] as const) {
    const res = await fetch(`${base}${path}`);
    assert.equal(res.status, status, path);
    await res.arrayBuffer();
  }
});

test('GET serves one range (206), refuses one past the end (416), and serves the whole object for a Range it cannot read', { timeout: 10_000 }, async (t) => {
  const { base, put } = await startPublic(t);
  await put('digits', '0123456789');
  await put('empty', '');
  const get = (key: string, range: string) => fetch(`${base}/${key}`, { headers: { range } });

  for (const [range, body, contentRange] of [
    ['bytes=0-3', '0123', 'bytes 0-3/10'],
    ['bytes=-4', '6789', 'bytes 6-9/10'],
    ['bytes=7-', '789', 'bytes 7-9/10'],
    ['bytes=8-99', '89', 'bytes 8-9/10'],
  ] as const) {
    const res = await get('digits', range);
    assert.deepEqual(
      [res.status, await res.text(), res.headers.get('content-range'), res.headers.get('content-length')],
      [206, body, contentRange, String(body.length)],
      range,
    );
  }
  for (const [key, range] of [
    ['digits', 'bytes=99999-'],
    ['digits', 'bytes=-0'],
    ['empty', 'bytes=-5'],
    ['empty', 'bytes=0-'],
  ] as const) {
    const res = await get(key, range);
    assert.equal(res.status, 416, `${key} ${range}`);
    assert.equal(res.headers.get('content-range'), `bytes */${key === 'digits' ? 10 : 0}`);
    await res.arrayBuffer();
  }
  // RFC 9110 §14.2: a Range the server cannot read (malformed, several ranges, an inverted one) is
  // ignored, as S3 ignores it: the whole object, 200. (Miniflare answers 400.)
  for (const range of ['bytes=zzz', 'bytes=0-1,3-4', '0-3', 'bytes=5-2']) {
    const res = await get('digits', range);
    assert.deepEqual([res.status, await res.text(), res.headers.get('content-range')], [200, '0123456789', null], range);
  }
  // HEAD ignores Range (RFC 9110 defines ranges for GET only; the platform's HeadObject documents it as having no effect).
  const head = await fetch(`${base}/digits`, { method: 'HEAD', headers: { range: 'bytes=0-3' } });
  assert.deepEqual([head.status, head.headers.get('content-length'), head.headers.get('content-range'), await head.text()], [200, '10', null, '']);
});

test('preconditions, GET and HEAD alike: which of 304 and 412 wins, and a passing etag test overriding its date test', { timeout: 10_000 }, async (t) => {
  const { base, put } = await startPublic(t);
  const { etag, uploaded } = await put('k', 'value');
  const before = new Date(uploaded - 60_000).toUTCString();
  const after = new Date(uploaded + 60_000).toUTCString();
  const other = '"0123456789abcdef0123456789abcdef"';
  const cases: Array<[string, Record<string, string>, number]> = [
    ['If-None-Match matches', { 'if-none-match': etag }, 304],
    ['If-None-Match does not', { 'if-none-match': other }, 200],
    ['If-None-Match *', { 'if-none-match': '*' }, 304],
    ['If-Match does not match', { 'if-match': other }, 412],
    ['If-Match matches', { 'if-match': etag }, 200],
    ['If-Modified-Since after the upload', { 'if-modified-since': after }, 304],
    ['If-Modified-Since before it', { 'if-modified-since': before }, 200],
    ['If-Unmodified-Since before the upload', { 'if-unmodified-since': before }, 412],
    ['If-Unmodified-Since after it', { 'if-unmodified-since': after }, 200],
    ['If-Match and If-None-Match both fail: 412 first', { 'if-match': other, 'if-none-match': etag }, 412],
    ['If-Unmodified-Since and If-None-Match both fail: 412 first', { 'if-unmodified-since': before, 'if-none-match': etag }, 412],
    ['If-Match passes, If-None-Match fails', { 'if-match': etag, 'if-none-match': etag }, 304],
    ['If-Unmodified-Since passes, If-None-Match fails', { 'if-unmodified-since': after, 'if-none-match': etag }, 304],
    ['If-Match passes, If-Modified-Since fails', { 'if-match': etag, 'if-modified-since': after }, 304],
    ['a passing If-Match overrides a failing If-Unmodified-Since', { 'if-match': etag, 'if-unmodified-since': before }, 200],
    ['a passing If-None-Match overrides a failing If-Modified-Since', { 'if-none-match': other, 'if-modified-since': after }, 200],
  ];
  for (const method of ['GET', 'HEAD']) {
    for (const [name, headers, status] of cases) {
      const res = await fetch(`${base}/k`, { method, headers });
      const body = await res.text();
      assert.equal(res.status, status, `${method}: ${name}`);
      if (status === 200) {
        assert.deepEqual([body, res.headers.get('content-length')], [method === 'GET' ? 'value' : '', '5'], `${method}: ${name}`);
      }
      if (status === 304) {
        assert.deepEqual([body, res.headers.get('etag'), res.headers.get('last-modified')], ['', etag, new Date(uploaded).toUTCString()], `${method}: ${name}`);
      }
    }
    const missing = await fetch(`${base}/missing`, { method, headers: { 'if-match': etag, 'if-none-match': etag } });
    assert.equal(missing.status, 404, `${method}: a missing key is 404 whatever the conditions`);
    await missing.arrayBuffer();
  }
  // A Range under a failing condition: the condition's answer, no part of the body.
  const ranged = await fetch(`${base}/k`, { headers: { range: 'bytes=0-1', 'if-none-match': etag } });
  assert.deepEqual([ranged.status, ranged.headers.get('content-range'), await ranged.text()], [304, null, '']);
  const unsatisfiable = await fetch(`${base}/k`, { headers: { range: 'bytes=50-', 'if-match': other } });
  assert.equal(unsatisfiable.status, 412, 'a failed If-Match comes before an unsatisfiable range');
  await unsatisfiable.arrayBuffer();
});

test('every method but GET, HEAD and OPTIONS is 405 with Allow, and changes nothing', { timeout: 10_000 }, async (t) => {
  const { base, put } = await startPublic(t);
  await put('k', 'untouched');
  for (const method of ['PUT', 'POST', 'DELETE', 'PATCH']) {
    const res = await fetch(`${base}/k`, { method, ...(method === 'DELETE' ? {} : { body: 'tampered' }) });
    assert.deepEqual([res.status, res.headers.get('allow')], [405, 'GET, HEAD'], method);
    await res.arrayBuffer();
  }
  assert.equal(await (await fetch(`${base}/k`)).text(), 'untouched');
});

test(
  "browsers get the bucket's CORS rules: preflights for GET and HEAD, Access-Control-* on answers, nothing without a rule",
  { timeout: 10_000 },
  async (t) => {
    const { base, put, engine, bucket } = await startPublic(t);
    await put('font.woff2', 'glyphs');
    const page = 'http://localhost:3000';
    const preflight = (origin: string, method: string, headers?: string) =>
      fetch(`${base}/font.woff2`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': method, ...(headers ? { 'access-control-request-headers': headers } : {}) },
      });

    // No rules: a public object is still served, but no browser page on another origin may read it.
    const unruled = await fetch(`${base}/font.woff2`, { headers: { origin: page } });
    assert.deepEqual([unruled.status, unruled.headers.get('access-control-allow-origin')], [200, null]);
    await unruled.arrayBuffer();
    const refused = await preflight(page, 'GET');
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /not allowed/);

    await engine.putBucketCors(bucket, [
      { allowedOrigins: [page], allowedMethods: ['GET', 'HEAD', 'PUT'], allowedHeaders: ['if-none-match'], exposeHeaders: ['ETag'], maxAgeSeconds: 600 },
      { allowedOrigins: ['*'], allowedMethods: ['GET'], allowedHeaders: [], exposeHeaders: [] },
    ]);
    const allowed = await preflight(page, 'GET', 'If-None-Match');
    assert.equal(allowed.status, 200);
    assert.deepEqual(
      [
        'access-control-allow-origin',
        'access-control-allow-methods',
        'access-control-allow-headers',
        'access-control-max-age',
        'access-control-allow-credentials',
      ].map((name) => allowed.headers.get(name)),
      [page, 'GET, HEAD, PUT', 'If-None-Match', '600', 'true'],
    );
    await allowed.arrayBuffer();
    // A rule allowing PUT does not make a public host writable: the preflight says so.
    const write = await preflight(page, 'PUT');
    assert.equal(write.status, 403);
    assert.match(await write.text(), /read-only, so only GET and HEAD/);
    const noOrigin = await fetch(`${base}/font.woff2`, { method: 'OPTIONS', headers: { 'access-control-request-method': 'GET' } });
    assert.equal(noOrigin.status, 400);
    assert.match(await noOrigin.text(), /Origin request header needed/);

    const read = await fetch(`${base}/font.woff2`, { headers: { origin: page } });
    assert.deepEqual(
      [read.status, read.headers.get('access-control-allow-origin'), read.headers.get('access-control-expose-headers'), await read.text()],
      [200, page, 'ETag', 'glyphs'],
    );
    const anyone = await fetch(`${base}/font.woff2`, { headers: { origin: 'https://elsewhere.example' } });
    assert.deepEqual([anyone.headers.get('access-control-allow-origin'), anyone.headers.get('access-control-allow-credentials')], ['*', null]);
    await anyone.arrayBuffer();
    // Errors carry them too, so the page can read why.
    const missing = await fetch(`${base}/missing.woff2`, { headers: { origin: page } });
    assert.deepEqual([missing.status, missing.headers.get('access-control-allow-origin')], [404, page]);
    await missing.arrayBuffer();
    const plain = await fetch(`${base}/font.woff2`);
    assert.equal(plain.headers.get('access-control-allow-origin'), null, 'no Origin, no CORS headers');
    await plain.arrayBuffer();
  },
);
