/** The funded development accounts are exactly those of the standard mnemonic. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { describeDevAccounts, DEV_ACCOUNTS, DEV_MNEMONIC } from '../../src/gateway/backends/dev-accounts.ts';

test('each table entry is the BIP-44 account of its index, and its key signs for its address', { timeout: 10_000 }, () => {
  assert.equal(DEV_ACCOUNTS.length, 10);
  DEV_ACCOUNTS.forEach((account, i) => {
    assert.equal(mnemonicToAccount(DEV_MNEMONIC, { addressIndex: i }).address, account.address, `#${i}`);
    assert.equal(privateKeyToAccount(account.privateKey).address, account.address, `#${i} key`);
  });
});

test('the banner lists every account with its private key, under a title that says so', { timeout: 5_000 }, () => {
  const lines = describeDevAccounts('sepolia');
  assert.match(
    lines[0]!,
    /^Embedded chain sepolia: 10 funded development accounts, 10000 ETH each, with their private keys\. These keys are publicly known \(mnemonic "test test .* junk"\)/,
  );
  assert.doesNotMatch(lines[0]!, /public keys/, 'they are private keys, however well known');
  assert.equal(lines.length, 11);
  assert.equal(lines[1], `  #0 ${DEV_ACCOUNTS[0]!.address} private key ${DEV_ACCOUNTS[0]!.privateKey}`);
});
