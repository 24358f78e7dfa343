/**
 * The README and then every page it links, in its order, run as one reader would: one shell
 * session, against the one server the README starts (example-session.ts). One test per page, each
 * with its own time limit; a page that fails ends the session, and the pages after it fail as not
 * run (each builds on the state the earlier ones left, as a reader's would). Last, the reader
 * starts over as the README says and runs the README again: nothing of the first server's
 * (its account id, which wrangler would remember) may break the second.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { readingOrder } from './documents.ts';
import { DocsSession, ROOT } from './example-session.ts';

/** The tests below, in the order they are declared (and run). */
const PAGES = [
  'README.md',
  'docs/management-api.md',
  'docs/edge-and-logs.md',
  'docs/gateway.md',
  'docs/object-store.md',
  'docs/s3.md',
  'docs/configuration.md',
  'docs/security.md',
  'docs/operations.md',
  'docs/dashboard.md',
  'docs/errors.md',
  'docs/performance.md',
  'docs/choices.md',
  'docs/architecture.md',
  'docs/development.md',
];

let session: DocsSession | undefined;
let next = 0;

before(
  async () => {
    session = await DocsSession.open();
  },
  { timeout: 30_000 },
);

after(
  async () => {
    await session?.close();
  },
  { timeout: 15_000 },
);

async function runPage(t: TestContext, page: string): Promise<void> {
  assert.equal(page, PAGES[next++], "the tests run the pages in PAGES's order");
  assert.ok(session, 'the session opened');
  const started = performance.now();
  const run = await session.runDocument(page, t.signal);
  t.diagnostic(
    `${run.ran} run, ${run.written} written, ${run.checked} checked in ${((performance.now() - started) / 1000).toFixed(1)} s` +
      run.notRun.map((n) => `; line ${n.line} not run: ${n.why}`).join(''),
  );
}

test('the pages run below are the README and every page it links, in the order it links them', { timeout: 5_000 }, () => {
  assert.deepEqual(PAGES, readingOrder(readFileSync(join(ROOT, 'README.md'), 'utf8')));
});

test('README.md: every example runs as written, and its first block puts edgeport and wrangler on the PATH', { timeout: 120_000 }, async (t) => {
  assert.ok(session);
  const before = await session.run('type -P edgeport || echo none; type -P wrangler || echo none');
  assert.deepEqual(before.output.trim().split('\n'), ['none', 'none'], 'neither edgeport nor wrangler is on the PATH before the README puts them there');
  await runPage(t, 'README.md');
  const after = await session.run('type -P edgeport; type -P wrangler');
  assert.deepEqual(
    after.output.trim().split('\n'),
    [join(session.work, 'bin', 'edgeport'), join(session.work, 'node_modules', '.bin', 'wrangler')],
    "the README's `export PATH` line put the clone's bin/edgeport and node_modules/.bin/wrangler on the PATH",
  );
});

test('docs/management-api.md runs as written after the README', { timeout: 90_000 }, (t) => runPage(t, 'docs/management-api.md'));
test('docs/edge-and-logs.md runs as written after the pages before it', { timeout: 40_000 }, (t) => runPage(t, 'docs/edge-and-logs.md'));
test('docs/gateway.md runs as written after the pages before it', { timeout: 30_000 }, (t) => runPage(t, 'docs/gateway.md'));
test('docs/object-store.md runs as written after the pages before it', { timeout: 45_000 }, (t) => runPage(t, 'docs/object-store.md'));
test('docs/s3.md runs as written after the pages before it', { timeout: 40_000 }, (t) => runPage(t, 'docs/s3.md'));
test('docs/configuration.md runs as written after the pages before it', { timeout: 5_000 }, (t) => runPage(t, 'docs/configuration.md'));
test('docs/security.md runs as written after the pages before it', { timeout: 5_000 }, (t) => runPage(t, 'docs/security.md'));
test('docs/operations.md runs as written after the pages before it', { timeout: 90_000 }, (t) => runPage(t, 'docs/operations.md'));
test('docs/dashboard.md runs as written after the pages before it', { timeout: 30_000 }, (t) => runPage(t, 'docs/dashboard.md'));
test('docs/errors.md runs as written after the pages before it', { timeout: 5_000 }, (t) => runPage(t, 'docs/errors.md'));
test('docs/performance.md runs as written after the pages before it', { timeout: 5_000 }, (t) => runPage(t, 'docs/performance.md'));
test('docs/choices.md runs as written after the pages before it', { timeout: 5_000 }, (t) => runPage(t, 'docs/choices.md'));
test('docs/architecture.md runs as written after the pages before it', { timeout: 5_000 }, (t) => runPage(t, 'docs/architecture.md'));
test('docs/development.md runs as written after the pages before it', { timeout: 5_000 }, (t) => runPage(t, 'docs/development.md'));

/** What the README says starting over is, after stopping the server and the tour's `edgeport dev`. */
const START_OVER = 'rm -rf .edgeport .edgeport-dev';

test('README.md runs again as written after starting over as it says (a new server, a new account id)', { timeout: 180_000 }, async (t) => {
  assert.ok(session);
  assert.ok(readFileSync(join(ROOT, 'README.md'), 'utf8').includes(`\`${START_OVER}\``), `the README says to start over with \`${START_OVER}\``);
  const first = await session.run('echo "$ACCOUNT"');
  await session.run(`__stop_servers; ${START_OVER}`);
  const started = performance.now();
  const run = await session.runDocument('README.md', t.signal);
  const second = await session.run('echo "$ACCOUNT"');
  assert.notEqual(second.output.trim(), first.output.trim(), 'the server started over has an account of its own');
  t.diagnostic(`${run.ran} run, ${run.written} written, ${run.checked} checked in ${((performance.now() - started) / 1000).toFixed(1)} s`);
});
