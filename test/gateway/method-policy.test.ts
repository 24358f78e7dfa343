/** Method policy: the real gateway's list by default, built-in refusals, configured allow and deny. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/load.ts';
import { BUILT_IN_REFUSALS, createMethodPolicy, DEFAULT_ALLOWED_METHODS } from '../../src/gateway/method-policy.ts';

const defaults = createMethodPolicy({ allowMethods: [], denyMethods: [] });

test("every method of the real gateway's list is served, and nothing refused is on it", { timeout: 10_000 }, () => {
  assert.equal(DEFAULT_ALLOWED_METHODS.length, 33);
  for (const method of DEFAULT_ALLOWED_METHODS) assert.equal(defaults.check(method), undefined, method);
  for (const method of ['eth_maxPriorityFeePerGas', 'eth_blobBaseFee', 'eth_getBlockReceipts', 'eth_createAccessList', 'rpc.discover', '']) {
    assert.equal(defaults.check(method)?.code, 'GATEWAY_METHOD_NOT_FOUND', method);
  }
});

test('account, administration and development-node methods are refused by pattern', { timeout: 10_000 }, () => {
  for (const method of [
    'eth_signTypedData_v4',
    'personal_sign',
    'admin_nodeInfo',
    'debug_traceCall',
    'miner_setEtherbase',
    'txpool_content',
    'hardhat_mine',
    'evm_setAutomine',
    'anvil_setBalance',
    'eth_getFilterChanges',
  ]) {
    const error = defaults.check(method);
    assert.equal(error?.code, 'GATEWAY_METHOD_REFUSED', method);
    assert.equal(error?.rpcCode, -32601);
  }
  assert.ok(BUILT_IN_REFUSALS.every((group) => group.reason.length > 0));
});

test('config allows more methods and refuses listed ones; deny wins, built-ins cannot be allowed', { timeout: 10_000 }, () => {
  const policy = createMethodPolicy({ allowMethods: ['eth_maxPriorityFeePerGas', 'eth_blob*'], denyMethods: ['eth_getProof', 'trace_*'] });
  assert.equal(policy.check('eth_maxPriorityFeePerGas'), undefined);
  assert.equal(policy.check('eth_blobBaseFee'), undefined);
  assert.match(policy.check('eth_getProof')?.message ?? '', /refused by this gateway's configuration \(gateway\.deny_methods\)/);
  assert.equal(policy.check('trace_filter')?.code, 'GATEWAY_METHOD_REFUSED');
  assert.throws(
    () => createMethodPolicy({ allowMethods: ['eth_chainId', 'evm_mine', 'hardhat_*'], denyMethods: [] }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(
        error.message,
        'gateway.allow_methods: "evm_mine", "hardhat_*" cannot be allowed: the gateway always refuses them (it controls a development node).',
      );
      return true;
    },
  );
});

test('a broad allow pattern never lets a built-in refusal through', { timeout: 10_000 }, () => {
  const policy = createMethodPolicy({ allowMethods: ['eth_*'], denyMethods: [] });
  assert.equal(policy.check('eth_getBlockReceipts'), undefined);
  assert.equal(policy.check('eth_sendTransaction')?.code, 'GATEWAY_METHOD_REFUSED');
  assert.equal(policy.check('eth_sendTransaction')?.code, 'GATEWAY_METHOD_REFUSED', 'refusals are never memoized as served');
});
