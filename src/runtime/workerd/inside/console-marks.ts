/**
 * Marks what a script prints, so that the server can tell whose it is: scripts of one account share
 * one workerd process and its stdout and stderr, while each has a log budget of its own
 * (script-output-log.ts). Every console call of the isolate writes a start mark before what it
 * prints; a call that may print several lines (an object, a string with a newline) starts with
 * another mark and writes an end mark after. The marks are the isolate's own, made up by the
 * server and never shown to the script (a tail sees its lines without them); the server reads a
 * line with a start mark as the script's, and the lines up to the end mark with it
 * (output-router.ts), and takes the marks off. They are short: workerd counts them in the 256 KB it
 * keeps of one request's trace. Format strings keep working: the start mark joins the first
 * argument when that is a format string, and a specifier with no argument left is escaped, so that
 * an end mark is never taken for one.
 */

type Write = (...args: unknown[]) => void;

/** The marks of one isolate: `line` starts a call that prints one line, `lines` one that may print several, ended by `end`. */
export interface Marks {
  line: string;
  lines: string;
  end: string;
}

/** Node's format specifiers (workerd's console formats as Node's does); `%%` is a literal percent sign. */
const SPECIFIER = /%([sdifjoOc%])/g;

/** Whether the arguments print as one line: primitives only, and strings without a newline. */
function oneLine(args: readonly unknown[]): boolean {
  for (const arg of args) {
    if (typeof arg === 'string') {
      if (arg.includes('\n')) return false;
    } else if (arg !== null && (typeof arg === 'object' || typeof arg === 'function')) {
      return false;
    }
  }
  return true;
}

/** The arguments of a console call with the marks around them. */
export function markedArguments(marks: Marks, args: readonly unknown[]): unknown[] {
  const single = oneLine(args);
  const start = single ? marks.line : marks.lines;
  const tail = single ? [] : [marks.end];
  // Without a specifier the string prints as it is, first or not: never copied (a script may log 100 MB at once).
  if (typeof args[0] !== 'string' || !args[0].includes('%')) return [start, ...args, ...tail];
  const given = args.length - 1;
  let used = 0;
  // A specifier past the arguments prints as written: doubling its % keeps it so, with the end mark after it.
  const format = args[0].replace(SPECIFIER, (match, kind: string) => {
    if (kind === '%') return match;
    used++;
    return used > given ? `%${match}` : match;
  });
  return [`${start} ${format}`, ...args.slice(1), ...tail];
}

/** Replaces the isolate's console methods with ones that mark what they print. */
export function markConsole(marks: Marks): void {
  const target = console as unknown as Record<string, unknown>;
  const wrap = (level: 'log' | 'info' | 'debug' | 'warn' | 'error' | 'trace'): Write => {
    const write = (console[level] as Write).bind(console);
    return (...args: unknown[]) => write(...markedArguments(marks, args));
  };
  const log = wrap('log');
  const error = wrap('error');
  let indent = '';
  const indented =
    (write: Write): Write =>
    (...args: unknown[]) => {
      if (indent === '') write(...args);
      else write(indent + (typeof args[0] === 'string' ? args[0] : ''), ...(typeof args[0] === 'string' ? args.slice(1) : args));
    };
  const methods: Record<string, Write> = {
    log: indented(log),
    info: indented(wrap('info')),
    debug: indented(wrap('debug')),
    warn: indented(wrap('warn')),
    error: indented(error),
    trace: wrap('trace'),
  };
  // The rest in terms of those, as Node.js prints them (each line of output marked as one call).
  const counts = new Map<string, number>();
  const timers = new Map<string, number>();
  const label = (value: unknown) => (value === undefined ? 'default' : String(value));
  Object.assign(methods, {
    dir: (item: unknown) => methods.log!(item),
    dirxml: (...args: unknown[]) => methods.log!(...args),
    table: (data: unknown) => methods.log!(data),
    assert: (condition: unknown, ...args: unknown[]) => {
      if (condition) return;
      if (typeof args[0] === 'string') methods.error!(`Assertion failed: ${args[0]}`, ...args.slice(1));
      else methods.error!('Assertion failed', ...args);
    },
    count: (name?: unknown) => {
      const key = label(name);
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      methods.log!(`${key}: ${count}`);
    },
    countReset: (name?: unknown) => counts.delete(label(name)),
    time: (name?: unknown) => timers.set(label(name), Date.now()),
    timeLog: (name?: unknown, ...args: unknown[]) => {
      const started = timers.get(label(name));
      if (started !== undefined) methods.log!(`${label(name)}: ${Date.now() - started}ms`, ...args);
    },
    timeEnd: (name?: unknown) => {
      const started = timers.get(label(name));
      timers.delete(label(name));
      if (started !== undefined) methods.log!(`${label(name)}: ${Date.now() - started}ms`);
    },
    group: (...args: unknown[]) => {
      if (args.length > 0) methods.log!(...args);
      indent += '  ';
    },
    groupCollapsed: (...args: unknown[]) => methods.group!(...args),
    groupEnd: () => {
      indent = indent.slice(2);
    },
  });
  for (const [name, method] of Object.entries(methods)) target[name] = method;
}
