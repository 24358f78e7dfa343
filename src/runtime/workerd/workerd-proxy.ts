/**
 * Hands one node:http request to workerd and writes its answer back: the request line, headers
 * and body as they came (hop-by-hop headers aside), the script's status, headers and body as the
 * script made them, both bodies streamed with the sockets' own back-pressure. A script failure the
 * entry module reports is logged and answered as in every runtime (SCRIPT_FAILURES).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerScriptFailure, SCRIPT_FAILURES } from '../errors.ts';
import type { ScriptException, ScriptOutputLog } from './script-output-log.ts';
import { failureOf, type Generation, type WorkerdSupervisor } from './workerd-supervisor.ts';

export interface ProxyContext {
  supervisor: WorkerdSupervisor;
  socketPath: string;
  failureHeader: string;
  /** Where the exceptions the script throws are logged (within its log limits). */
  output: ScriptOutputLog;
  /** Requests get `header` while `watched()`: the tail worker passes on only their traces. */
  tail?: { header: string; watched(): boolean };
}

/**
 * Headers about one connection, never passed on (RFC 9110 §7.6.1); and Expect, which node:http has
 * already answered (100 Continue): workerd must not answer it again.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect']);

export function proxyToWorkerd(context: ProxyContext, req: IncomingMessage, res: ServerResponse): void {
  const serving = context.supervisor.serving();
  if (serving instanceof Promise) {
    void serving.then((generation) => (generation ? forward(context, generation, req, res) : answerScriptFailure(res, 'unavailable')));
  } else if (serving === undefined) {
    answerScriptFailure(res, 'unavailable');
  } else {
    forward(context, serving, req, res);
  }
}

/** Connection errors that mean nothing reached workerd: the process is gone (and being replaced). */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOENT']);

function forward(context: ProxyContext, generation: Generation, req: IncomingMessage, res: ServerResponse, retried = false): void {
  // Connections destroyed with their process: nothing was sent, so it is as if it refused.
  if (generation.connections.destroyed) {
    notConnected(context, generation, req, res, retried);
    return;
  }
  generation.inflight++;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    generation.inflight--;
  };
  let abort: ((reason?: Error) => void) | undefined;
  let answered = false;
  /** The entry module reported a script failure: answered already, the rest of workerd's answer is dropped. */
  let failed = false;
  res.on('close', () => {
    if (!res.writableFinished) abort?.(new Error('The client went away.'));
    finish();
  });
  generation.connections.dispatch({
    method: req.method ?? 'GET',
    path: req.url ?? '/',
    headers: context.tail?.watched() ? [...passOn(req.rawHeaders), context.tail.header, '1'] : passOn(req.rawHeaders),
    body: hasBody(req) ? req : null,
  }, {
    onConnect(abortRequest) {
      abort = abortRequest;
    },
    onHeaders(status, rawHeaders, resume, statusText) {
      answered = true;
      const { headers, failure } = answerHeaders(rawHeaders, context.failureHeader);
      if (failure !== undefined) {
        failed = true;
        finish();
        reportException(context, failure, res);
        return;
      }
      res.writeHead(status, statusText, headers);
      // Back-pressure: reading from workerd holds while the client's socket is full.
      res.on('drain', resume);
    },
    onData(chunk, release) {
      if (failed) {
        release();
        return true;
      }
      // The chunk's buffer goes back to be read into again once the client's socket has taken it.
      return res.write(chunk, release);
    },
    onComplete() {
      finish();
      if (!failed) res.end();
    },
    onError(error: NodeJS.ErrnoException) {
      finish();
      // The client left (and the request was aborted for it), or the failure is answered already.
      if (failed || res.destroyed) return;
      if (answered) {
        res.destroy();
        return;
      }
      if (NOT_CONNECTED.has(error.code ?? '')) {
        notConnected(context, generation, req, res, retried);
        return;
      }
      // The process went away (or was cut off) before answering: answered with why.
      void failureOf(generation).then((failure) => answerScriptFailure(res, failure));
    },
  });
}

/**
 * A request without a body that never reached a process which has just died goes to its
 * replacement: nothing of it was consumed, and the script never saw it.
 */
function notConnected(context: ProxyContext, generation: Generation, req: IncomingMessage, res: ServerResponse, retried: boolean): void {
  if (!retried && !hasBody(req) && !res.destroyed) {
    generation.alive = false;
    const serving = context.supervisor.serving();
    void Promise.resolve(serving).then((next) => (next ? forward(context, next, req, res, true) : answerScriptFailure(res, 'unavailable')));
    return;
  }
  void failureOf(generation).then((failure) => answerScriptFailure(res, failure));
}

/**
 * workerd's answer headers as node:http writes them (hop-by-hop ones left out),
 * and the entry module's failure report if it sent one: one pass over them.
 */
function answerHeaders(raw: string[], failureHeader: string): { headers: string[]; failure: string | undefined } {
  const headers: string[] = [];
  let failure: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower)) continue;
    const value = raw[i + 1]!;
    if (lower === failureHeader) failure = value;
    headers.push(name, value);
  }
  return { headers, failure };
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function passOn(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

function reportException(context: ProxyContext, encoded: string, res: ServerResponse): void {
  let failure: ScriptException = {};
  try {
    const report = JSON.parse(decodeURIComponent(encoded)) as Record<string, unknown> | null;
    failure = {
      message: typeof report?.message === 'string' ? report.message : undefined,
      stack: typeof report?.stack === 'string' ? report.stack : undefined,
      passThrough: report?.passThrough === true,
    };
  } catch {
    // A malformed report still fails the request.
  }
  context.output.exception(failure, SCRIPT_FAILURES.exception.status);
  answerScriptFailure(res, 'exception');
}
