/**
 * The real `edgeport` binary explains itself: help for edgeport and each command, the version,
 * "did you mean" for typos (exit 2, then the command's help), and one clear line without a stack
 * for a user's mistake (exit 1): a taken port (naming the flag and the config key), a missing
 * config or script file.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runEdgeport, type CliRun } from '../helpers/edgeport-cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

type Run = CliRun;

function edgeport(args: string[], cwd = ROOT): Promise<Run> {
  return runEdgeport(args, { cwd, env: { EDGEPORT_API_PORT: '' } });
}

/** No stack trace, and none of node:util parseArgs' own sentences. */
function assertNoNodeNoise(run: Run): void {
  assert.doesNotMatch(run.stderr, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(run.stderr, /To specify a positional argument|ERR_PARSE_ARGS/, "not the parser's raw sentence");
}

test("help: edgeport --help, -h, help, and each command's --help answer on stdout with exit 0", { timeout: 90_000 }, async () => {
  const [top, short, word, start, dev, accounts, accountsCreate, helpDev] = await Promise.all([
    edgeport(['--help']),
    edgeport(['-h']),
    edgeport(['help']),
    edgeport(['start', '--help']),
    edgeport(['dev', '--help']),
    edgeport(['accounts', '--help']),
    edgeport(['accounts', 'create', '-h']),
    edgeport(['help', 'dev']),
  ]);
  for (const run of [top, short, word, start, dev, accounts, accountsCreate, helpDev]) {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
  }
  assert.equal(short.stdout, top.stdout);
  assert.equal(word.stdout, top.stdout);
  for (const line of [
    /^ {2}start +Run every service/m,
    /^ {2}dev <script-config> +Serve one script/m,
    /^ {2}accounts create <email> +Make a management API account/m,
    /^ {6}--data-dir DIR +where data is kept; one process at a time \(default: \.\/\.edgeport\)$/m,
    /^ {6}--port N +port; 0 picks a free one \(default: 8787\)$/m,
    /^ {6}--data-dir DIR +where the script's buckets are kept \(default: \.\/\.edgeport-dev\)$/m,
    /^ {2}-v, --version +Print the version\.$/m,
  ]) {
    assert.match(top.stdout, line);
  }
  assert.match(start.stdout, /^Usage: edgeport start \[options\]\n/);
  assert.match(
    start.stdout.replace(/\n {30}/g, ' '),
    /--api-port N +management API and dashboard port; 0 picks a free one \(default: 8081; or \[ports\] api in edgeport\.toml, EDGEPORT_API_PORT\)/,
  );
  assert.match(dev.stdout, /^Usage: edgeport dev <script-config> \[options\]\n/);
  assert.equal(helpDev.stdout, dev.stdout);
  assert.match(accounts.stdout, /^Usage: edgeport accounts <action> \[options\]\n/);
  for (const action of ['create <email>', 'list', 'rotate-key <email>', 'delete <email>', 'quota <email>'])
    assert.ok(accounts.stdout.includes(`  accounts ${action}`), `lists accounts ${action}`);
  assert.match(accountsCreate.stdout, /^Usage: edgeport accounts create <email> \[options\]\n/);
});

test('version: edgeport --version and -v print the package version', { timeout: 30_000 }, async () => {
  for (const run of await Promise.all([edgeport(['--version']), edgeport(['-v'])])) {
    assert.equal(run.code, 0);
    assert.equal(run.stdout, `edgeport ${VERSION}\n`);
  }
});

test('typos get a "did you mean" and the command\'s help, exit 2', { timeout: 60_000 }, async () => {
  const [flag, command, action, devFlag] = await Promise.all([
    edgeport(['start', '--data-dri', 'x']),
    edgeport(['strat']),
    edgeport(['accounts', 'crate', 'a@b.c']),
    edgeport(['dev', 'x.toml', '--prot', '1']),
  ]);
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /^edgeport: Unknown option '--data-dri'\. Did you mean --data-dir\?\n\nUsage: edgeport start \[options\]\n/);
  assert.equal(command.code, 2);
  assert.match(command.stderr, /^edgeport: Unknown command 'strat'\. Did you mean start\?\n\nedgeport \d/);
  assert.equal(action.code, 2);
  assert.match(action.stderr, /^edgeport: Unknown action 'crate' of edgeport accounts\. Did you mean create\?\n\nUsage: edgeport accounts <action>/);
  assert.equal(devFlag.code, 2);
  assert.match(devFlag.stderr, /^edgeport: Unknown option '--prot'\. Did you mean --port\?\n\nUsage: edgeport dev/);
  for (const run of [flag, command, action, devFlag]) {
    assert.equal(run.stdout, '');
    assertNoNodeNoise(run);
  }
});

async function holdPort(t: TestContext): Promise<number> {
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  return (holder.address() as { port: number }).port;
}

test('a port in use names the flag and the config key to change, in one line, exit 1', { timeout: 90_000 }, async (t) => {
  const dir = tempDir(t);
  const taken = await holdPort(t);
  const start = await edgeport([
    'start',
    '--data-dir',
    join(dir, 'data'),
    '--api-port',
    String(taken),
    '--edge-port',
    '0',
    '--gateway-port',
    '0',
    '--s3-port',
    '0',
  ]);
  assert.equal(start.code, 1);
  assert.equal(start.stdout, '');
  assert.equal(
    start.stderr
      .split('\n')
      .filter((line) => line.startsWith('edgeport: '))
      .join('\n'),
    `edgeport: Port ${taken} on 127.0.0.1 (management API) is already in use. Stop what holds it, or pick another port with ` +
      '--api-port N (or [ports] api in edgeport.toml, EDGEPORT_API_PORT); 0 picks a free one.',
  );
  assertNoNodeNoise(start);

  writeFileSync(join(dir, 'hello.mjs'), 'export default { fetch: () => new Response("hi") };\n');
  writeFileSync(join(dir, 'hello.toml'), 'name = "hello"\nmain = "hello.mjs"\ncompatibility_date = "2025-01-01"\n');
  const dev = await edgeport(['dev', join(dir, 'hello.toml'), '--port', String(taken)]);
  assert.equal(dev.code, 1);
  assert.equal(
    dev.stderr,
    `edgeport: Port ${taken} on 127.0.0.1 (edgeport dev) is already in use. Stop what holds it, or pick another port with --port N; 0 picks a free one.\n`,
  );

  // After the failed start the data dir is free again: a start on it works.
  const again = await edgeport([
    'start',
    '--data-dir',
    join(dir, 'data'),
    '--api-port',
    String(taken),
    '--edge-port',
    '0',
    '--gateway-port',
    '0',
    '--s3-port',
    '0',
  ]);
  assert.doesNotMatch(again.stderr, /in use by another edgeport process/);
});

test('a missing config or script file is one line, exit 1', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const [config, script] = await Promise.all([
    edgeport(['start', '--config', join(dir, 'nope.toml'), '--data-dir', join(dir, 'data')]),
    edgeport(['dev', join(dir, 'missing.toml')], dir),
  ]);
  assert.equal(config.code, 1);
  assert.match(config.stderr, /^edgeport: .*nope\.toml does not exist.*\n$/);
  assert.equal(script.code, 1);
  assert.match(script.stderr, /^edgeport: Script config .*missing\.toml cannot be read: ENOENT.*\n$/);
  for (const run of [config, script]) assertNoNodeNoise(run);
});
