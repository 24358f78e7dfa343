/**
 * Bodies that cross between a script in workerd and the server keep exactly their bytes: a stored
 * object's range sent back untouched (inline in the database row, or in a blob file), and request
 * bodies of any size, through the real script host and node:http.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { startTestHost } from '../helpers/script-host.ts';

const SCRIPT = `
export default {
  async fetch(request, env) {
    const key = new URL(request.url).pathname.slice(1);
    if (request.method === 'PUT') {
      await env.BUCKET.put(key, request.body);
      return new Response('stored');
    }
    if (request.method === 'POST') return new Response(request.body);
    const object = await env.BUCKET.get(key, { range: request.headers });
    return new Response(object.body, { status: request.headers.has('range') ? 206 : 200 });
  },
};
`;

test("an untouched stored body sent back is the object's range, inline or from a blob", { timeout: 60_000 }, async (t) => {
  const host = await startTestHost(t, SCRIPT, { config: { store_buckets: [{ binding: 'BUCKET', bucket_name: 'data' }] } });
  for (const [key, size] of [
    ['small', 12],
    ['large', 200_000],
  ] as const) {
    const bytes = randomBytes(size);
    assert.equal(await (await fetch(`${host.url}/${key}`, { method: 'PUT', body: bytes })).text(), 'stored');
    for (const [first, last] of [
      [2, 6],
      [0, 0],
      [size - 5, size - 1],
      [1, size - 2],
    ] as const) {
      const response = await fetch(`${host.url}/${key}`, { headers: { range: `bytes=${first}-${last}` } });
      assert.equal(response.status, 206);
      assert.deepEqual(Buffer.from(await response.arrayBuffer()), bytes.subarray(first, last + 1), `${key} bytes ${first}-${last}`);
    }
    assert.deepEqual(Buffer.from(await (await fetch(`${host.url}/${key}`)).arrayBuffer()), bytes);
  }
});

test('request bodies reach the script byte for byte, whatever the socket chunking', { timeout: 60_000 }, async (t) => {
  const host = await startTestHost(t, SCRIPT, { config: { store_buckets: [{ binding: 'BUCKET', bucket_name: 'data' }] } });
  for (const size of [1, 100, 70_000, 1_000_003]) {
    const bytes = randomBytes(size);
    const echoed = Buffer.from(await (await fetch(`${host.url}/echo`, { method: 'POST', body: bytes })).arrayBuffer());
    assert.ok(echoed.equals(bytes), `${size} bytes`);
  }
});
