/**
 * Hands one node:http request to workerd and writes its answer back: the request line, headers
 * and body as they came (hop-by-hop headers aside), the script's status, headers and body as the
 * script made them, both bodies streamed with the sockets' own back-pressure. A script failure the
 * entry module reports is logged and answered as in every runtime (SCRIPT_FAILURES).
 */
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from '../../core/log.ts';
import { answerScriptFailure, SCRIPT_FAILURES } from '../errors.ts';
import { failureOf, type Generation, type WorkerdSupervisor } from './workerd-supervisor.ts';

export interface ProxyContext {
  supervisor: WorkerdSupervisor;
  socketPath: string;
  failureHeader: string;
  logger: Logger;
  scriptName: string;
}

/** Headers about one connection, never passed on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

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
  generation.inflight++;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    generation.inflight--;
  };
  const upstream = request({
    socketPath: context.socketPath,
    agent: generation.agent,
    method: req.method,
    path: req.url,
    headers: passOn(req.rawHeaders),
    setHost: false,
  });
  upstream.on('response', (answer) => {
    const failure = answer.headers[context.failureHeader];
    if (typeof failure === 'string') {
      answer.resume();
      finish();
      reportException(context, failure, res);
      return;
    }
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, passOn(answer.rawHeaders));
    answer.pipe(res);
    answer.on('end', finish);
    answer.on('error', () => {
      finish();
      res.destroy();
    });
  });
  upstream.on('error', (error: NodeJS.ErrnoException) => {
    finish();
    // A request without a body that never reached a process which has just died goes to its
    // replacement: nothing of it was consumed, and the script never saw it.
    if (!retried && NOT_CONNECTED.has(error.code ?? '') && !hasBody(req) && !res.destroyed) {
      generation.alive = false;
      const serving = context.supervisor.serving();
      void Promise.resolve(serving).then((next) => (next ? forward(context, next, req, res, true) : answerScriptFailure(res, 'unavailable')));
      return;
    }
    // The process went away (or was cut off) before or while answering: answered with why.
    void failureOf(generation).then((failure) => answerScriptFailure(res, failure));
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
    finish();
  });
  req.pipe(upstream);
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
  let failure: { message?: string; stack?: string; passThrough?: boolean } = {};
  try {
    failure = JSON.parse(decodeURIComponent(encoded)) as typeof failure;
  } catch {
    // A malformed report still fails the request.
  }
  context.logger.error({
    script: context.scriptName, error: failure.message, stack: failure.stack,
    answer: SCRIPT_FAILURES.exception.status, passThrough: failure.passThrough || undefined,
  }, 'Script threw an exception.');
  answerScriptFailure(res, 'exception');
}
