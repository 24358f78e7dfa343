/**
 * What the `edgeport` command refuses to start with, besides bad usage (args.ts) and a bad config
 * (CONFIG_INVALID): each message names what holds the resource and the flag or key that changes it.
 * The command prints the message alone (no stack) and exits 1. docs/errors.md lists these codes.
 */
import { EdgeportError, type ErrorCatalog } from '../core/errors/edgeport-error.ts';

export type CliErrorCode =
  | 'CLI_DATA_DIR_IN_USE'
  | 'CLI_DATA_DIR_UNUSABLE'
  | 'CLI_PORT_IN_USE'
  | 'CLI_PORT_UNAVAILABLE'
  | 'CLI_DATA_DIR_NOT_EMPTY'
  | 'CLI_BACKUP_TARGET_NOT_EMPTY'
  | 'CLI_BACKUP_INVALID'
  | 'CLI_RESTORE_FAILED'
  | 'CLI_SECRETS_KEY_MISSING'
  | 'CLI_SECRETS_KEY_INVALID'
  | 'CLI_SECRETS_KEY_WRONG'
  | 'CLI_SECRETS_ROTATION_REFUSED';

export const CLI_ERRORS: ErrorCatalog<CliErrorCode> = {
  CLI_DATA_DIR_IN_USE: {
    kind: 'user',
    message: 'Another edgeport process (start or dev) is using the data dir; it names that process and the flag that picks another dir.',
  },
  CLI_DATA_DIR_UNUSABLE: { kind: 'user', message: 'The data dir cannot be created or locked (permissions, a file in its place, a file system without locks).' },
  CLI_PORT_IN_USE: { kind: 'user', message: "A listener's port is taken; it names the flag and the config key that change it." },
  CLI_PORT_UNAVAILABLE: { kind: 'user', message: 'A listener cannot bind its address and port (a privileged port, an address this machine does not have).' },
  CLI_DATA_DIR_NOT_EMPTY: {
    kind: 'user',
    message: 'edgeport restore: the data dir holds data already; restore into a new dir, or replace its data with --force.',
  },
  CLI_BACKUP_TARGET_NOT_EMPTY: { kind: 'user', message: 'edgeport backup: the directory is not empty; name a new or empty one.' },
  CLI_BACKUP_INVALID: {
    kind: 'user',
    message:
      "edgeport restore: the directory is not a backup made by edgeport backup (its manifest or database missing, or not a file), or one that does not fit this data dir's database.",
  },
  CLI_RESTORE_FAILED: {
    kind: 'system',
    message:
      'edgeport restore: copying the backup or swapping it in failed (a damaged backup, a full disk, a blobs dir that is a link); the data dir holds its previous data.',
  },
  CLI_SECRETS_KEY_MISSING: {
    kind: 'user',
    message: 'No secrets key where one is needed: a sealed database whose key file is gone, PostgreSQL without a key, or a named key file that does not exist.',
  },
  CLI_SECRETS_KEY_INVALID: {
    kind: 'user',
    message: 'The secrets key given (EDGEPORT_SECRETS_KEY, [secrets] key, or a key file) is not the base64 of 32 bytes, or its file cannot be read.',
  },
  CLI_SECRETS_KEY_WRONG: { kind: 'user', message: "The secrets key is not the one the database's secrets are sealed with; nothing was read or written." },
  CLI_SECRETS_ROTATION_REFUSED: {
    kind: 'user',
    message: 'edgeport secrets rotate-key cannot run now: an instance runs on the database, the database was never sealed, or the new key has nowhere to go.',
  },
};

export class CliError extends EdgeportError<CliErrorCode> {
  constructor(code: CliErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, CLI_ERRORS[code].kind, message, options);
  }
}
