/**
 * What a script's output may put in the server's log: its console lines, what workerd prints about
 * its requests (a refused fetch, an uncaught error) and the exceptions it throws. A script decides
 * how much of that there is, so each script gets a token bucket of log bytes (SCRIPT_OUTPUT_LIMITS):
 * lines past it are dropped and counted, and one line per period says how many. Tails are not
 * affected: their events reach the tail socket by another path (tail-sink.ts).
 */
import { systemClock, type Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/log.ts';

export interface ScriptOutputLimits {
  /** A line longer than this (bytes of UTF-8) is cut to it; the rest is counted, never held in memory. */
  maxLineBytes: number;
  /** A logged line costs its bytes as logged (JSON-escaped) plus this, for the record's own fields. */
  lineOverheadBytes: number;
  /** Log bytes a script may spend at once (the bucket's size)... */
  burstBytes: number;
  /** ...and the rate at which it refills. */
  bytesPerSecond: number;
  /** Dropped lines are summed up in one line this long after the first of them. */
  summaryPeriodMs: number;
}

/**
 * 256 KiB at once, then 16 KiB/s (about 125 short lines a second) per script: an honest script's
 * occasional lines always fit; a script logging 20,000 lines of 1 KB in one request puts about
 * 300 KB in the log, not 22 MB. Tails see every line (within their own bounds).
 */
export const SCRIPT_OUTPUT_LIMITS: ScriptOutputLimits = {
  maxLineBytes: 4096,
  lineOverheadBytes: 128,
  burstBytes: 256 * 1024,
  bytesPerSecond: 16 * 1024,
  summaryPeriodMs: 10_000,
};

/** Runs `run` in `ms`; answers a function that cancels it. */
export type Schedule = (run: () => void, ms: number) => () => void;

const realTimer: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export interface ScriptOutputLogOptions {
  logger: Logger;
  /** The script; null for what an account's workerd process prints that no script's console marks claim (output-router.ts). */
  scriptName: string | null;
  /** The script's account (null: none, as `edgeport dev` before any account exists). */
  accountId: string | null;
  limits?: ScriptOutputLimits;
  clock?: Clock;
  /** The timer that ends a summary period (tests give one they run themselves). */
  schedule?: Schedule;
}

/** A script's failure as the entry module reports it. */
export interface ScriptException {
  message?: string | undefined;
  stack?: string | undefined;
  passThrough?: boolean | undefined;
}

export class ScriptOutputLog {
  readonly #logger: Logger;
  readonly #script: string | undefined;
  readonly #account: string | undefined;
  readonly #limits: ScriptOutputLimits;
  readonly #clock: Clock;
  readonly #schedule: Schedule;
  #tokens: number;
  #refilledAt: number;
  /** Lines dropped since `#droppingSince`, and the bytes the script wrote in them. */
  #dropped = { lines: 0, bytes: 0 };
  #droppingSince = 0;
  #cancelSummary: (() => void) | undefined;

  constructor(options: ScriptOutputLogOptions) {
    this.#logger = options.logger;
    this.#script = options.scriptName ?? undefined;
    this.#account = options.accountId ?? undefined;
    this.#limits = options.limits ?? SCRIPT_OUTPUT_LIMITS;
    this.#clock = options.clock ?? systemClock;
    this.#schedule = options.schedule ?? realTimer;
    this.#tokens = this.#limits.burstBytes;
    this.#refilledAt = this.#clock.now();
  }

  get maxLineBytes(): number {
    return this.#limits.maxLineBytes;
  }

  /**
   * A line workerd printed: on stdout the script's console.log, on stderr its console.error and
   * what workerd says about its requests. `cutBytes`: how much of the line was cut off already.
   */
  output(stream: 'stdout' | 'stderr', line: string, cutBytes: number): void {
    const level = stream === 'stdout' ? 'info' : 'warn';
    if (!this.#logger.isLevelEnabled(level)) return;
    if (!this.#hasRoom()) return this.#drop(Buffer.byteLength(line) + cutBytes);
    const { text, cut } = this.#capped(line, cutBytes);
    this.#spend(text);
    const fields = { script: this.#script, account: this.#account, output: text, cutBytes: cut || undefined };
    if (stream === 'stdout') this.#logger.info(fields, 'Script output.');
    else this.#logger.warn(fields, 'Script runtime output.');
  }

  /** An exception the script threw (answered `answer`): its message and stack are script output too. */
  exception(failure: ScriptException, answer: number): void {
    if (!this.#logger.isLevelEnabled('error')) return;
    if (!this.#hasRoom()) return this.#drop(Buffer.byteLength(failure.message ?? '') + Buffer.byteLength(failure.stack ?? ''));
    const message = this.#capped(failure.message ?? '', 0);
    const stack = this.#capped(failure.stack ?? '', 0);
    this.#spend(message.text + stack.text);
    this.#logger.error(
      {
        script: this.#script,
        account: this.#account,
        error: message.text,
        stack: stack.text || undefined,
        cutBytes: message.cut + stack.cut || undefined,
        answer,
        passThrough: failure.passThrough || undefined,
      },
      'Script threw an exception.',
    );
  }

  /** Logs the summary of lines dropped so far, if any (the script stops). */
  close(): void {
    this.#summarize();
  }

  /** Refills the bucket; true while any is left (a line may take it into debt: the next ones wait that out). */
  #hasRoom(): boolean {
    const now = this.#clock.now();
    const { burstBytes, bytesPerSecond } = this.#limits;
    this.#tokens = Math.min(burstBytes, this.#tokens + (Math.max(0, now - this.#refilledAt) * bytesPerSecond) / 1000);
    this.#refilledAt = now;
    return this.#tokens > 0;
  }

  /** Takes what `logged` costs in the log: its bytes escaped as JSON (a control character takes 6 there), and the record's own. */
  #spend(logged: string): void {
    this.#tokens -= Buffer.byteLength(JSON.stringify(logged)) + this.#limits.lineOverheadBytes;
  }

  /** Counts a dropped line of `written` bytes; the first of a period sets the period's summary going. */
  #drop(written: number): void {
    if (this.#dropped.lines === 0) {
      this.#droppingSince = this.#clock.now();
      this.#cancelSummary = this.#schedule(() => this.#summarize(), this.#limits.summaryPeriodMs);
    }
    this.#dropped.lines++;
    this.#dropped.bytes += written;
  }

  #summarize(): void {
    this.#cancelSummary?.();
    this.#cancelSummary = undefined;
    const { lines, bytes } = this.#dropped;
    if (lines === 0) return;
    this.#dropped = { lines: 0, bytes: 0 };
    const periodMs = Math.max(0, this.#clock.now() - this.#droppingSince);
    const who =
      this.#script === undefined
        ? `workerd of ${this.#account === undefined ? 'scripts of no account' : `account ${this.#account}`}`
        : this.#account === undefined
          ? this.#script
          : `${this.#account}/${this.#script}`;
    this.#logger.warn(
      { script: this.#script, account: this.#account, droppedLines: lines, droppedBytes: bytes, periodMs },
      `${this.#script === undefined ? '' : 'Script '}${who}: dropped ${COUNT.format(lines)} lines of output (${megabytes(bytes)}) over its log limit in the last ${seconds(periodMs)}.`,
    );
  }

  /** `line` within maxLineBytes (lines from workerd are already; an exception's message may not be). */
  #capped(line: string, cutBytes: number): { text: string; cut: number } {
    const max = this.#limits.maxLineBytes;
    if (line.length * 3 <= max) return { text: line, cut: cutBytes };
    const bytes = Buffer.from(line, 'utf8');
    if (bytes.length <= max) return { text: line, cut: cutBytes };
    let end = max;
    while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
    return { text: bytes.subarray(0, end).toString('utf8'), cut: cutBytes + bytes.length - end };
  }
}

const COUNT = new Intl.NumberFormat('en-US');

function megabytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

function seconds(ms: number): string {
  return `${Math.max(1, Math.round(ms / 1000))} s`;
}
