/**
 * A script's output in the server log (injected clock and timer): a bucket of bytes per script, a
 * summary line of what was dropped once per period and when the script stops, lines cut to the
 * cap; and, with the line splitter in front, every line either logged or counted in a summary.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { FakeClock } from '../../../src/core/clock.ts';
import { LineSplitter } from '../../../src/runtime/workerd/output-lines.ts';
import { ScriptOutputLog, type Schedule, type ScriptOutputLimits } from '../../../src/runtime/workerd/script-output-log.ts';

interface LogRecord {
  level: number;
  msg: string;
  script?: string;
  account?: string;
  output?: string;
  error?: string;
  stack?: string;
  cutBytes?: number;
  droppedLines?: number;
  droppedBytes?: number;
  periodMs?: number;
}

const LIMITS: ScriptOutputLimits = { maxLineBytes: 100, lineOverheadBytes: 20, burstBytes: 1_000, bytesPerSecond: 100, summaryPeriodMs: 10_000 };

/** A timer run by the test: `due()` runs what is due at the clock's time. */
function manualTimers(clock: FakeClock): { schedule: Schedule; due(): void; pending(): number } {
  const timers: Array<{ at: number; run: () => void; cancelled: boolean }> = [];
  return {
    schedule: (run, ms) => {
      const timer = { at: clock.now() + ms, run, cancelled: false };
      timers.push(timer);
      return () => {
        timer.cancelled = true;
      };
    },
    due: () => {
      for (const timer of timers.splice(0)) {
        if (timer.cancelled) continue;
        if (timer.at <= clock.now()) timer.run();
        else timers.push(timer);
      }
    },
    pending: () => timers.filter((timer) => !timer.cancelled).length,
  };
}

function setUp(level = 'info', limits = LIMITS) {
  const clock = new FakeClock();
  const timers = manualTimers(clock);
  const records: LogRecord[] = [];
  const logger = pino({ level, base: undefined }, { write: (line: string) => records.push(JSON.parse(line) as LogRecord) });
  const log = new ScriptOutputLog({ logger, scriptName: 'noisy', accountId: 'acct', limits, clock, schedule: timers.schedule });
  return { clock, timers, records, log };
}

test('a burst of lines is logged, the rest dropped and summed up once the period ends', { timeout: 30_000 }, () => {
  const { clock, timers, records, log } = setUp();
  // Each line: 12 bytes as JSON ("line 00000" in quotes) + 20 = 32; 1,000 bytes admit 32 lines (the last into debt).
  for (let i = 0; i < 1_000; i++) log.output('stdout', `line ${String(i).padStart(5, '0')}`, 0);
  const logged = records.filter((record) => record.msg === 'Script output.');
  assert.equal(logged.length, 32);
  assert.deepEqual(
    { ...logged[0], time: undefined },
    { level: 30, time: undefined, script: 'noisy', account: 'acct', output: 'line 00000', msg: 'Script output.' },
  );
  assert.equal(timers.pending(), 1);
  clock.advance(9_999);
  timers.due();
  assert.equal(records.filter((record) => record.droppedLines !== undefined).length, 0, 'not before the period ends');
  // The bucket refilled 999.9 bytes meanwhile: the next lines are logged again.
  log.output('stderr', 'an error', 0);
  assert.equal(records.at(-1)!.msg, 'Script runtime output.');
  assert.equal(records.at(-1)!.level, 40);
  clock.advance(1);
  timers.due();
  const summary = records.at(-1)!;
  assert.deepEqual(
    { ...summary, time: undefined },
    {
      level: 40,
      time: undefined,
      script: 'noisy',
      account: 'acct',
      droppedLines: 968,
      droppedBytes: 968 * 10,
      periodMs: 10_000,
      msg: 'Script acct/noisy: dropped 968 lines of output (9.7 kB) over its log limit in the last 10 s.',
    },
  );
  // A new period starts with the next drop only.
  assert.equal(timers.pending(), 0);
  log.close();
  assert.equal(records.at(-1), summary, 'nothing dropped since: no summary at close');
});

test('close() sums up what was dropped since the last summary', { timeout: 30_000 }, () => {
  const { clock, timers, records, log } = setUp();
  for (let i = 0; i < 100; i++) log.output('stdout', 'x'.repeat(98), 2);
  clock.advance(3_000);
  log.close();
  const summary = records.at(-1)!;
  assert.equal(summary.droppedLines, 100 - 9);
  assert.equal(summary.droppedBytes, (100 - 9) * 100);
  assert.equal(summary.msg, 'Script acct/noisy: dropped 91 lines of output (9.1 kB) over its log limit in the last 3 s.');
  assert.equal(timers.pending(), 0, 'the period timer is cancelled');
  timers.due();
  assert.equal(records.at(-1), summary);
});

test('lines over the cap are cut at a character boundary, with the bytes cut counted; exceptions too', { timeout: 30_000 }, () => {
  const { records, log } = setUp();
  log.output('stdout', `${'a'.repeat(99)}€€`, 0);
  assert.deepEqual([records[0]!.output, records[0]!.cutBytes], ['a'.repeat(99), 6]);
  log.exception({ message: `Error: ${'m'.repeat(200)}`, stack: 's'.repeat(50), passThrough: false }, 500);
  const exception = records[1]!;
  assert.equal(exception.msg, 'Script threw an exception.');
  assert.equal(exception.level, 50);
  assert.equal(exception.error, `Error: ${'m'.repeat(93)}`);
  assert.equal(exception.stack, 's'.repeat(50));
  assert.equal(exception.cutBytes, 107);
});

test('exceptions share the bucket, and are counted when dropped', { timeout: 30_000 }, () => {
  const { clock, timers, records, log } = setUp();
  for (let i = 0; i < 50; i++) log.exception({ message: 'Error: boom', stack: 'at here' }, 500);
  const logged = records.filter((record) => record.msg === 'Script threw an exception.').length;
  assert.ok(logged > 0 && logged < 50, String(logged));
  clock.advance(10_000);
  timers.due();
  assert.equal(records.at(-1)!.droppedLines, 50 - logged);
  assert.equal(records.at(-1)!.droppedBytes, (50 - logged) * 'Error: boomat here'.length);
});

test('lines of a level the logger does not write cost nothing', { timeout: 30_000 }, () => {
  const { records, log } = setUp('warn');
  for (let i = 0; i < 10_000; i++) log.output('stdout', 'x'.repeat(100), 0);
  log.output('stderr', 'seen', 0);
  log.close();
  assert.deepEqual(
    records.map(({ msg, output }) => ({ msg, output })),
    [{ msg: 'Script runtime output.', output: 'seen' }],
  );
});

test(
  'with the splitter in front, however output is chunked and timed, every line is logged or counted, and the log stays within the bucket',
  { timeout: 30_000 },
  () => {
    const limits: ScriptOutputLimits = { maxLineBytes: 40, lineOverheadBytes: 10, burstBytes: 300, bytesPerSecond: 50, summaryPeriodMs: 1_000 };
    const lineOf = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 120 }), fc.constantFrom('', 'y'.repeat(500))).map((text) => text.replace(/[\r\n]/g, ' '));
    const step = fc.record({
      lines: fc.array(lineOf, { maxLength: 12 }),
      cuts: fc.array(fc.nat(), { maxLength: 6 }),
      waitMs: fc.integer({ min: 0, max: 3_000 }),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 15 }), (steps) => {
        const { clock, timers, records, log } = setUp('info', limits);
        const splitter = new LineSplitter(limits.maxLineBytes, (line, cutBytes) => log.output('stdout', line, cutBytes));
        let lines = 0;
        let bytes = 0;
        for (const { lines: stepLines, cuts, waitMs } of steps) {
          const text = Buffer.from(stepLines.map((line) => `${line}\n`).join(''), 'utf8');
          lines += stepLines.length;
          bytes += text.length - stepLines.length;
          const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
          let from = 0;
          for (const point of [...points, text.length]) {
            splitter.push(text.subarray(from, point));
            from = point;
          }
          clock.advance(waitMs);
          timers.due();
        }
        splitter.end();
        log.close();
        const logged = records.filter((record) => record.msg === 'Script output.');
        const summaries = records.filter((record) => record.droppedLines !== undefined);
        for (const record of logged) assert.ok(Buffer.byteLength(record.output!) <= limits.maxLineBytes);
        assert.equal(logged.length + summaries.reduce((sum, record) => sum + record.droppedLines!, 0), lines, 'every line logged or counted');
        const loggedBytes = logged.reduce((sum, record) => sum + Buffer.byteLength(record.output!) + (record.cutBytes ?? 0), 0);
        assert.equal(loggedBytes + summaries.reduce((sum, record) => sum + record.droppedBytes!, 0), bytes, 'every byte logged or counted');
        // What the log got: at most the bucket, its refill over the time that passed, and one line of debt.
        const spent = logged.reduce((sum, record) => sum + Buffer.byteLength(JSON.stringify(record.output)) + limits.lineOverheadBytes, 0);
        const elapsed = steps.reduce((sum, { waitMs }) => sum + waitMs, 0);
        assert.ok(
          spent <= limits.burstBytes + (elapsed * limits.bytesPerSecond) / 1000 + 6 * limits.maxLineBytes + 2 + limits.lineOverheadBytes,
          `${spent} bytes in ${elapsed} ms`,
        );
        // A summary at most once per period, each saying how many.
        for (const summary of summaries) assert.ok(summary.droppedLines! > 0);
      }),
      { numRuns: 300 },
    );
  },
);
