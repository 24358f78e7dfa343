/** The per-client rate limit over HTTP: every batch member counts, 429 with Retry-After in seconds. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { rpc, startGateway } from './helpers.ts';

test('a client over its budget gets 429 with Retry-After (seconds) and -32005 per member, until tokens refill', { timeout: 10_000 }, async (t) => {
  const clock = new FakeClock();
  const gateway = await startGateway(t, { clock, section: { rate_limit: { requests_per_second: 2, burst: 4 } } });
  const batch = await gateway.post('/v1/sepolia', [rpc('eth_chainId', [], 1), rpc('eth_chainId', [], 2), rpc('eth_chainId', [], 3)]);
  assert.equal(batch.status, 200, 'three members take three of four tokens');
  assert.equal((await gateway.post('/v1/sepolia', rpc('eth_chainId'))).status, 200);

  const limited = await gateway.post('/v1/sepolia', rpc('eth_chainId', [], 'late'));
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '1');
  assert.equal(limited.json.id, 'late');
  assert.equal(limited.json.error.code, -32005);
  assert.match(limited.json.error.message, /^Rate limit exceeded: .*every batch member counts.*Retry in 1 s\.$/);
  const limitedBatch = await gateway.post('/v1/sepolia', [rpc('eth_chainId', [], 'x'), rpc('eth_chainId', [], 'y')]);
  assert.equal(limitedBatch.status, 429);
  assert.deepEqual(
    limitedBatch.json.map((m: { id: string; error: { code: number } }) => [m.id, m.error.code]),
    [
      ['x', -32005],
      ['y', -32005],
    ],
  );

  clock.advance(500);
  assert.equal((await gateway.post('/v1/sepolia', rpc('eth_chainId'))).status, 200, 'refused requests took no tokens; 500 ms refilled one');
  assert.equal((await gateway.post('/v1/sepolia', rpc('eth_chainId'))).status, 429);
  clock.advance(10_000);
  assert.equal(
    (
      await gateway.post(
        '/v1/sepolia',
        Array.from({ length: 4 }, (_, i) => rpc('eth_chainId', [], i)),
      )
    ).status,
    200,
    'refills up to the burst',
  );
  const metrics = await (await fetch(`${gateway.origin}/metrics`)).text();
  assert.match(metrics, /edgeport_gateway_rate_limited_requests_total 3/);
});

test('a requests_per_second of 0 turns the limit off', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t, { section: { rate_limit: { requests_per_second: 0, burst: 1 } } });
  for (let i = 0; i < 5; i++) assert.equal((await gateway.post('/v1/sepolia', rpc('eth_chainId'))).status, 200);
});

test('every batch member takes its token before any member runs: a batch over the tokens left runs none', { timeout: 30_000 }, async (t) => {
  const gateway = await startGateway(t, { clock: new FakeClock(), section: { rate_limit: { requests_per_second: 1, burst: 5 } } });
  assert.equal((await gateway.post('/v1/sepolia', [rpc('eth_chainId', [], 1), rpc('eth_chainId', [], 2), rpc('eth_chainId', [], 3)])).status, 200);
  const refused = await gateway.post('/v1/sepolia', [rpc('net_version', [], 1), rpc('net_version', [], 2), rpc('net_version', [], 3)]);
  assert.equal(refused.status, 429, 'three members, two tokens left');
  const metrics = await (await fetch(`${gateway.origin}/metrics`)).text();
  assert.match(metrics, /edgeport_gateway_calls_total\{network="sepolia",method="eth_chainId",outcome="[a-z_]+"\} [1-9]/);
  assert.doesNotMatch(metrics, /method="net_version"/, 'no member of the refused batch ran');
  assert.equal((await gateway.post('/v1/sepolia', [rpc('net_version', [], 1), rpc('net_version', [], 2)])).status, 200, 'the two tokens are still there');
});
