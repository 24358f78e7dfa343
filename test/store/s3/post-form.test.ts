/**
 * The streaming multipart/form-data reader of POST Object: whatever the fields, the file's bytes
 * and however the body is cut into chunks, it gives back exactly what was encoded, and refuses a
 * form exactly when more than the limit precedes the file's bytes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { formBoundary, readForm, type FormUpload } from '../../../src/store/s3/post-form.ts';
import { S3Error } from '../../../src/store/s3/s3-error.ts';

interface Form {
  boundary: string;
  fields: Array<{ name: string; value: string }>;
  file?: { filename: string; contentType: string; bytes: Uint8Array };
  /** Parts after the file, which the reader does not parse. */
  after: Array<{ name: string; value: string }>;
  preamble: string;
}

function encode(form: Form): { body: Buffer; fileStart: number } {
  const parts: Buffer[] = [Buffer.from(form.preamble === '' ? '' : `${form.preamble}\r\n`)];
  for (const { name, value } of form.fields)
    parts.push(Buffer.from(`--${form.boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  let fileStart = -1;
  if (form.file) {
    parts.push(
      Buffer.from(
        `--${form.boundary}\r\nContent-Disposition: form-data; name="file"; filename="${form.file.filename}"\r\nContent-Type: ${form.file.contentType}\r\n\r\n`,
      ),
    );
    fileStart = parts.reduce((n, b) => n + b.length, 0);
    parts.push(Buffer.from(form.file.bytes), Buffer.from('\r\n'));
    for (const { name, value } of form.after)
      parts.push(Buffer.from(`--${form.boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(Buffer.from(`--${form.boundary}--\r\n`));
  return { body: Buffer.concat(parts), fileStart };
}

async function* chunked(body: Buffer, cuts: number[]): AsyncIterable<Uint8Array> {
  let at = 0;
  for (const cut of [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b)) {
    if (cut > at) yield body.subarray(at, cut);
    at = Math.max(at, cut);
  }
  if (at < body.length) yield body.subarray(at);
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const boundaryArb = fc.string({ unit: fc.constantFrom(...'abcXYZ0189-_=.'), minLength: 1, maxLength: 40 }).map((s) => `b${s}`);
const nameArb = fc
  .string({
    unit: fc.oneof(fc.constantFrom('a', 'Z', '-', '_', ';', '=', ' ', 'é', '\\'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })),
    minLength: 1,
    maxLength: 12,
  })
  .filter((n) => !/["\r\n]/.test(n) && n.toLowerCase() !== 'file' && n.trim() === n && n !== '');
/** Values with the characters that matter to the format: CR, LF, dashes, quotes. */
const valueArb = fc.string({
  unit: fc.oneof(fc.constantFrom('\r', '\n', '-', '"', ' '), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })),
  maxLength: 60,
});
const formArb: fc.Arbitrary<Form> = fc
  .record({
    boundary: boundaryArb,
    fields: fc.array(fc.record({ name: nameArb, value: valueArb }), { maxLength: 6 }),
    file: fc.option(
      fc.record({
        filename: fc.string({ maxLength: 20 }).filter((n) => !/["\r\n/\\]/.test(n)),
        contentType: fc.constantFrom('text/plain', 'application/octet-stream'),
        // Bytes rich in CR, LF and dashes, so partial delimiters occur.
        bytes: fc.array(fc.oneof(fc.constantFrom(13, 10, 45), fc.integer({ min: 0, max: 255 })), { maxLength: 300 }).map((a) => Uint8Array.from(a)),
      }),
      { nil: undefined },
    ),
    after: fc.array(fc.record({ name: nameArb, value: valueArb }), { maxLength: 2 }),
    preamble: fc.constantFrom('', 'This is a preamble.'),
  })
  .filter((form) => {
    // A value or file that itself contains the delimiter cannot be sent in this form (a client picks another boundary).
    const delimiter = `\r\n--${form.boundary}`;
    const clean = (text: string) => (text + delimiter).indexOf(delimiter) === text.length;
    return form.fields.every((f) => clean(f.value)) && (!form.file || clean(Buffer.from(form.file.bytes).toString('latin1')));
  });

test('the reader gives back every field and the file exactly, however the body is cut', { timeout: 60_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(formArb, fc.array(fc.nat(), { maxLength: 12 }), async (form, cuts) => {
      const { body } = encode(form);
      const upload = await readForm(chunked(body, cuts), form.boundary, 1_000_000);
      assert.deepEqual(
        upload.fields,
        form.fields.map(({ name, value }) => ({ name, value })),
      );
      if (!form.file) {
        assert.equal(upload.file, undefined);
        return;
      }
      assert.equal(upload.file?.filename, form.file.filename);
      assert.equal(upload.file?.contentType, form.file.contentType);
      assert.deepEqual(await collect(upload.file!.body), Buffer.from(form.file.bytes));
      assert.equal(await upload.drain(1_000_000), true);
    }),
    { numRuns: 400 },
  );
});

test("more than the limit before the file's bytes is MaxPostPreDataLengthExceeded; up to it is read", { timeout: 60_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(
      formArb.filter((f) => f.file !== undefined),
      fc.nat({ max: 600 }),
      fc.array(fc.nat(), { maxLength: 8 }),
      async (form, limit, cuts) => {
        const { body, fileStart } = encode(form);
        let upload: FormUpload;
        try {
          upload = await readForm(chunked(body, cuts), form.boundary, limit);
        } catch (error) {
          assert.ok(error instanceof S3Error && error.s3Code === 'MaxPostPreDataLengthExceeded', String(error));
          assert.ok(fileStart > limit, `refused with ${fileStart} bytes before the file and a limit of ${limit}`);
          return;
        }
        assert.ok(fileStart <= limit, `read ${fileStart} bytes before the file with a limit of ${limit}`);
        assert.deepEqual(await collect(upload.file!.body), Buffer.from(form.file!.bytes));
      },
    ),
    { numRuns: 400 },
  );
});

test('a body that ends inside the file is IncompleteBody; malformed framing is MalformedPOSTRequest', { timeout: 10_000 }, async () => {
  const form: Form = {
    boundary: 'XyZ',
    fields: [{ name: 'key', value: 'k' }],
    file: { filename: 'a.txt', contentType: 'text/plain', bytes: Buffer.from('hello') },
    after: [],
    preamble: '',
  };
  const { body } = encode(form);
  const truncated = await readForm(chunked(body.subarray(0, body.length - 12), []), 'XyZ', 10_000);
  await assert.rejects(collect(truncated.file!.body), (e: unknown) => e instanceof S3Error && e.s3Code === 'IncompleteBody');
  const malformed = async (text: string) =>
    assert.rejects(readForm(chunked(Buffer.from(text), []), 'XyZ', 10_000), (e: unknown) => e instanceof S3Error && e.s3Code === 'MalformedPOSTRequest');
  await malformed('--XyZ\r\nContent-Disposition: form-data; name="key"\r\n\r\nk');
  await malformed('--XyZ\r\nContent-Type: text/plain\r\n\r\nk\r\n--XyZ--');
  await malformed('--XyZ\r\nContent-Disposition: attachment; name="key"\r\n\r\nk\r\n--XyZ--');
  await malformed('--XyZ junk\r\nContent-Disposition: form-data; name="key"\r\n\r\nk\r\n--XyZ--');
  await malformed('no boundary at all');
  // A Windows path in filename keeps only the file's name; backslashes are not escapes.
  const windows = await readForm(
    chunked(Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="File"; filename="C:\\Users\\me\\a b.txt"\r\n\r\nx\r\n--XyZ--'), []),
    'XyZ',
    10_000,
  );
  assert.equal(windows.file?.filename, 'a b.txt');
  assert.equal(windows.file?.name, 'File');
});

test('the boundary comes from a multipart/form-data Content-Type only', { timeout: 10_000 }, () => {
  assert.equal(formBoundary('multipart/form-data; boundary=----WebKitFormBoundaryAbC'), '----WebKitFormBoundaryAbC');
  assert.equal(formBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b:c"'), 'a b:c');
  assert.equal(formBoundary('multipart/mixed; boundary=abc'), undefined);
  assert.equal(formBoundary('multipart/form-data'), undefined);
  assert.equal(formBoundary(`multipart/form-data; boundary=${'x'.repeat(71)}`), undefined);
  assert.equal(formBoundary(undefined), undefined);
});
