/**
 * Whose is each line an account's workerd process prints: its scripts share the process's stdout
 * and stderr, and each has a log budget of its own (script-output-log.ts). Every console call of
 * an isolate is marked (inside/console-marks.ts) with marks made of a tag the server gives the
 * isolate and never shows it: a call that prints one line starts with the `line` mark; one that may
 * print several starts with the `lines` mark and ends with the `end` mark, and the lines between
 * are the isolate's too (up to a line cut at the length limit, whose end mark was cut off).
 * No script's console output can be counted against another script's budget, since no script
 * knows another's marks. The rest is workerd's own (a refused connection, an uncaught error): a
 * line of it goes to the script serving the only request in flight in the process when it is read
 * (the line is most likely about that request), else to the process's own budget.
 */
import { randomBytes } from 'node:crypto';
import { utf8Prefix } from './output-lines.ts';
import type { ScriptOutputLog } from './script-output-log.ts';

/** A line's output sink (a ScriptOutputLog, or what stands in for one in tests). */
export type OutputSink = Pick<ScriptOutputLog, 'output'>;

const LINE = '~';
const LINES = '^';
const END = '$';
const TAG_LENGTH = 8;
const TAG_CHARACTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** What the marks add to a line at most: `<lines> ` and ` <end>`. */
const MARK_BYTES = 2 * (1 + TAG_LENGTH + 1);

/** An isolate's console marks (inside/console-marks.ts writes them around each console call). */
export interface ConsoleMarks {
  tag: string;
  line: string;
  lines: string;
  end: string;
}

export function newConsoleMarks(): ConsoleMarks {
  const tag = [...randomBytes(TAG_LENGTH)].map((byte) => TAG_CHARACTERS[byte % TAG_CHARACTERS.length]).join('');
  return { tag, line: `${LINE}${tag}`, lines: `${LINES}${tag}`, end: `${tag}${END}` };
}

interface Claimant {
  marks: ConsoleMarks;
  sink: OutputSink;
}

export class OutputRouter {
  /** The longest line read from workerd: a script's longest line with its marks. */
  readonly maxLineBytes: number;
  /** The longest line logged. */
  readonly #maxTextBytes: number;
  readonly #byTag = new Map<string, Claimant>();
  readonly #open: Record<'stdout' | 'stderr', Claimant | undefined> = { stdout: undefined, stderr: undefined };
  readonly #process: OutputSink;

  readonly #busy: () => OutputSink | undefined;

  /**
   * `process`: where lines no isolate claims go; `busy`: the sink of the script serving the only
   * request in flight, if there is one; `maxLineBytes`: the longest line logged (without marks).
   */
  constructor(process: OutputSink, busy: () => OutputSink | undefined, maxLineBytes: number) {
    this.#process = process;
    this.#busy = busy;
    this.#maxTextBytes = maxLineBytes;
    this.maxLineBytes = maxLineBytes + MARK_BYTES;
  }

  /** Lines marked with `marks` go to `sink` from now on. */
  claim(marks: ConsoleMarks, sink: OutputSink): void {
    this.#byTag.set(marks.tag, { marks, sink });
  }

  /** An isolate is gone: its marks claim nothing any more. */
  release(marks: ConsoleMarks): void {
    this.#byTag.delete(marks.tag);
    for (const stream of ['stdout', 'stderr'] as const) if (this.#open[stream]?.marks.tag === marks.tag) this.#open[stream] = undefined;
  }

  /** A line workerd printed, cut to maxLineBytes (`cutBytes` were cut off). */
  output(stream: 'stdout' | 'stderr', line: string, cutBytes: number): void {
    const first = line[0];
    const started = (first === LINE || first === LINES) && line.length > TAG_LENGTH ? this.#byTag.get(line.slice(1, 1 + TAG_LENGTH)) : undefined;
    if (started !== undefined) {
      let text = line.slice(1 + TAG_LENGTH);
      if (text.startsWith(' ')) text = text.slice(1);
      if (first === LINE) {
        this.#open[stream] = undefined;
        started.sink.output(stream, ...this.#capped(text, cutBytes));
        return;
      }
      this.#open[stream] = started;
      this.#continue(stream, started, text, cutBytes);
      return;
    }
    const open = this.#open[stream];
    if (open === undefined) {
      (this.#busy() ?? this.#process).output(stream, ...this.#capped(line, cutBytes));
      return;
    }
    this.#continue(stream, open, line, cutBytes);
  }

  /** A line of a record that may span several: the end mark (or a cut) ends it. */
  #continue(stream: 'stdout' | 'stderr', claimant: Claimant, line: string, cutBytes: number): void {
    const { end } = claimant.marks;
    let text = line;
    let cut = cutBytes;
    if (text === end) {
      text = '';
      this.#open[stream] = undefined;
    } else if (text.endsWith(` ${end}`)) {
      text = text.slice(0, -end.length - 1);
      this.#open[stream] = undefined;
    } else if (cutBytes > 0) {
      // The end mark was in what the length limit cut off (not the script's bytes): the record ends here.
      cut = Math.max(0, cutBytes - end.length - 1);
      this.#open[stream] = undefined;
    }
    claimant.sink.output(stream, ...this.#capped(text, cut));
  }

  /** `text` within the longest line logged, and the bytes cut off it in all. */
  #capped(text: string, cutBytes: number): [string, number] {
    if (text.length * 3 <= this.#maxTextBytes) return [text, cutBytes];
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length <= this.#maxTextBytes) return [text, cutBytes];
    const kept = utf8Prefix(bytes, this.#maxTextBytes);
    return [bytes.subarray(0, kept).toString('utf8'), cutBytes + bytes.length - kept];
  }
}
