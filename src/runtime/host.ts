/**
 * The script host: runs one script in workerd (src/runtime/workerd), the only runtime
 * (docs/architecture.md, "Scripts run in workerd"), as an isolate in its account's workerd process,
 * with the store its bucket bindings reach, and answers node:http requests through it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../core/log.ts';
import type { ObjectEngine } from '../store/engine/object-engine.ts';
import type { ScriptConfig } from './script-config.ts';
import type { ScriptSource } from './workerd/isolate-code.ts';
import type { IsolatePool } from './workerd/isolate-pool.ts';
import { startWorkerdHost } from './workerd/workerd-host.ts';

/**
 * A script uploaded through the API rather than read from a file: its modules as uploaded (already
 * bundled by the client), the main one, and its text and JSON bindings (vars and secrets).
 */
export type UploadedSource = ScriptSource;

export interface ScriptHostOptions {
  script: ScriptConfig;
  /** The script's modules as uploaded; without it, `script.main` is bundled. */
  uploaded?: UploadedSource;
  /** The account whose buckets the script binds (null: the buckets of no account, as `edgeport dev` before any account exists). */
  accountId: string | null;
  dataDir: string;
  /** `[blobs] url`, when blobs live outside the data dir. */
  blobsUrl?: string | undefined;
  /** `[db] url`, when the metadata is in PostgreSQL. */
  dbUrl?: string | undefined;
  logger: Logger;
  /**
   * The server's already-open engine on `dataDir` (edgeport start): used, not closed, by the host.
   * Without it the host opens (and recovers) its own, as `edgeport dev` does.
   */
  engine?: ObjectEngine;
  /** Tail sessions (uploaded scripts): while `watched()`, each request's trace event goes to `publish`. */
  tail?: TailTarget;
  /**
   * The server's pool of account processes: the script runs in `tenant`'s process there (an
   * account's id; `config` for the configured scripts). Without it, the host runs a process of its
   * own for the script alone (`edgeport dev`, tests, upload trials), stopped by close().
   */
  pool?: { pool: IsolatePool; tenant: string; name: string };
}

/** Where a script's trace events go: checked per request, so that no trace leaves workerd while nobody watches. */
export interface TailTarget {
  watched(): boolean;
  publish(event: unknown): void;
}

export interface ScriptHost {
  /** A node:http request listener that serves the script. */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** Unloads the script (requests in flight get 503); a host of its own also stops its workerd and closes the store it opened. */
  close(): Promise<void>;
}

/** Starts the script in workerd; rejects with RUNTIME_SCRIPT_START_FAILED when the script cannot load. */
export function startScriptHost(options: ScriptHostOptions): Promise<ScriptHost> {
  return startWorkerdHost(options);
}
