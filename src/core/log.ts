/**
 * The process logger (pino). Messages are capitalised sentences; data goes in fields. Logs go to
 * stderr, so stdout carries only what a command prints for its user (the start banner, the dev URL):
 * JSON lines when stderr is a pipe or a file (for log collectors), or short readable lines when it
 * is a terminal (`12:04:31 WARN Listener refused connections ... listener=edge`).
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = process.env.EDGEPORT_LOG_LEVEL ?? 'info'): Logger {
  const destination: DestinationStream = process.stderr.isTTY
    ? { write: (line: string) => void process.stderr.write(prettyLogLine(line)) }
    : pino.destination({ dest: 2, sync: true });
  return pino({ level, base: undefined }, destination);
}

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/**
 * One pino JSON line as a person reads it: local time, level, message, then the fields as
 * `key=value`; an error as its message (with its stack at level error and above).
 */
export function prettyLogLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const { level, time, msg, err, ...fields } = record;
  const severity = typeof level === 'number' ? level : 30;
  const clock = new Date(typeof time === 'number' ? time : Date.now()).toTimeString().slice(0, 8);
  const parts = [clock, (LEVELS[severity] ?? String(level)).padEnd(5), typeof msg === 'string' ? msg : ''];
  for (const [key, value] of Object.entries(fields)) parts.push(`${key}=${fieldText(value)}`);
  const error = err as { type?: string; message?: string; stack?: string } | undefined;
  if (error !== undefined) parts.push(`error=${fieldText(`${error.type ?? 'Error'}: ${error.message ?? ''}`)}`);
  const stack = error?.stack !== undefined && severity >= 50 ? `\n${error.stack.split('\n').slice(1).join('\n')}` : '';
  return `${parts.filter((part) => part !== '').join(' ')}${stack}\n`;
}

function fieldText(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}
