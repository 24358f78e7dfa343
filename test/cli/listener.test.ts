import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { listen } from '../../src/cli/listener.ts';

/** Counts the body's bytes and answers with the count. */
async function countingListener(t: TestContext, idleTimeoutMs: number) {
  const listener = await listen((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => { bytes += chunk.length; });
    req.on('end', () => res.end(String(bytes)));
  }, '127.0.0.1', 0, 'test listener', { idleTimeoutMs });
  t.after(() => listener.close());
  return listener;
}

test('a request may take as long as it keeps moving bytes; a stalled one is cut after the idle timeout', async (t) => {
  const listener = await countingListener(t, 300);
  // 12 chunks 100 ms apart: four times the idle timeout in all, never idle for it.
  const slow = request(`${listener.url}/upload`, { method: 'PUT', headers: { 'content-length': 12 } });
  const answered = new Promise<string>((resolve, reject) => {
    slow.on('response', (res) => { let text = ''; res.on('data', (c: Buffer) => { text += c; }); res.on('end', () => resolve(text)); });
    slow.on('error', reject);
  });
  for (let i = 0; i < 12; i++) {
    slow.write('x');
    await sleep(100);
  }
  slow.end();
  assert.equal(await answered, '12');

  const stalled = request(`${listener.url}/upload`, { method: 'PUT', headers: { 'content-length': 10 } });
  const started = Date.now();
  const cut = new Promise<number>((resolve) => {
    stalled.on('error', () => resolve(Date.now() - started));
    stalled.on('response', () => resolve(-1));
  });
  stalled.write('abc');
  const after = await cut;
  assert.ok(after >= 250 && after < 3000, `the stalled request was cut after ${after} ms`);
});
