/**
 * loopback-only.mjs, the preload that keeps the CLIs the tests run (wrangler) on this machine:
 * under it (on this process's node, which is the one wrangler runs on), fetch, http, https, net,
 * tls and DNS reach loopback hosts as usual, and every try to reach another host fails at once
 * with ECONNREFUSED, before a packet or a DNS query leaves the process. Beneath it a backstop
 * (fixtures/no-network-backstop.mjs) fails whatever gets through, so a hole fails this test
 * without reaching the host.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { outputOf, spawnNode } from './child-processes.ts';
import { onTestEnd } from './cleanup.ts';
import { LOOPBACK_ONLY } from './wrangler.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/reach-hosts.mjs', import.meta.url));
/** Under loopback-only.mjs: what it lets through to a non-loopback host fails there, with PASSED_THROUGH, instead of leaving the machine. */
const BACKSTOP = new URL('./fixtures/no-network-backstop.mjs', import.meta.url).href;

test('loopback-only.mjs: loopback reached, every other host refused at once', { timeout: 60_000 }, async (t) => {
  const server = createServer((req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestEnd(t, () => new Promise<void>((resolve) => server.close(() => resolve())));
  const child = spawnNode(['--import', BACKSTOP, '--import', LOOPBACK_ONLY, FIXTURE, String((server.address() as AddressInfo).port)]);
  const { code, stdout, stderr } = await outputOf(child);
  assert.equal(code, 0, stderr);
  const tries = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { how: string; target: string; ok: boolean; code?: string; ms: number });
  assert.equal(tries.length, 14, stdout);
  for (const each of tries) {
    const loopback = /^(http:\/\/)?(127\.0\.0\.1|localhost):\d+\/?$/.test(each.target);
    if (loopback) {
      assert.ok(each.ok, `${each.how} ${each.target} should reach the loopback listener: ${JSON.stringify(each)}`);
    } else {
      assert.equal(each.ok, false, `${each.how} ${each.target} should be refused`);
      assert.equal(each.code, 'ECONNREFUSED', `${each.how} ${each.target}: ${JSON.stringify(each)}`);
      assert.ok(each.ms < 1_000, `${each.how} ${each.target} was refused after ${Math.round(each.ms)} ms`);
    }
  }
});
