/**
 * `edgeport/store`: openStoreBucket, a bucket for a user's own tests. Imported by package name from
 * a project that has edgeport installed (node_modules/edgeport, with tsx beside it as npm hoists
 * it), run with plain node and with tsx; and in-process for the options, the data dir and its lock.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../../src/core/clock.ts';
import { openControlStore } from '../../src/db/open-control-store.ts';
import type * as Declared from '../../src/store/entry.js';
import type * as Real from '../../src/store/index.ts';
import { openStoreBucket, StoreBucket, type LocalStoreBucket, type OpenStoreBucketOptions } from '../../src/store/index.ts';
import { outputOf, spawnNode, stopChild } from '../helpers/child-processes.ts';
import { onTestEnd } from '../helpers/cleanup.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Compiles (npm run typecheck) only while the implementation keeps every promise of entry.d.ts,
 * the standalone types users' TypeScript reads; option types must agree both ways.
 */
type Satisfies<T extends U, U> = [T, U];
export type _DeclarationsHold = [
  Satisfies<typeof Real.openStoreBucket, typeof Declared.openStoreBucket>,
  Satisfies<Real.LocalStoreBucket, Declared.LocalStoreBucket>,
  Satisfies<Real.StoreBucket, Declared.StoreBucket>,
  Satisfies<Real.HeadResult, Declared.HeadResult>,
  Satisfies<Real.GetResult, Declared.GetResult>,
  Satisfies<Real.OpenStoreBucketOptions, Declared.OpenStoreBucketOptions>,
  Satisfies<Declared.OpenStoreBucketOptions, Real.OpenStoreBucketOptions>,
  Satisfies<Real.StorePutOptions, Declared.StorePutOptions>,
  Satisfies<Declared.StorePutOptions, Real.StorePutOptions>,
  Satisfies<Real.StoreGetOptions, Declared.StoreGetOptions>,
  Satisfies<Declared.StoreGetOptions, Real.StoreGetOptions>,
  Satisfies<Real.StoreListOptions, Declared.StoreListOptions>,
  Satisfies<Declared.StoreListOptions, Real.StoreListOptions>,
  Satisfies<Real.StoreMultipartOptions, Declared.StoreMultipartOptions>,
  Satisfies<Declared.StoreMultipartOptions, Real.StoreMultipartOptions>,
  Satisfies<Real.StoreObjectBody, Declared.StoreObjectBody>,
  Satisfies<Real.StoreObjects, Declared.StoreObjects>,
  Satisfies<Real.StoreMultipartUpload, Declared.StoreMultipartUpload>,
];

/** A user's project with edgeport installed: node_modules/edgeport is this checkout, and tsx (its dependency) is hoisted beside it. */
function userProject(t: TestContext): string {
  const project = tempDir(t, 'edgeport-user-');
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules', 'edgeport'));
  symlinkSync(join(ROOT, 'node_modules', 'tsx'), join(project, 'node_modules', 'tsx'));
  writeFileSync(join(project, 'package.json'), '{ "name": "my-app", "private": true, "type": "module" }\n');
  return project;
}

/** Runs `node ...args` in `cwd` to its end; the process is stopped with the test if it is still running. */
async function runNode(t: TestContext, cwd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnNode(args, { cwd });
  onTestEnd(t, () => stopChild(child));
  return outputOf(child);
}

const USER_TEST = `
const { openStoreBucket, StoreBucket } = await import('edgeport/store');
const bucket = await openStoreBucket({ bucket: 'photos' });
const stored = await bucket.put('cats/tom.txt', 'meow', { httpMetadata: { contentType: 'text/plain' }, customMetadata: { by: 'me' } });
const read = await bucket.get('cats/tom.txt');
const bare = (await bucket.list()).objects[0];
const full = (await bucket.list({ include: ['httpMetadata', 'customMetadata'] })).objects[0];
const headers = new Headers();
bare.writeHttpMetadata(headers);
const out = {
  isStoreBucket: bucket instanceof StoreBucket, etag: stored.etag, text: await read.text(),
  bare: [bare.key, bare.httpMetadata, bare.customMetadata, [...headers]],
  full: [full.key, full.httpMetadata, full.customMetadata],
  missing: await bucket.get('nope'),
};
await bucket.close();
out.removed = !(await import('node:fs')).existsSync(bucket.dataDir);
console.log(JSON.stringify(out));
`;

const EXPECTED = {
  isStoreBucket: true,
  etag: '4a4be40c96ac6314e91d93f38043a634',
  text: 'meow',
  bare: ['cats/tom.txt', {}, {}, []],
  full: ['cats/tom.txt', { contentType: 'text/plain' }, { by: 'me' }],
  missing: null,
  removed: true,
};

test('edgeport/store by package name, with plain node', { timeout: 60_000 }, async (t) => {
  const project = userProject(t);
  writeFileSync(join(project, 'bucket.test.mjs'), USER_TEST);
  const run = await runNode(t, project, ['bucket.test.mjs']);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), EXPECTED);
});

test('edgeport/store by package name, from TypeScript: type-checked by tsc, run with tsx', { timeout: 120_000 }, async (t) => {
  const project = userProject(t);
  // A strict project of the user's, without allowImportingTsExtensions: it reads entry.d.ts only.
  symlinkSync(join(ROOT, 'node_modules', 'typescript'), join(project, 'node_modules', 'typescript'));
  mkdirSync(join(project, 'node_modules', '@types'));
  symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'));
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2023', 'dom', 'esnext.disposable'],
        strict: true,
        noEmit: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        types: ['node'],
      },
      files: ['typed.mts'],
    }),
  );
  writeFileSync(
    join(project, 'typed.mts'),
    `import { openStoreBucket, StoreBucket, type StoreObject, type StoreObjectBody } from 'edgeport/store';
await using bucket = await openStoreBucket({ bucket: 'photos', compatibilityFlags: ['store_list_honor_include'] });
const stored: StoreObject | null = await bucket.put('k', 'v', { httpMetadata: { contentType: 'text/plain' } });
const read = await bucket.get('k', { range: { offset: 1 } });
const text: string | undefined = read && 'body' in read ? await (read as StoreObjectBody).text() : undefined;
const type: string | undefined = (await bucket.list({ include: ['httpMetadata'] })).objects[0]?.httpMetadata.contentType;
const isBucket: boolean = bucket instanceof StoreBucket;
const dir: string = bucket.dataDir;
console.log(stored?.etag, text, type, isBucket, dir.length > 0);
// @ts-expect-error: the options have no such field
await openStoreBucket({ bucket: 'photos', dataDirectory: 'data' });
`,
  );
  const checked = await runNode(t, project, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', '.']);
  assert.equal(checked.code, 0, checked.stdout + checked.stderr);

  writeFileSync(
    join(project, 'bucket.test.mts'),
    `import type { StoreObject, LocalStoreBucket } from 'edgeport/store';\nconst keys = (objects: StoreObject[]) => objects.map((o) => o.key);\n${USER_TEST}
const again: LocalStoreBucket = await openStoreBucket({ bucket: 'photos', dataDir: 'data' });
await again.put('a', 'x');
console.log(JSON.stringify(keys((await again.list()).objects)));
await again.close();
`,
  );
  const run = await runNode(t, project, ['--import', 'tsx', 'bucket.test.mts']);
  assert.equal(run.code, 0, run.stderr);
  const [first, second] = run.stdout.trim().split('\n');
  assert.deepEqual(JSON.parse(first!), EXPECTED);
  assert.deepEqual(JSON.parse(second!), ['a']);
  assert.ok(existsSync(join(project, 'data', 'metadata.sqlite')), 'a data dir given is relative to the working directory, and kept');
});

async function open(t: TestContext, options: OpenStoreBucketOptions): Promise<LocalStoreBucket> {
  const bucket = await openStoreBucket(options);
  onTestEnd(t, () => bucket.close());
  return bucket;
}

test('a data dir keeps its objects across opens, is locked while open, and close() is idempotent', { timeout: 30_000 }, async (t) => {
  const dataDir = tempDir(t);
  const first = await open(t, { bucket: 'photos', dataDir });
  assert.ok(first instanceof StoreBucket);
  assert.equal(first.dataDir, dataDir);
  await first.put('k', 'kept');
  await assert.rejects(openStoreBucket({ bucket: 'photos', dataDir }), (error: Error) =>
    /^The data dir .* is in use by another edgeport process.*the dataDir option of openStoreBucket\.$/.test(error.message),
  );
  await first.close();
  await first.close();
  await assert.rejects(first.get('k'), { message: 'get: this bucket was closed; open it again with openStoreBucket().' });
  await assert.rejects(first.put('k', 'x'), { message: 'put: this bucket was closed; open it again with openStoreBucket().' });

  const second = await open(t, { bucket: 'photos', dataDir });
  assert.equal(await ((await second.get('k')) as { text(): Promise<string> }).text(), 'kept');
  const other = await open(t, { bucket: 'other', dataDir: tempDir(t) });
  assert.equal(await other.get('k'), null, 'another data dir is another store');
});

test('a data dir keeps metadata, listings, deletions and open multipart uploads across opens', { timeout: 30_000 }, async (t) => {
  const dataDir = tempDir(t);
  const first = await open(t, { bucket: 'photos', dataDir });
  await first.put('kept', 'value', { httpMetadata: { contentType: 'text/plain' }, customMetadata: { a: 'b' } });
  await first.put('gone', 'x');
  const upload = await first.createMultipartUpload('multipart');
  const part = await upload.uploadPart(1, 'part one');
  await first.close();

  const second = await open(t, { bucket: 'photos', dataDir });
  const head = await second.head('kept');
  assert.equal(head?.size, 5);
  assert.deepEqual([head?.httpMetadata, head?.customMetadata], [{ contentType: 'text/plain' }, { a: 'b' }]);
  assert.deepEqual(
    (await second.list()).objects.map((o) => [o.key, o.size]),
    [
      ['gone', 1],
      ['kept', 5],
    ],
  );
  await second.delete('gone');
  // The upload begun before the reopen is resumed by its id and completed with the part uploaded then.
  const resumed = second.resumeMultipartUpload('multipart', upload.uploadId);
  assert.equal((await resumed.complete([part])).size, 8);
  await second.close();

  const third = await open(t, { bucket: 'photos', dataDir });
  assert.equal(await third.head('gone'), null);
  assert.deepEqual(
    (await third.list()).objects.map((o) => o.key),
    ['kept', 'multipart'],
  );
  assert.equal(await ((await third.get('multipart')) as { text(): Promise<string> }).text(), 'part one');
});

test('without a data dir: a temporary one, removed by close(), fresh for each bucket', { timeout: 30_000 }, async (t) => {
  const a = await open(t, { bucket: 'photos' });
  const b = await open(t, { bucket: 'photos' });
  assert.notEqual(a.dataDir, b.dataDir);
  await a.put('k', 'x');
  assert.equal(await b.head('k'), null);
  assert.ok(existsSync(a.dataDir));
  await a.close();
  assert.equal(existsSync(a.dataDir), false);
});

test("account: a bucket of one account is not another's; by default the data dir's first account, as edgeport dev", { timeout: 30_000 }, async (t) => {
  const dataDir = tempDir(t);
  const [alice, bob] = ['a'.repeat(32), 'b'.repeat(32)];
  const control = await openControlStore({ dataDir, clock: systemClock });
  try {
    await control.createAccount({ id: alice, email: 'alice@example.test', name: 'alice', keyHash: 'x', created: 1 });
    await control.createAccount({ id: bob, email: 'bob@example.test', name: 'bob', keyHash: 'x', created: 2 });
  } finally {
    await control.close();
  }
  const byDefault = await open(t, { bucket: 'photos', dataDir });
  await byDefault.put('k', 'alice');
  await byDefault.close();
  const asAlice = await open(t, { bucket: 'photos', dataDir, account: alice });
  assert.equal(await ((await asAlice.get('k')) as { text(): Promise<string> }).text(), 'alice');
  await asAlice.close();
  const asBob = await open(t, { bucket: 'photos', dataDir, account: bob });
  assert.equal(await asBob.head('k'), null, "bob's photos is another bucket");
  await asBob.close();
  const unowned = await open(t, { bucket: 'photos', dataDir, account: null });
  assert.equal(await unowned.head('k'), null);
});

test('compatibility rules apply as in a script config', { timeout: 30_000 }, async (t) => {
  const dataDir = tempDir(t);
  const now = await open(t, { bucket: 'photos', dataDir });
  await now.put('k', 'x', { httpMetadata: { contentType: 't/x' } });
  assert.deepEqual((await now.list()).objects[0]!.httpMetadata, {}, 'default: today, so list honours include');
  await now.close();
  const old = await open(t, { bucket: 'photos', dataDir, compatibilityDate: '2022-01-01' });
  assert.deepEqual((await old.list()).objects[0]!.httpMetadata, { contentType: 't/x' }, 'before 2022-08-04 include is ignored');
  await old.close();
  const flagged = await open(t, { bucket: 'photos', dataDir, compatibilityDate: '2022-01-01', compatibilityFlags: ['store_list_honor_include'] });
  assert.deepEqual((await flagged.list()).objects[0]!.httpMetadata, {});
});

test('bad options are refused with what to fix, before anything is written', { timeout: 30_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'never');
  const cases: Array<[unknown, RegExp]> = [
    [{}, /`bucket` is required/],
    [{ bucket: 'No_Such' }, /`bucket` "No_Such" must be 3-63 characters of a-z, 0-9 and '-'/],
    [{ bucket: 'photos', dataDir: '' }, /`dataDir` must be a directory path/],
    [{ bucket: 'photos', account: 'alice' }, /`account` must be an account id \(32 hex digits\), or null/],
    [{ bucket: 'photos', compatibilityDate: '2022-13-01' }, /`compatibilityDate` 2022-13-01 is not a calendar date/],
    [{ bucket: 'photos', compatibilityDate: '9999-01-01' }, /`compatibilityDate` 9999-01-01 is in the future/],
    [{ bucket: 'photos', compatibilityFlags: ['nope'] }, /unknown compatibility flag\(s\) "nope"/],
    [{ bucket: 'photos', compatibilityFlags: 'store_list_honor_include' }, /`compatibilityFlags` must be an array of strings/],
  ];
  for (const [options, message] of cases) {
    await assert.rejects(
      openStoreBucket({ dataDir, ...(options as object) } as OpenStoreBucketOptions).then((b) => b.close()),
      (error: Error) => error instanceof TypeError && message.test(error.message),
      JSON.stringify(options),
    );
  }
  await assert.rejects(openStoreBucket(undefined as never), {
    name: 'TypeError',
    message: 'openStoreBucket: pass an options object, e.g. { bucket: "photos" }.',
  });
  assert.equal(existsSync(dataDir), false);
});
