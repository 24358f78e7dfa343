/**
 * A script upload's multipart body: the SDK's bracketed metadata fields rebuild the object it was
 * made from (property test), the SDK's multipart body labelled `application/javascript` is read by
 * its first line's boundary, and a body without a length is refused once it passes 10 MiB, before
 * the rest is read.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { fromBrackets, MAX_UPLOAD_BYTES, readUploadForm } from '../../src/api/workers/upload-form.ts';
import { ApiError } from '../../src/api/errors.ts';

/** The official SDK's form encoding of an object (cloudflare/internal/uploads addFormValue). */
function brackets(key: string, value: unknown, out: Array<[string, string]>): void {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out.push([key, String(value)]);
  else if (Array.isArray(value)) for (const entry of value) brackets(`${key}[]`, entry, out);
  else if (value !== null && typeof value === 'object') for (const [name, prop] of Object.entries(value)) brackets(`${key}[${name}]`, prop, out);
}

const text = fc.string({ maxLength: 12 }).filter((s) => s !== 'true' && s !== 'false');
const name = fc.stringMatching(/^[a-z_]{1,8}$/);
// Bindings as the SDK's types have them: each starts with `type`, then its own keys (an empty object is no field at all).
const binding = fc.record({ type: name, name: text }, { noNullPrototype: true }).chain((base) =>
  fc
    .dictionary(
      name.filter((k) => k !== 'type' && k !== 'name'),
      fc.oneof(text, fc.boolean(), fc.dictionary(name, text, { minKeys: 1, maxKeys: 3, noNullPrototype: true })),
      { maxKeys: 3, noNullPrototype: true },
    )
    .map((extra) => ({ ...base, ...extra })),
);
const metadata = fc.record(
  {
    main_module: text,
    compatibility_flags: fc.array(text, { minLength: 1, maxLength: 4 }),
    bindings: fc.array(binding, { minLength: 1, maxLength: 5 }),
    keep_bindings: fc.array(text, { minLength: 1, maxLength: 3 }),
    logpush: fc.boolean(),
    annotations: fc.record({ 'workers/message': text }, { noNullPrototype: true }),
  },
  { requiredKeys: ['main_module'], noNullPrototype: true },
);

test("the SDK's bracketed metadata fields rebuild the metadata object", { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(metadata, (value) => {
      const fields: Array<[string, string]> = [];
      brackets('', value, fields);
      assert.deepEqual(fromBrackets(fields), value);
    }),
    { numRuns: 300 },
  );
});

test(
  "a multipart body labelled application/javascript (the SDK) is read by its first line's boundary; anything else is refused with 10021",
  { timeout: 10_000 },
  async () => {
    const form = new FormData();
    form.append('metadata[main_module]', 'index.js');
    form.append('files[]', new Blob(['export default {}'], { type: 'application/javascript+module' }), 'index.js');
    const multipart = new Request('http://x/', { method: 'PUT', body: form });
    const body = new Uint8Array(await multipart.arrayBuffer());
    const read = await readUploadForm(new Request('http://x/', { method: 'PUT', body, headers: { 'content-type': 'application/javascript' } }));
    assert.deepEqual(read.metadata, { main_module: 'index.js' });
    assert.deepEqual(
      read.parts.map((p) => [p.name, p.contentType, Buffer.from(p.bytes).toString()]),
      [['index.js', 'application/javascript+module', 'export default {}']],
    );
    await assert.rejects(
      readUploadForm(new Request('http://x/', { method: 'PUT', body: 'export default {}', headers: { 'content-type': 'application/javascript' } })),
      (error: unknown) => error instanceof ApiError && error.items[0]!.code === 10021 && /must be multipart\/form-data/.test(error.message),
    );
  },
);

test('an upload without a length is refused with 413 / 10027 once it passes 10 MiB, and the rest is never read', { timeout: 10_000 }, async () => {
  const chunk = new Uint8Array(1024 * 1024);
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      if (pulled > 100) controller.close();
      else controller.enqueue(chunk);
    },
  });
  const request = new Request('http://x/', {
    method: 'PUT',
    body: stream,
    duplex: 'half',
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
  } as RequestInit);
  await assert.rejects(readUploadForm(request), (error: unknown) => error instanceof ApiError && error.status === 413 && error.items[0]!.code === 10027);
  assert.ok(pulled <= MAX_UPLOAD_BYTES / chunk.length + 3, `read ${pulled} MiB of 100`);
});
