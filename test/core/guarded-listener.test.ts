/**
 * guardedListener on a real node:http server: a handler that throws, or whose promise rejects
 * before or after it started answering, is logged at error level and answered 500 in the given
 * shape (or its connection closed), and the server goes on serving; nothing is left unhandled.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { test } from 'node:test';
import { pino } from 'pino';
import { guardedListener } from '../../src/core/http/guarded-listener.ts';
import { listen } from '../helpers/listen.ts';

/** An async handler by path: rejects before or while answering, or answers (`/ok`). */
async function failing(req: IncomingMessage, res: ServerResponse): Promise<void> {
  await Promise.resolve();
  if (req.url === '/rejects') throw new Error('rejected before answering');
  if (req.url === '/midway') {
    res.writeHead(200, { 'content-length': 100 });
    res.write('partial');
    throw new Error('rejected mid-answer');
  }
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('fine');
}

test('a handler that throws or rejects is logged and answered 500 (or its connection closed); the server keeps serving', { timeout: 30_000 }, async (t) => {
  const logged: Array<{ level: number; msg: string; err?: { message: string } }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as (typeof logged)[number]) });
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  t.after(() => process.off('unhandledRejection', onUnhandled));
  const handler = (req: IncomingMessage, res: ServerResponse): Promise<void> | undefined => {
    if (req.url === '/throws') {
      // A synchronous throw from a handler that is not async.
      throw new Error('thrown synchronously');
    }
    return failing(req, res);
  };
  const listener = guardedListener(handler, 'test service', logger, {
    contentType: 'application/json',
    body: (req) => JSON.stringify({ error: 'internal', path: req.url }),
  });
  const server = createServer(listener);
  const port = await listen(server, t);
  const base = `http://127.0.0.1:${port}`;

  for (const path of ['/throws', '/rejects']) {
    const response = await fetch(`${base}${path}`);
    assert.equal(response.status, 500, path);
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.deepEqual(await response.json(), { error: 'internal', path });
  }
  // Already answering: the connection is cut, so the client sees a broken body, not a false success.
  await assert.rejects(async () => (await fetch(`${base}/midway`)).text());
  const fine = await fetch(`${base}/ok`);
  assert.deepEqual([fine.status, await fine.text()], [200, 'fine']);

  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(unhandled, []);
  const errors = logged.filter((line) => line.level === 50).map((line) => line.err?.message);
  assert.deepEqual(errors, ['thrown synchronously', 'rejected before answering', 'rejected mid-answer']);
});
