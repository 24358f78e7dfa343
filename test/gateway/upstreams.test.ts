/** Upstream nodes: failover, cooldown, writes never retried, timeouts, no leaks, cache and deduplication. */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { deadUrl, startFakeUpstream } from './fake-upstream.ts';
import { rpc, startGateway, waitFor } from './helpers.ts';

const RAW_TX = `0x02${'11'.repeat(100)}`;

async function gatewayOver(t: TestContext, urls: string[], clock = new FakeClock(), extra: Record<string, unknown> = {}) {
  return startGateway(t, {
    clock,
    section: { upstream_timeout_ms: 300, upstream_cooldown_ms: 5_000, networks: [{ name: 'sepolia', upstreams: urls }], ...extra },
  });
}

test("a dead first upstream fails over to the second; the answer is the node's", { timeout: 10_000 }, async (t) => {
  const alive = await startFakeUpstream(t);
  const gateway = await gatewayOver(t, [await deadUrl(), alive.url]);
  const answer = await gateway.post('/v1/sepolia', rpc('eth_blockNumber', [], 'n'));
  assert.deepEqual(answer.json, { jsonrpc: '2.0', id: 'n', result: '0x10' });
  assert.equal(alive.callsOf('eth_blockNumber').length, 1);
  const metrics = await (await fetch(`${gateway.origin}/metrics`)).text();
  assert.match(metrics, /edgeport_gateway_upstream_calls_total\{network="sepolia",upstream="0",outcome="failed"\} 1/);
  assert.match(metrics, /edgeport_gateway_upstream_calls_total\{network="sepolia",upstream="1",outcome="ok"\} 1/);
});

test('a failing upstream is skipped while it cools down, then tried again', { timeout: 10_000 }, async (t) => {
  const clock = new FakeClock();
  const failing = await startFakeUpstream(t);
  failing.behaviour.status = 503;
  failing.clientVersion = 'first';
  const alive = await startFakeUpstream(t);
  alive.clientVersion = 'second';
  const gateway = await gatewayOver(t, [failing.url, alive.url], clock);
  const version = rpc('web3_clientVersion');
  assert.equal((await gateway.post('/v1/sepolia', version)).json.result, 'second');
  assert.equal((await gateway.post('/v1/sepolia', version)).json.result, 'second');
  assert.equal(failing.callsOf('web3_clientVersion').length, 1, 'skipped during its cooldown');
  assert.equal(alive.callsOf('web3_clientVersion').length, 2);
  clock.advance(5_000);
  failing.behaviour.status = undefined;
  assert.equal((await gateway.post('/v1/sepolia', version)).json.result, 'first', 'back in first place once healthy');
});

test('a slow upstream times out and the next one answers', { timeout: 10_000 }, async (t) => {
  const slow = await startFakeUpstream(t);
  slow.behaviour.delayMs = 2_000;
  const alive = await startFakeUpstream(t);
  const gateway = await gatewayOver(t, [slow.url, alive.url]);
  const started = Date.now();
  assert.equal((await gateway.post('/v1/sepolia', rpc('eth_blockNumber'))).json.result, '0x10');
  assert.ok(Date.now() - started < 1_500, 'gave up on the slow node after upstream_timeout_ms');
});

test('when every upstream fails the client gets -32603 that names no URL, key or cause', { timeout: 10_000 }, async (t) => {
  const failing = await startFakeUpstream(t);
  failing.behaviour.status = 502;
  const gateway = await gatewayOver(t, [await deadUrl(), failing.url]);
  const answer = await gateway.post('/v1/sepolia', [rpc('eth_blockNumber', [], 1), rpc('eth_chainId', [], 2)]);
  assert.equal(answer.status, 200);
  for (const member of answer.json) {
    assert.deepEqual(member.error, { code: -32603, message: 'No upstream node of sepolia answered (2 tried); try again later.' });
  }
  assert.doesNotMatch(answer.text, /127\.0\.0\.1|secret-api-key|10\.0\.0\.7|ECONNREFUSED|502/);
});

test('JSON-RPC errors from a node are answers: passed through unchanged, no failover', { timeout: 10_000 }, async (t) => {
  const first = await startFakeUpstream(t);
  first.behaviour.error = { code: -32000, message: 'nonce too low: next nonce 5, tx nonce 1', data: { hint: 'x' } };
  const second = await startFakeUpstream(t);
  const gateway = await gatewayOver(t, [first.url, second.url]);
  const answer = await gateway.post('/v1/sepolia', rpc('eth_sendRawTransaction', [RAW_TX]));
  assert.deepEqual(answer.json.error, first.behaviour.error);
  assert.equal(second.calls.length, 0);
});

test('eth_sendRawTransaction is not retried on another upstream once sent, but is when the connection was refused', { timeout: 10_000 }, async (t) => {
  const failing = await startFakeUpstream(t);
  failing.behaviour.status = 500;
  const second = await startFakeUpstream(t);
  const gateway = await gatewayOver(t, [failing.url, second.url]);
  const answer = await gateway.post('/v1/sepolia', rpc('eth_sendRawTransaction', [RAW_TX]));
  assert.equal(answer.json.error.code, -32603);
  assert.match(answer.json.error.message, /failed while taking the transaction; it was not sent to another node/);
  assert.equal(failing.callsOf('eth_sendRawTransaction').length, 1);
  assert.equal(second.callsOf('eth_sendRawTransaction').length, 0);

  const alive = await startFakeUpstream(t);
  const refused = await gatewayOver(t, [await deadUrl(), alive.url]);
  assert.equal((await refused.post('/v1/sepolia', rpc('eth_sendRawTransaction', [RAW_TX]))).json.result, `0x${'ab'.repeat(32)}`);
  assert.equal(alive.callsOf('eth_sendRawTransaction').length, 1);
});

test('eth_sendRawTransaction is never cached or deduplicated', { timeout: 10_000 }, async (t) => {
  const node = await startFakeUpstream(t);
  node.behaviour.delayMs = 50;
  const gateway = await gatewayOver(t, [node.url]);
  await Promise.all([1, 2, 3].map((id) => gateway.post('/v1/sepolia', rpc('eth_sendRawTransaction', [RAW_TX], id))));
  await gateway.post('/v1/sepolia', rpc('eth_sendRawTransaction', [RAW_TX]));
  assert.equal(node.callsOf('eth_sendRawTransaction').length, 4);
});

test('identical reads in flight share one upstream call', { timeout: 10_000 }, async (t) => {
  const node = await startFakeUpstream(t);
  node.behaviour.delayMs = 100;
  const gateway = await gatewayOver(t, [node.url]);
  const answers = await Promise.all([1, 2, 3, 4, 5].map((id) => gateway.post('/v1/sepolia', rpc('eth_blockNumber', [], id))));
  assert.deepEqual(
    answers.map((a) => a.json.id),
    [1, 2, 3, 4, 5],
  );
  assert.ok(answers.every((a) => a.json.result === '0x10'));
  assert.equal(node.callsOf('eth_blockNumber').length, 1);
  // A batch of identical members is deduplicated the same way.
  await gateway.post('/v1/sepolia', [rpc('eth_gasPrice', [], 1), rpc('eth_gasPrice', [], 2)]);
  assert.equal(node.callsOf('eth_gasPrice').length, 1);
});

test('the cache keeps what cannot change: chain id, and blocks and receipts at or below the finalized head', { timeout: 10_000 }, async (t) => {
  const node = await startFakeUpstream(t);
  const gateway = await gatewayOver(t, [node.url]);
  const cacheOf = async (body: unknown) => (await gateway.post('/v1/sepolia', body)).headers.get('x-edgeport-cache');
  assert.equal(await cacheOf(rpc('eth_chainId')), 'MISS');
  assert.equal(await cacheOf(rpc('eth_chainId')), 'HIT');
  assert.equal(node.callsOf('eth_chainId').length, 1);
  // The head and reads at `latest` are kept while the head stays put, from the second head seen (head-cache.test.ts).
  assert.equal(await cacheOf(rpc('eth_blockNumber')), 'MISS');
  assert.equal(await cacheOf(rpc('eth_blockNumber')), 'MISS');
  assert.equal(await cacheOf(rpc('eth_blockNumber')), 'HIT');
  // The finalized head (0x10) is learned in the background once answers start coming.
  await waitFor(() => node.callsOf('eth_getBlockByNumber').some((c) => c.params[0] === 'finalized'));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(await cacheOf(rpc('eth_getBlockByNumber', ['0x5', false])), 'MISS');
  assert.equal(await cacheOf(rpc('eth_getBlockByNumber', ['0x5', false], 'other id')), 'HIT');
  assert.equal(await cacheOf(rpc('eth_getBlockByNumber', ['0x5', true])), 'MISS', 'params are part of the key');
  // Other tags move on their own; blocks past the finalized head may be reorganised; null is "not yet".
  for (const params of [
    ['pending', false],
    ['finalized', false],
    ['0x11', false],
    ['0x99', false],
  ]) {
    await gateway.post('/v1/sepolia', rpc('eth_getBlockByNumber', params));
    assert.equal(await cacheOf(rpc('eth_getBlockByNumber', params)), 'MISS', JSON.stringify(params));
  }
  const receipt = rpc('eth_getTransactionReceipt', [`0x${'cd'.repeat(32)}`]);
  await gateway.post('/v1/sepolia', receipt);
  assert.equal(await cacheOf(receipt), 'HIT', 'mined at 0xf, below the finalized head');
});

test('upstream answers are cached per network: the same call on another network asks its own node', { timeout: 10_000 }, async (t) => {
  const sepoliaNode = await startFakeUpstream(t);
  const otherNode = await startFakeUpstream(t, 17000);
  const gateway = await startGateway(t, {
    section: {
      networks: [
        { name: 'sepolia', upstreams: [sepoliaNode.url] },
        { name: 'holesky', chain_id: 17000, upstreams: [otherNode.url] },
      ],
    },
  });
  assert.equal((await gateway.post('/v1/sepolia', rpc('eth_chainId'))).json.result, '0xaa36a7');
  assert.equal((await gateway.post('/v1/holesky', rpc('eth_chainId'))).json.result, '0x4268');
});

test(
  "calls that run EVM code reach an upstream node with geth's 50M gas cap, not the embedded chain's; evm_gas_cap sets both",
  { timeout: 10_000 },
  async (t) => {
    const node = await startFakeUpstream(t);
    const gateway = await gatewayOver(t, [node.url]);
    const call = { to: `0x${'22'.repeat(20)}`, data: '0x70a08231', gas: '0x3b9aca00' };
    await gateway.post('/v1/sepolia', rpc('eth_call', [call, 'latest']));
    await gateway.post('/v1/sepolia', rpc('eth_estimateGas', [{ to: call.to, data: call.data }]));
    const [sentCall] = node.callsOf('eth_call');
    const [sentEstimate] = node.callsOf('eth_estimateGas');
    assert.equal((sentCall!.params[0] as { gas: string }).gas, '0x2faf080');
    assert.equal((sentEstimate!.params[0] as { gas: string }).gas, '0x2faf080');

    const capped = await startFakeUpstream(t);
    const tight = await gatewayOver(t, [capped.url], new FakeClock(), { evm_gas_cap: 100_000 });
    await tight.post('/v1/sepolia', rpc('eth_call', [call, 'latest']));
    assert.equal((capped.callsOf('eth_call')[0]!.params[0] as { gas: string }).gas, '0x186a0');
  },
);
