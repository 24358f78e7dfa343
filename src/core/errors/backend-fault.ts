/**
 * A backend edgeport depends on (the database, the blob store, the disk under the data dir) that is
 * down, too slow or full: an outage the client should retry after a while, never a bug (500) and
 * never the client's mistake. Backends throw BackendFault (the PostgreSQL pool, the S3 blob store);
 * errors that reach a surface unwrapped (SQLite's, the file system's) are recognised by their codes
 * (backendFaultOf). Each surface answers a fault in its own shape with a retryable status and
 * `Retry-After`: docs/errors.md, "Backend faults". Web APIs only: the store's error module imports
 * this, and it runs inside workerd too.
 */
import { EdgeportError, type ErrorCatalog } from './edgeport-error.ts';

export type BackendFaultCode = 'BACKEND_UNAVAILABLE' | 'BACKEND_FULL';

/** What failed, as a client may be told (never a host, a path or a key). */
export type BackendName = 'database' | 'blob store' | 'disk';

export const BACKEND_FAULTS: ErrorCatalog<BackendFaultCode> = {
  BACKEND_UNAVAILABLE: {
    kind: 'system',
    message: 'The <database | blob store | disk> <did not answer within <n> ms | refused the connection | answered HTTP <status>>',
  },
  BACKEND_FULL: { kind: 'system', message: 'The <disk | blob store | database> is full' },
};

/** Seconds a client is asked to wait: an outage often passes in a second; space comes back more slowly. */
export const RETRY_AFTER_S: Record<BackendFaultCode, number> = { BACKEND_UNAVAILABLE: 1, BACKEND_FULL: 5 };

export class BackendFault extends EdgeportError<BackendFaultCode> {
  readonly backend: BackendName;
  readonly retryAfterS: number;
  constructor(code: BackendFaultCode, backend: BackendName, why: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(code, 'system', `The ${backend} ${why}`, options);
    this.backend = backend;
    this.retryAfterS = RETRY_AFTER_S[code];
  }
}

/** The backend did not answer, or failed: `why` completes "The <backend> ...", e.g. "did not answer within 5000 ms". */
export function backendUnavailable(backend: BackendName, why: string, cause?: unknown, details?: Record<string, unknown>): BackendFault {
  return new BackendFault('BACKEND_UNAVAILABLE', backend, why, { ...(cause === undefined ? {} : { cause }), ...(details ? { details } : {}) });
}

/** The backend has no room for the write. */
export function backendFull(backend: BackendName, cause?: unknown, details?: Record<string, unknown>): BackendFault {
  return new BackendFault('BACKEND_FULL', backend, 'is full', { ...(cause === undefined ? {} : { cause }), ...(details ? { details } : {}) });
}

/** Codes of a full file system (Node's errno) or a full SQLite database file. */
const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);
/** A disk that fails reads or writes: not the request's fault, and maybe passing (a remount, a failover). */
const DISK_CODES = new Set(['EIO', 'EROFS', 'SQLITE_IOERR', 'SQLITE_READONLY']);
/** SQLite could not take its lock within its busy timeout (a backup or a long command holds it). */
const BUSY_CODES = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED']);

/**
 * The fault `error` is, or undefined when it is none: a BackendFault, one found in its `cause`
 * chain, or a file-system or SQLite error whose code says the disk is full, failing or busy.
 * Anything else (a bug, a client's mistake) is not a fault.
 */
export function backendFaultOf(error: unknown): BackendFault | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === 'object'; depth++) {
    if (current instanceof BackendFault) return current;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      const base = code.startsWith('SQLITE_') ? code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1') : code;
      if (FULL_CODES.has(base)) return backendFull('disk', current, { code });
      if (DISK_CODES.has(base)) return backendUnavailable('disk', `failed a read or write (${code})`, current, { code });
      if (BUSY_CODES.has(base)) return backendUnavailable('database', `was busy (${code})`, current, { code });
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
