/** The process logger (pino). Messages are capitalised sentences; data goes in fields. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = process.env.EDGEPORT_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: undefined });
}

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });
