/** Log lines: JSON on stderr for programs, short readable lines for a terminal; never on stdout. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { prettyLogLine } from '../../src/core/log.ts';

test('a JSON line reads as time, level, message and key=value fields; an error shows its stack only at level error', { timeout: 5_000 }, () => {
  const time = new Date(2026, 10, 25, 13, 4, 31).getTime();
  assert.equal(
    prettyLogLine(`${JSON.stringify({ level: 40, time, listener: 'edge', refused: { a: 1 }, msg: 'Listener refused connections.' })}\n`),
    '13:04:31 WARN  Listener refused connections. listener=edge refused={"a":1}\n',
  );
  assert.equal(prettyLogLine(JSON.stringify({ level: 30, time, path: '/tmp/a b', msg: 'Removed.' })), '13:04:31 INFO  Removed. path="/tmp/a b"\n');
  const err = { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x (y.ts:1:1)' };
  assert.equal(prettyLogLine(JSON.stringify({ level: 40, time, err, msg: 'Retrying.' })), '13:04:31 WARN  Retrying. error="Error: boom"\n');
  assert.equal(prettyLogLine(JSON.stringify({ level: 50, time, err, msg: 'Failed.' })), '13:04:31 ERROR Failed. error="Error: boom"\n    at x (y.ts:1:1)\n');
  assert.equal(prettyLogLine('not json'), 'not json\n');
});

test('a logger writes JSON lines to stderr, nothing to stdout', { timeout: 20_000 }, async () => {
  const script = `import { createLogger } from ${JSON.stringify(new URL('../../src/core/log.ts', import.meta.url).href)};
    createLogger('info').warn({ n: 1 }, 'Something happened.');`;
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 15_000 });
  assert.equal(stdout, '');
  const line = JSON.parse(stderr.trim()) as Record<string, unknown>;
  assert.equal(line.msg, 'Something happened.');
  assert.equal(line.level, 40);
  assert.equal(line.n, 1);
});
