/** viem against /v1/sepolia on the embedded chain: reads, eth_call, gas, a signed transaction, batches. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BaseError,
  CallExecutionError,
  createPublicClient,
  createWalletClient,
  http,
  MethodNotFoundRpcError,
  parseEther,
  ResourceUnavailableRpcError,
  type Hex,
} from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { sepolia } from 'viem/chains';
import { FakeClock } from '../../src/core/clock.ts';
import { DEV_ACCOUNTS, DEV_MNEMONIC } from '../../src/gateway/index.ts';
import { startGateway } from './helpers.ts';

/** Init code whose execution returns 42 as a uint256. */
const RETURNS_42: Hex = '0x602a60005260206000f3';
/** ABI encoding of Error("nope"), 100 bytes. */
const NOPE_DATA = '08c379a0' + '20'.padStart(64, '0') + '4'.padStart(64, '0') + '6e6f7065'.padEnd(64, '0');
/** Init code that reverts with Error("nope"): CODECOPY the 100 bytes after this 12-byte prefix, REVERT with them. */
const REVERTS_NOPE: Hex = `0x6064600c6000396064 6000fd${NOPE_DATA}`.replace(' ', '') as Hex;
/** Init code deploying RETURNS_42 as runtime code: PUSH10 <runtime> PUSH1 0 MSTORE PUSH1 10 PUSH1 22 RETURN. */
const DEPLOYS_42: Hex = '0x69602a60005260206000f3600052600a6016f3';

function clients(url: string, batch = false) {
  const transport = http(url, { retryCount: 0, batch });
  return {
    publicClient: createPublicClient({ chain: sepolia, transport, pollingInterval: 20 }),
    wallet: createWalletClient({ chain: sepolia, transport, account: mnemonicToAccount(DEV_MNEMONIC) }),
  };
}

test('viem reads chain id, block number, blocks by number (a hex number and a boolean) and balances', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t);
  const { publicClient } = clients(`${gateway.origin}/v1/sepolia`);
  assert.equal(await publicClient.getChainId(), 11155111);
  assert.equal(typeof (await publicClient.getBlockNumber()), 'bigint');
  const genesis = await publicClient.getBlock({ blockNumber: 0n });
  assert.equal(genesis.number, 0n);
  assert.match(genesis.hash, /^0x[0-9a-f]{64}$/);
  assert.equal(await publicClient.getBalance({ address: DEV_ACCOUNTS[9]!.address }), parseEther('10000'));
});

test('viem eth_call returns data, a revert carries its reason, eth_estimateGas prices a transfer', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t);
  const { publicClient } = clients(`${gateway.origin}/v1/sepolia`);
  const { data } = await publicClient.call({ data: RETURNS_42 });
  assert.equal(BigInt(data!), 42n);
  await assert.rejects(publicClient.call({ data: REVERTS_NOPE }), (error: unknown) => {
    assert.ok(error instanceof CallExecutionError);
    assert.equal(error.shortMessage, 'Execution reverted with reason: nope.');
    return true;
  });
  const gas = await publicClient.estimateGas({ account: DEV_ACCOUNTS[0]!.address, to: DEV_ACCOUNTS[1]!.address, value: 1n });
  // EDR's binary search lands one above the intrinsic 21000 of a plain transfer.
  assert.ok(gas >= 21000n && gas <= 21001n, `estimate ${gas}`);
});

test('viem signs a transaction locally, sends it raw and reads its receipt; a deployed contract answers eth_call', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t);
  const { publicClient, wallet } = clients(`${gateway.origin}/v1/sepolia`);
  const to = DEV_ACCOUNTS[5]!.address;
  const hash = await wallet.sendTransaction({ to, value: parseEther('1.5') });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  assert.equal(receipt.status, 'success');
  assert.equal(receipt.transactionHash, hash);
  assert.equal(await publicClient.getBalance({ address: to }), parseEther('10001.5'));
  const tx = await publicClient.getTransaction({ hash });
  assert.equal(tx.from.toLowerCase(), DEV_ACCOUNTS[0]!.address.toLowerCase());

  const deployHash = await wallet.sendTransaction({ data: DEPLOYS_42 });
  const deployed = await publicClient.waitForTransactionReceipt({ hash: deployHash, pollingInterval: 20 });
  assert.ok(deployed.contractAddress);
  assert.equal(await publicClient.getCode({ address: deployed.contractAddress }), RETURNS_42);
  const { data } = await publicClient.call({ to: deployed.contractAddress });
  assert.equal(BigInt(data!), 42n);
});

test('viem with a batching transport gets every answer matched to its call', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t);
  const { publicClient } = clients(`${gateway.origin}/v1/sepolia`, true);
  const [chainId, block, balance, count] = await Promise.all([
    publicClient.getChainId(),
    publicClient.getBlock({ blockNumber: 0n }),
    publicClient.getBalance({ address: DEV_ACCOUNTS[3]!.address }),
    publicClient.getTransactionCount({ address: DEV_ACCOUNTS[3]!.address }),
  ]);
  assert.equal(chainId, 11155111);
  assert.equal(block.number, 0n);
  assert.equal(balance, parseEther('10000'));
  assert.equal(count, 0);
});

test('viem reports refused methods and the retired network as typed RPC errors, after one request each', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t, { clock: new FakeClock(new Date('2026-01-01T00:00:00Z')) });
  const { publicClient } = clients(`${gateway.origin}/v1/sepolia`);
  const request = publicClient.request as (args: { method: string }) => Promise<unknown>;
  await assert.rejects(request({ method: 'eth_accounts' }), (error: unknown) => {
    assert.ok(error instanceof BaseError);
    assert.ok(error.walk((e) => e instanceof MethodNotFoundRpcError));
    assert.match(error.message, /eth_accounts is refused by this gateway: it needs accounts held by the node/);
    return true;
  });
  const rinkeby = createPublicClient({ transport: http(`${gateway.origin}/v1/rinkeby`, { retryCount: 0 }) });
  await assert.rejects(rinkeby.getBlockNumber(), (error: unknown) => {
    assert.ok(error instanceof BaseError);
    assert.ok(error.walk((e) => e instanceof ResourceUnavailableRpcError));
    assert.match(error.message, /rinkeby was retired on 2023-01-30.*\/v1\/sepolia/s);
    return true;
  });
});
