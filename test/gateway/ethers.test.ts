/** ethers v6 (which batches by default) against /v1/sepolia on the embedded chain. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonRpcProvider, Network, parseEther, Wallet } from 'ethers';
import { FakeClock } from '../../src/core/clock.ts';
import { DEV_ACCOUNTS, DEV_MNEMONIC } from '../../src/gateway/index.ts';
import { startGateway } from './helpers.ts';

function provider(url: string, t: { after(fn: () => void): void }): JsonRpcProvider {
  const created = new JsonRpcProvider(url, undefined, { pollingInterval: 20 });
  t.after(() => created.destroy());
  return created;
}

test('ethers detects sepolia, reads blocks and balances, sends a signed transaction and waits for it', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t);
  const client = provider(`${gateway.origin}/v1/sepolia`, t);
  const network = await client.getNetwork();
  assert.equal(network.chainId, 11155111n);
  assert.equal(network.name, 'sepolia');
  const genesis = await client.getBlock(0);
  assert.equal(genesis?.number, 0);
  assert.equal(await client.getBalance(DEV_ACCOUNTS[8]!.address), parseEther('10000'));

  const wallet = Wallet.fromPhrase(DEV_MNEMONIC, client);
  assert.equal(wallet.address, DEV_ACCOUNTS[0]!.address);
  const sent = await wallet.sendTransaction({ to: DEV_ACCOUNTS[7]!.address, value: parseEther('2') });
  const receipt = await sent.wait();
  assert.equal(receipt?.status, 1);
  assert.equal((await client.getTransactionReceipt(sent.hash))?.blockNumber, receipt?.blockNumber);
  assert.equal(await client.getBalance(DEV_ACCOUNTS[7]!.address), parseEther('10002'));
});

test('ethers reads the retired-network error from the JSON-RPC body (HTTP 200), and the same call on sepolia works', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t, { clock: new FakeClock(new Date('2024-06-01T00:00:00Z')) });
  const staticRinkeby = new JsonRpcProvider(`${gateway.origin}/v1/rinkeby`, Network.from(4), { staticNetwork: true });
  t.after(() => staticRinkeby.destroy());
  await assert.rejects(staticRinkeby.getBlockNumber(), (error: Error & { error?: { code: number; message: string } }) => {
    assert.equal(error.error?.code, -32002);
    assert.match(error.error?.message ?? '', /retired on 2023-01-30.*from \/v1\/rinkeby to \/v1\/sepolia/);
    return true;
  });
  const sepolia = provider(`${gateway.origin}/v1/sepolia`, t);
  assert.equal(typeof (await sepolia.getBlockNumber()), 'number');
});
