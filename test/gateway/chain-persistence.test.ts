/** The embedded chain persists in the data dir: state, blocks and hashes survive a restart. */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createPublicClient, createWalletClient, http, parseEther } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { sepolia } from 'viem/chains';
import { DEV_ACCOUNTS, DEV_MNEMONIC } from '../../src/gateway/index.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { startGateway } from './helpers.ts';

test('transactions sent before a restart are there after it, with the same block hashes', { timeout: 10_000 }, async (t) => {
  const dataDir = tempDir(t);
  const to = DEV_ACCOUNTS[4]!.address;
  const first = await startGateway(t, { dataDir });
  const url = `${first.origin}/v1/sepolia`;
  const wallet = createWalletClient({ chain: sepolia, transport: http(url, { retryCount: 0 }), account: mnemonicToAccount(DEV_MNEMONIC) });
  const reader = createPublicClient({ chain: sepolia, transport: http(url, { retryCount: 0 }) });
  const hashes = [await wallet.sendTransaction({ to, value: parseEther('1') }), await wallet.sendTransaction({ to, value: parseEther('2') })];
  const block2 = await reader.getBlock({ blockNumber: 2n });
  await first.stop();
  assert.deepEqual(readdirSync(join(dataDir, 'gateway')), ['sepolia.chain.ndjson']);
  assert.equal(
    readFileSync(join(dataDir, 'gateway', 'sepolia.chain.ndjson'), 'utf8')
      .trim()
      .split('\n').length,
    3,
    'header and two transactions',
  );

  const second = await startGateway(t, { dataDir });
  const again = createPublicClient({ chain: sepolia, transport: http(`${second.origin}/v1/sepolia`, { retryCount: 0 }) });
  assert.equal(await again.getBlockNumber(), 2n);
  assert.equal(await again.getBalance({ address: to }), parseEther('10003'));
  assert.equal((await again.getBlock({ blockNumber: 2n })).hash, block2.hash);
  assert.equal((await again.getTransactionReceipt({ hash: hashes[1]! })).status, 'success');
  const wallet2 = createWalletClient({
    chain: sepolia,
    transport: http(`${second.origin}/v1/sepolia`, { retryCount: 0 }),
    account: mnemonicToAccount(DEV_MNEMONIC),
  });
  await wallet2.sendTransaction({ to, value: 1n });
  assert.equal(await again.getTransactionCount({ address: DEV_ACCOUNTS[0]!.address }), 3);
});

test('a journal that does not fit (another chain id, or unreadable) is moved aside and a fresh chain starts', { timeout: 10_000 }, async (t) => {
  const dataDir = tempDir(t);
  const first = await startGateway(t, { dataDir });
  await first.stop();
  const journal = join(dataDir, 'gateway', 'sepolia.chain.ndjson');
  writeFileSync(journal, readFileSync(journal, 'utf8').replace('"chainId":11155111', '"chainId":1'));
  const second = await startGateway(t, { dataDir });
  assert.equal((await second.post('/v1/sepolia', { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' })).json.result, '0x0');
  await second.stop();
  const files = readdirSync(join(dataDir, 'gateway')).sort();
  assert.equal(files.length, 2);
  assert.match(files[1]!, /^sepolia\.chain\.ndjson\..+\.unused$/);

  // A transaction the chain refuses on replay: the journal is kept aside, the network still serves.
  writeFileSync(journal, `${readFileSync(journal, 'utf8')}{"t":"0x1","raw":"0x02deadbeef"}\n{"t":"0x2","raw":"0x0`);
  const third = await startGateway(t, { dataDir });
  assert.equal((await third.post('/v1/sepolia', { jsonrpc: '2.0', id: 1, method: 'eth_chainId' })).json.result, '0xaa36a7');
  assert.equal(readdirSync(join(dataDir, 'gateway')).filter((f) => f.endsWith('.unused')).length, 2);
});

test('after replaying old blocks, new blocks carry the wall-clock time again', { timeout: 10_000 }, async (t) => {
  const dataDir = tempDir(t);
  const account = mnemonicToAccount(DEV_MNEMONIC);
  const sign = (nonce: number) =>
    account.signTransaction({
      chainId: 11155111,
      type: 'eip1559',
      to: account.address,
      value: 1n,
      nonce,
      gas: 21000n,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
  const dayAgo = Math.floor(Date.now() / 1000) - 86_400;
  mkdirSync(join(dataDir, 'gateway'));
  writeFileSync(
    join(dataDir, 'gateway', 'sepolia.chain.ndjson'),
    [
      JSON.stringify({ format: 'edgeport-chain-journal', version: 1, chainId: 11155111, genesisTime: dayAgo }),
      JSON.stringify({ t: `0x${(dayAgo + 12).toString(16)}`, raw: await sign(0) }),
      '',
    ].join('\n'),
  );
  const gateway = await startGateway(t, { dataDir });
  const block1 = await gateway.post('/v1/sepolia', { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['0x1', false] });
  assert.equal(Number(block1.json.result.timestamp), dayAgo + 12, 'replayed at its journaled time');
  await gateway.post('/v1/sepolia', { jsonrpc: '2.0', id: 2, method: 'eth_sendRawTransaction', params: [await sign(1)] });
  const block2 = await gateway.post('/v1/sepolia', { jsonrpc: '2.0', id: 3, method: 'eth_getBlockByNumber', params: ['0x2', false] });
  assert.ok(Math.abs(Number(block2.json.result.timestamp) - Date.now() / 1000) < 5, 'mined now, not a day ago');
});
