/**
 * Hands one node:http request to a script's isolate in its account's workerd process and writes
 * its answer back: the request line, headers and body as they came (hop-by-hop headers aside) plus
 * the header naming the isolate, the script's status, headers and body as the script made them,
 * both bodies streamed with the sockets' own back-pressure. A script failure the entry module
 * reports is logged and answered as in every runtime (SCRIPT_FAILURES); so is an isolate the host
 * worker could not load.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerScriptFailure, SCRIPT_FAILURES } from '../errors.ts';
import type { ScriptException, ScriptOutputLog } from './script-output-log.ts';
import { failureOf, type Generation, type WorkerdSupervisor } from './workerd-supervisor.ts';
import { connectionTokens } from '../../core/http/connection-tokens.ts';

export interface ProxyContext {
  supervisor: WorkerdSupervisor;
  failureHeader: string;
  /** Set by the host worker on its own answer when the isolate could not be loaded or went away. */
  hostFailureHeader: string;
  /**
   * The header naming the isolate, and its loader name in the process serving now (loaded on
   * demand); undefined when the account has no room for one more loaded isolate.
   */
  isolate: { header: string; route(generation: Generation): string | undefined; failed(generation: Generation, message: string): void };
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

/**
 * The shape of the header names edgeport and an account's host worker share (a per-process secret:
 * which isolate, a tail's mark, the liveness probe). Their names cannot be guessed; a client's
 * header of that shape is dropped all the same, so none ever reaches the host worker.
 */
const OWN_MARK = /^x-edgeport-[a-z0-9-]+-[0-9a-f]{16}$/;

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
  const name = context.isolate.route(generation);
  if (name === undefined) {
    answerScriptFailure(res, 'account-scripts');
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
  /** The host worker's own answer: the isolate could not load; its body says why. */
  let hostFailure: string[] | undefined;
  res.on('close', () => {
    if (!res.writableFinished) abort?.(new Error('The client went away.'));
    finish();
  });
  generation.connections.dispatch(
    {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: context.tail?.watched()
        ? [...passOn(req), context.tail.header, '1', context.isolate.header, name]
        : [...passOn(req), context.isolate.header, name],
      body: hasBody(req) ? req : null,
    },
    {
      onConnect(abortRequest) {
        abort = abortRequest;
      },
      onHeaders(status, rawHeaders, resume, statusText) {
        answered = true;
        const { headers, failure, host } = answerHeaders(rawHeaders, context.failureHeader, context.hostFailureHeader);
        if (host) {
          failed = true;
          hostFailure = [];
          return;
        }
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
          if (hostFailure !== undefined && hostFailure.length < 64) hostFailure.push(Buffer.from(chunk).toString('utf8'));
          release();
          return true;
        }
        // The chunk's buffer goes back to be read into again once the client's socket has taken it.
        return res.write(chunk, release);
      },
      onComplete() {
        finish();
        if (hostFailure !== undefined) {
          notLoaded(context, generation, hostFailure.join(''), res);
          return;
        }
        if (!failed) res.end();
      },
      onError(error: NodeJS.ErrnoException) {
        finish();
        if (hostFailure !== undefined) {
          notLoaded(context, generation, hostFailure.join(''), res);
          return;
        }
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
    },
  );
}

/** The host worker could not load the isolate (its code threw this time, or the server had none): answered as an exception. */
function notLoaded(context: ProxyContext, generation: Generation, message: string, res: ServerResponse): void {
  context.isolate.failed(generation, message);
  context.output.exception({ message: `The script's isolate could not be loaded: ${message}` }, SCRIPT_FAILURES.exception.status);
  answerScriptFailure(res, 'exception');
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
function answerHeaders(raw: string[], failureHeader: string, hostFailureHeader: string): { headers: string[]; failure: string | undefined; host: boolean } {
  const headers: string[] = [];
  let failure: string | undefined;
  let host = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower)) continue;
    const value = raw[i + 1]!;
    if (lower === failureHeader) failure = value;
    else if (lower === hostFailureHeader) host = true;
    headers.push(name, value);
  }
  return { headers, failure, host };
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Named in Connection, yet what addresses and frames the request: passed on all the same. */
const NEVER_HOP = new Set(['host', 'content-length']);

/** The request's end-to-end headers: no hop-by-hop ones (those `Connection` names too, as `curl --http2`'s HTTP2-Settings), no marks. */
function passOn(req: IncomingMessage): string[] {
  const raw = req.rawHeaders;
  // Node has joined the Connection headers already: no second pass over the raw ones.
  const named = connectionTokens(req.headers.connection);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || OWN_MARK.test(name) || (named.has(name) && !NEVER_HOP.has(name))) continue;
    out.push(raw[i]!, raw[i + 1]!);
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
