/**
 * Answers that depend on the head (eth_blockNumber, reads at `latest`) are served from memory and
 * never stale once a transaction's hash is out: on the embedded chain, through an upstream (a
 * second edgeport, and Anvil), with readers asking the same calls all the while; and through an
 * upstream whose head moves without the gateway, within the refresh period.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { FakeClock } from '../../src/core/clock.ts';
import { DEV_ACCOUNTS } from '../../src/gateway/index.ts';
import { anvilInstalled, startAnvil } from './anvil.ts';
import { startFakeUpstream } from './fake-upstream.ts';
import { rpc, startGateway, waitFor, type RunningGateway } from './helpers.ts';

const SEPOLIA = 11155111;
const ANVIL_CHAIN_ID = 31337;

/**
 * Sends `count` transactions through `path`, with three readers asking the head, a balance and a
 * nonce at `latest` the whole time; after each hash comes back, the very next calls (bodies the
 * cache has answered before) see the new block, the receipt, the balance and the nonce.
 * `nodeCaughtUp` waits until the node itself shows the block: Anvil may answer a hash a moment
 * before (the gateway must then add no delay of its own).
 */
async function transactionsShowAtOnce(
  gateway: RunningGateway,
  path: string,
  chainId: number,
  count = 5,
  nodeCaughtUp: (head: bigint) => Promise<void> = async () => {},
): Promise<void> {
  const sender = privateKeyToAccount(DEV_ACCOUNTS[3]!.privateKey);
  const recipient = DEV_ACCOUNTS[4]!.address;
  const call = async (method: string, params: unknown[]) => {
    const answer = await gateway.post(path, rpc(method, params));
    assert.equal(answer.json.error, undefined, `${method}: ${answer.text}`);
    return answer;
  };
  const quantity = async (method: string, params: unknown[]) => BigInt((await call(method, params)).json.result);

  let head = await quantity('eth_blockNumber', []);
  for (let i = 0; i < 2; i++)
    await Promise.all([
      call('eth_blockNumber', []),
      call('eth_getBalance', [recipient, 'latest']),
      call('eth_getTransactionCount', [sender.address, 'latest']),
    ]);
  assert.equal((await call('eth_blockNumber', [])).headers.get('x-edgeport-cache'), 'HIT', 'the head is answered from memory');
  assert.equal((await call('eth_getBalance', [recipient, 'latest'])).headers.get('x-edgeport-cache'), 'HIT');

  let reading = true;
  const readers = Promise.all(
    [0, 1, 2].map(async () => {
      while (reading)
        await Promise.all([
          call('eth_blockNumber', []),
          call('eth_getBalance', [recipient, 'latest']),
          call('eth_getTransactionCount', [sender.address, 'latest']),
        ]);
    }),
  );
  try {
    for (let i = 0; i < count; i++) {
      const nonce = await quantity('eth_getTransactionCount', [sender.address, 'latest']);
      const balance = await quantity('eth_getBalance', [recipient, 'latest']);
      const raw = await sender.signTransaction({
        chainId,
        type: 'eip1559',
        to: recipient,
        value: 1000n,
        nonce: Number(nonce),
        gas: 21_000n,
        maxFeePerGas: 30_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      });
      const hash = (await call('eth_sendRawTransaction', [raw])).json.result as string;
      assert.match(hash, /^0x[0-9a-f]{64}$/);
      await nodeCaughtUp(head);
      const number = await quantity('eth_blockNumber', []);
      assert.ok(number > head, `transaction ${i + 1}: the head moved past ${head} (got ${number})`);
      head = number;
      const receipt = (await call('eth_getTransactionReceipt', [hash])).json.result;
      assert.equal(receipt?.status, '0x1', `transaction ${i + 1}: its receipt is there`);
      assert.equal(BigInt(receipt.blockNumber), number, 'the receipt is in the new head');
      assert.equal(await quantity('eth_getBalance', [recipient, 'latest']), balance + 1000n);
      assert.equal(await quantity('eth_getTransactionCount', [sender.address, 'latest']), nonce + 1n);
    }
  } finally {
    reading = false;
    await readers;
  }
}

test("embedded chain: after a transaction's hash comes back, the next calls see its block, receipt, balance and nonce", { timeout: 60_000 }, async (t) => {
  const gateway = await startGateway(t, { section: { rate_limit: { requests_per_second: 0 } } });
  await transactionsShowAtOnce(gateway, '/v1/sepolia', SEPOLIA);
});

test("through an upstream (another edgeport): after a transaction's hash comes back, the next calls see it", { timeout: 60_000 }, async (t) => {
  const node = await startGateway(t, { section: { rate_limit: { requests_per_second: 0 } } });
  const gateway = await startGateway(t, {
    section: { rate_limit: { requests_per_second: 0 }, networks: [{ name: 'sepolia', upstreams: [`${node.origin}/v1/sepolia`] }] },
  });
  await transactionsShowAtOnce(gateway, '/v1/sepolia', SEPOLIA);
});

test(
  "through Anvil as the upstream: after a transaction's hash comes back, the next calls see it",
  { timeout: 60_000, skip: anvilInstalled() ? false : 'Anvil has no binary for this platform' },
  async (t) => {
    const anvil = await startAnvil(t);
    const gateway = await startGateway(t, {
      section: { rate_limit: { requests_per_second: 0 }, networks: [{ name: 'anvil', chain_id: ANVIL_CHAIN_ID, upstreams: [anvil] }] },
    });
    const anvilHead = async () => {
      const response = await fetch(anvil, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rpc('eth_blockNumber')) });
      return BigInt(((await response.json()) as { result: string }).result);
    };
    // More transactions: Anvil answers a few in a hundred before their block shows.
    await transactionsShowAtOnce(gateway, '/v1/anvil', ANVIL_CHAIN_ID, 60, async (head) => {
      const deadline = Date.now() + 5_000;
      while ((await anvilHead()) <= head) {
        assert.ok(Date.now() < deadline, 'Anvil mined the transaction within 5 s');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });
  },
);

test("an upstream's head is asked every second while calls come in; an answer not confirmed for two seconds is not used", { timeout: 10_000 }, async (t) => {
  const clock = new FakeClock();
  const node = await startFakeUpstream(t);
  const gateway = await startGateway(t, { clock, section: { networks: [{ name: 'sepolia', upstreams: [node.url] }] } });
  const head = async (expected: string, cache: string) => {
    const answer = await gateway.post('/v1/sepolia', rpc('eth_blockNumber'));
    assert.deepEqual([answer.json.result, answer.headers.get('x-edgeport-cache')], [expected, cache]);
  };
  /** A call one refresh period later: answered from memory while it starts a head check, which is waited for. */
  const checkHead = async (expected: string) => {
    const asked = node.callsOf('eth_blockNumber').length;
    clock.advance(1_000);
    await head(expected, 'HIT');
    await waitFor(() => node.callsOf('eth_blockNumber').length === asked + 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
  };

  await head('0x10', 'MISS');
  // The first head seen moves the epoch: nothing kept before it was compared with one.
  await head('0x10', 'MISS');
  await head('0x10', 'HIT');
  // A head that did not move keeps the answers.
  await checkHead('0x10');
  await head('0x10', 'HIT');
  // The node's head moves without the gateway: answered from memory until the next check finds it.
  node.head = 0x11;
  await head('0x10', 'HIT');
  await checkHead('0x10');
  await head('0x11', 'MISS');
  // After two idle periods nothing kept is used, before any check has answered.
  node.head = 0x12;
  clock.advance(2_000);
  await head('0x12', 'MISS');
});
