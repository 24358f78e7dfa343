/**
 * Calls that run EVM code are bounded on the real embedded chain over real HTTP: gas is cut to
 * the cap, a call past the time cap answers geth's timeout error, each client runs one at a time
 * within its budget of chain time, a batch of endless calls is mostly refused at once, and cheap
 * reads from another client keep answering meanwhile.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Agent } from 'undici';
import { privateKeyToAccount } from 'viem/accounts';
import { FakeClock } from '../../src/core/clock.ts';
import { GATEWAY_DEFAULTS } from '../../src/config/defaults.ts';
import { DEV_ACCOUNTS } from '../../src/gateway/backends/dev-accounts.ts';
import { rpc, startGateway, type RunningGateway } from './helpers.ts';

const SEPOLIA = '/v1/sepolia';
/** JUMPDEST PUSH1 0 JUMP: loops until the gas runs out; a trailing byte (never reached) makes each call a new one for the cache. */
const endless = (n: number) => ({ data: `0x5b600056${(n % 256).toString(16).padStart(2, '0')}${'00'.repeat(Math.floor(n / 256))}` });
/** GAS PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: answers the gas left when it ran. */
const GAS_LEFT = { data: '0x5a60005260206000f3' };

/** POSTs from another loopback address (127.0.0.2): another client to the gateway. */
function otherClient(t: { after: (fn: () => unknown) => void }, gateway: RunningGateway) {
  const agent = new Agent({ localAddress: '127.0.0.2' });
  t.after(() => agent.close());
  return async (body: unknown) => {
    const response = await fetch(`${gateway.origin}${SEPOLIA}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      dispatcher: agent,
    } as RequestInit);
    return { status: response.status, json: (await response.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON-RPC answers
  };
}

test(
  'a call asking for more gas than the cap runs with the cap; one asking for less keeps its gas; estimateGas still prices a transfer',
  { timeout: 30_000 },
  async (t) => {
    const gateway = await startGateway(t, { section: { evm_gas_cap: 100_000 } });
    const left = async (gas?: string) =>
      BigInt((await gateway.post(SEPOLIA, rpc('eth_call', [{ ...GAS_LEFT, ...(gas ? { gas } : {}) }, 'latest']))).json.result);
    const asked50M = await left('0x2faf080');
    assert.ok(asked50M < 100_000n && asked50M > 40_000n, `gas left with 50M asked: ${asked50M}`);
    assert.equal(await left(), asked50M, 'no gas given is the cap too');
    const asked60k = await left('0xea60');
    assert.ok(asked60k < 60_000n - 53_000n && asked60k > 0n, `less than the cap is kept (a creation's intrinsic gas is 53k): ${asked60k} left`);
    const estimate = await gateway.post(
      SEPOLIA,
      rpc('eth_estimateGas', [{ from: DEV_ACCOUNTS[0]!.address, to: DEV_ACCOUNTS[1]!.address, value: '0x1', gas: '0x2faf080' }]),
    );
    // EDR's binary search lands one above the intrinsic 21000 of a plain transfer.
    assert.ok(['0x5208', '0x5209'].includes(estimate.json.result), JSON.stringify(estimate.json));
    const loop = await gateway.post(SEPOLIA, rpc('eth_call', [{ ...endless(1), gas: '0x2faf080' }, 'latest']));
    assert.deepEqual(loop.json.error, { code: -32000, message: 'out of gas' });
    const tooMuchData = await gateway.post(SEPOLIA, rpc('eth_call', [{ to: DEV_ACCOUNTS[1]!.address, data: `0x${'00'.repeat(20_000)}` }, 'latest']));
    assert.deepEqual(tooMuchData.json.error, {
      code: -32000,
      message: "intrinsic gas too high: the call's 20000 bytes of data need at least 101000 gas, over this gateway's gas cap of 100000 per call",
    });
  },
);

test('the default gas cap cuts an endless eth_call with geth\'s "out of gas", quickly', { timeout: 30_000 }, async (t) => {
  assert.ok(GATEWAY_DEFAULTS.evmGasCap.embedded <= 50_000_000);
  const gateway = await startGateway(t);
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    const answer = await gateway.post(SEPOLIA, rpc('eth_call', [endless(10 + i), 'latest'], i));
    const ms = performance.now() - started;
    t.diagnostic(`endless eth_call ${i + 1}: "${answer.json.error?.message}" after ${ms.toFixed(0)} ms`);
    assert.deepEqual(answer.json, { jsonrpc: '2.0', id: i, error: { code: -32000, message: 'out of gas' } });
    assert.ok(ms < 2_000, `answered after ${ms} ms`);
  }
  const estimate = await gateway.post(SEPOLIA, rpc('eth_estimateGas', [endless(20)]));
  assert.equal(estimate.json.error.code, -32000);
});

test("a call past the time cap answers geth's timeout error at once, and the chain serves the next call", { timeout: 30_000 }, async (t) => {
  const gateway = await startGateway(t, { section: { evm_timeout_ms: 5 } });
  const started = performance.now();
  const answer = await gateway.post(SEPOLIA, rpc('eth_call', [endless(30), 'latest']));
  assert.deepEqual(answer.json.error, { code: -32000, message: 'execution aborted (timeout = 5ms)' });
  t.diagnostic(`timed out after ${(performance.now() - started).toFixed(0)} ms`);
  // The chain could not be stopped: the next EVM call starts once it has finished, and is cut off the same way.
  const next = await gateway.post(SEPOLIA, rpc('eth_call', [endless(31), 'latest']));
  assert.deepEqual(next.json.error, { code: -32000, message: 'execution aborted (timeout = 5ms)' });
  assert.equal((await gateway.post(SEPOLIA, rpc('eth_getBalance', [DEV_ACCOUNTS[2]!.address, 'latest']))).json.result, '0x21e19e0c9bab2400000');
});

test(
  'each client has a budget of chain time: a client that spent it is refused with -32005 until it refills, another client is not',
  { timeout: 30_000 },
  async (t) => {
    const clock = new FakeClock();
    const gateway = await startGateway(t, { clock, section: { evm_time_per_client: { ms_per_second: 10, burst_ms: 1 } } });
    const other = otherClient(t, gateway);
    // An endless call at the default cap takes tens of ms of chain time, far more than the 1 ms left: the bucket goes into debt.
    assert.equal((await gateway.post(SEPOLIA, rpc('eth_call', [endless(40), 'latest']))).json.error.message, 'out of gas');
    const refused = await gateway.post(SEPOLIA, rpc('eth_call', [endless(41), 'latest'], 'r'));
    assert.equal(refused.json.id, 'r');
    assert.equal(refused.json.error.code, -32005);
    assert.match(
      refused.json.error.message,
      /^Rate limit exceeded: this client's calls that run EVM code .* used its share of the chain's time \(10 ms per second\)\. Retry in \d+ s\.$/,
    );
    assert.equal(
      (await gateway.post(SEPOLIA, rpc('eth_getBalance', [DEV_ACCOUNTS[3]!.address, 'latest']))).json.result,
      '0x21e19e0c9bab2400000',
      'cheap reads are not counted',
    );
    assert.equal((await other(rpc('eth_call', [GAS_LEFT, 'latest']))).json.result.length, 66, 'another client has its own budget');
    clock.advance(600_000);
    assert.equal((await gateway.post(SEPOLIA, rpc('eth_call', [GAS_LEFT, 'latest']))).json.result.length, 66, 'refilled by the clock');
  },
);

test(
  "a batch of 1,000 endless calls is not 1,000 units of work: the excess is refused at once, and another client's calls answer meanwhile",
  { timeout: 60_000 },
  async (t) => {
    const gateway = await startGateway(t);
    const other = otherClient(t, gateway);
    const started = performance.now();
    const batch = gateway.post(
      SEPOLIA,
      Array.from({ length: 1_000 }, (_, i) => rpc('eth_call', [endless(100 + i), 'latest'], i)),
    );
    const honest: number[] = [];
    let done = false;
    void batch.finally(() => {
      done = true;
    });
    for (let i = 0; !done && i < 200; i++) {
      const asked = performance.now();
      const balance = await other(rpc('eth_getBalance', [DEV_ACCOUNTS[i % DEV_ACCOUNTS.length]!.address, 'latest']));
      honest.push(performance.now() - asked);
      assert.equal(balance.json.result, '0x21e19e0c9bab2400000');
      const call = await other(rpc('eth_call', [GAS_LEFT, 'latest'], i));
      assert.equal(call.json.result.length, 66);
    }
    const answers = (await batch).json as Array<{ id: number; error: { code: number; message: string } }>;
    const ms = performance.now() - started;
    const ran = answers.filter((a) => a.error.message === 'out of gas').length;
    const refused = answers.filter((a) => a.error.code === -32005).length;
    t.diagnostic(
      `batch of 1000 endless calls: ${ran} ran, ${refused} refused, answered in ${ms.toFixed(0)} ms; honest eth_getBalance meanwhile: ${honest.length} calls, slowest ${Math.max(0, ...honest).toFixed(0)} ms`,
    );
    assert.equal(answers.length, 1_000);
    assert.equal(ran + refused, 1_000);
    assert.ok(ran <= GATEWAY_DEFAULTS.maxQueuedEvmCallsPerClient + 1, `${ran} members ran`);
    assert.ok(Math.max(0, ...honest) < 1_000, `an honest call took ${Math.max(...honest)} ms`);
  },
);

test(
  'a raw transaction signed for more gas than the cap is refused before the embedded chain runs it; one within the cap is mined',
  { timeout: 30_000 },
  async (t) => {
    const gateway = await startGateway(t);
    const signer = privateKeyToAccount(DEV_ACCOUNTS[4]!.privateKey);
    const cap = GATEWAY_DEFAULTS.evmGasCap.embedded;
    // A contract creation whose init code loops until its gas runs out: the development keys are public, so anyone can send it.
    const sign = (gas: bigint, nonce: number) =>
      signer.signTransaction({
        type: 'eip1559',
        chainId: 11155111,
        nonce,
        gas,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 0n,
        data: '0x5b600056',
      });
    const started = performance.now();
    const refused = await gateway.post(SEPOLIA, rpc('eth_sendRawTransaction', [await sign(16_777_216n, 0)]));
    assert.deepEqual(refused.json.error, {
      code: -32000,
      message: `transaction gas limit too high (cap: ${cap}, tx: 16777216): this gateway's chain runs at most ${cap} gas per transaction`,
    });
    assert.ok(performance.now() - started < 1_000, 'refused without running');
    const mined = await gateway.post(SEPOLIA, rpc('eth_sendRawTransaction', [await sign(BigInt(cap), 0)]));
    assert.match(mined.json.result, /^0x[0-9a-f]{64}$/, JSON.stringify(mined.json));
    const receipt = await gateway.post(SEPOLIA, rpc('eth_getTransactionReceipt', [mined.json.result]));
    assert.equal(receipt.json.result.status, '0x0', 'ran out of gas, as a real chain would mine it');
    assert.equal(receipt.json.result.gasUsed, `0x${cap.toString(16)}`);
  },
);
