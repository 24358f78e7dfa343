/**
 * How the script runtime fails: RUNTIME_ERRORS for the server (a script that cannot start), and
 * SCRIPT_FAILURES, what a client is answered when its script could not produce a response.
 */
import type { ServerResponse } from 'node:http';
import { EdgeportError, type ErrorCatalog } from '../core/errors/edgeport-error.ts';

export type RuntimeErrorCode = 'RUNTIME_SCRIPT_START_FAILED' | 'RUNTIME_NO_CAPACITY';

export const RUNTIME_ERRORS: ErrorCatalog<RuntimeErrorCode> = {
  RUNTIME_SCRIPT_START_FAILED: { kind: 'user', message: 'The script failed to start.' },
  RUNTIME_NO_CAPACITY: { kind: 'system', message: 'The script cannot start now: every place for a running script is taken.' },
};

export class RuntimeError extends EdgeportError<RuntimeErrorCode> {
  constructor(code: RuntimeErrorCode, message: string = RUNTIME_ERRORS[code].message, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(code, RUNTIME_ERRORS[code].kind, message, options);
  }
}

/** Why a request got no response from its script. */
export type ScriptFailure = 'exception' | 'cpu' | 'memory' | 'crash' | 'unavailable' | 'account-requests' | 'account-scripts';

/**
 * What the client is answered for each failure (the real platform's 1101 / 1102 pages, in plain
 * text); `retryAfter` (seconds) when coming back later may well succeed.
 */
export const SCRIPT_FAILURES: Record<ScriptFailure, { status: number; body: string; retryAfter?: number }> = {
  exception: { status: 500, body: 'The script threw an exception.\n' },
  cpu: { status: 503, body: 'The script exceeded its CPU time limit.\n' },
  memory: { status: 503, body: 'The script exceeded its memory limit.\n' },
  crash: { status: 502, body: 'The script stopped unexpectedly.\n' },
  unavailable: { status: 503, body: 'The script is not running.\n', retryAfter: 1 },
  'account-requests': { status: 429, body: "The script's account has as many requests in flight as it may; retry shortly.\n", retryAfter: 1 },
  'account-scripts': { status: 429, body: "The script's account has as many scripts running as it may, all of them busy; retry shortly.\n", retryAfter: 1 },
};

/**
 * Answers `failure`'s page, whichever runtime the script ran in; a response already under way can
 * only be cut off, and a gone client gets nothing.
 */
export function answerScriptFailure(res: ServerResponse, failure: ScriptFailure): void {
  if (res.destroyed) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, body, retryAfter } = SCRIPT_FAILURES[failure];
  res.writeHead(status, [
    'content-type',
    'text/plain; charset=utf-8',
    'content-length',
    String(Buffer.byteLength(body)),
    ...(retryAfter === undefined ? [] : ['retry-after', String(retryAfter)]),
  ]);
  res.end(body);
}
