/** What the `edgeport` command prints when it fails, and its exit code (main.ts lists the codes). */
import { EdgeportError } from '../core/errors/edgeport-error.ts';
import { UsageError } from './args.ts';

/** The one line (or, for a bug, the stack) a failure prints, and the exit code it ends with. */
export function describeFailure(error: unknown): { text: string; exitCode: 1 | 2 } {
  if (error instanceof UsageError) return { text: `edgeport: ${error.message}\n\n${error.usage}`, exitCode: 2 };
  // Config, startup and system-call errors are the user's to fix, and their message says how: no stack needed.
  // A message that names its command already (`edgeport restore: ...`) is not prefixed twice.
  if (error instanceof EdgeportError) return { text: error.message.startsWith('edgeport ') ? error.message : `edgeport: ${error.message}`, exitCode: 1 };
  const errno = error as NodeJS.ErrnoException;
  if (error instanceof Error && typeof errno.code === 'string' && typeof errno.syscall === 'string') return { text: `edgeport: ${error.message}`, exitCode: 1 };
  return { text: `edgeport: ${(error as Error)?.stack ?? String(error)}`, exitCode: 1 };
}
