/** Networks by path: rinkeby before and after its retirement (by a test clock), unknown networks. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { rpc, startGateway } from './helpers.ts';

const RETIREMENT = Date.UTC(2023, 0, 30);
const BODY = rpc('eth_getBlockByNumber', ['0x0', false], 42);

test('before 2023-01-30 rinkeby is served like any network, on its own chain (chain id 4)', { timeout: 10_000 }, async (t) => {
  const clock = new FakeClock(RETIREMENT - 1);
  const gateway = await startGateway(t, { clock });
  assert.deepEqual((await gateway.post('/v1/rinkeby', rpc('eth_chainId'))).json, { jsonrpc: '2.0', id: 1, result: '0x4' });
  assert.equal((await gateway.post('/v1/rinkeby', rpc('net_version'))).json.result, '4');
  const block = await gateway.post('/v1/rinkeby', BODY);
  assert.equal(block.status, 200);
  assert.equal(block.json.result.number, '0x0');
  // Its coming retirement is announced on every answer.
  assert.equal(block.headers.get('sunset'), 'Mon, 30 Jan 2023 00:00:00 GMT');
  assert.equal(block.headers.get('link'), '</v1/sepolia>; rel="successor-version"');
  assert.equal((await gateway.post('/v1/sepolia', BODY)).headers.get('sunset'), null);
});

test(
  'from 2023-01-30 on every rinkeby request gets an error naming the date and sepolia; the same body on /v1/sepolia works',
  { timeout: 10_000 },
  async (t) => {
    const clock = new FakeClock(RETIREMENT - 1);
    const gateway = await startGateway(t, { clock });
    assert.equal((await gateway.post('/v1/rinkeby', BODY)).json.result.number, '0x0');
    clock.set(RETIREMENT);
    const retired = await gateway.post('/v1/rinkeby', BODY);
    assert.equal(retired.status, 200);
    assert.equal(retired.json.id, 42);
    assert.deepEqual(retired.json.error, {
      code: -32002,
      message:
        'The network rinkeby was retired on 2023-01-30 and is no longer served. Use sepolia instead: change only the last segment of the endpoint path, from /v1/rinkeby to /v1/sepolia, and send the same request body.',
      data: { network: 'rinkeby', retiredOn: '2023-01-30', replacement: 'sepolia', endpoint: '/v1/sepolia' },
    });
    const moved = await gateway.post('/v1/sepolia', BODY);
    assert.equal(moved.status, 200);
    assert.equal(moved.json.id, 42);
    assert.equal(moved.json.result.number, '0x0');
    assert.equal((await gateway.post('/v1/sepolia', rpc('eth_chainId'))).json.result, '0xaa36a7');
  },
);

test('a retired network answers every batch member with its own id, and even methods it would refuse', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t, { clock: new FakeClock(new Date('2026-05-01T00:00:00Z')) });
  const answer = await gateway.post('/v1/rinkeby', [
    rpc('eth_chainId', [], 1),
    rpc('eth_blockNumber', [], 'two'),
    { jsonrpc: '2.0', method: 'eth_chainId' },
    rpc('evm_mine', [], 3),
  ]);
  assert.equal(answer.status, 200);
  assert.deepEqual(
    answer.json.map((m: { id: unknown }) => m.id),
    [1, 'two', 3],
  );
  for (const member of answer.json) {
    assert.equal(member.error.code, -32002);
    assert.match(member.error.message, /^The network rinkeby was retired on 2023-01-30/);
  }
});

test('a network retired at start has no chain started; moving the clock back starts it on first use', { timeout: 10_000 }, async (t) => {
  const clock = new FakeClock(new Date('2026-05-01T00:00:00Z'));
  const gateway = await startGateway(t, { clock });
  assert.match(gateway.service.banner[0] ?? '', /^Embedded chain sepolia: /);
  clock.set(RETIREMENT - 60_000);
  assert.equal((await gateway.post('/v1/rinkeby', rpc('eth_chainId'))).json.result, '0x4');
});

test('an unknown network gets 404 with an error listing the networks served', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t, { clock: new FakeClock(new Date('2026-05-01T00:00:00Z')) });
  for (const name of ['goerli', 'Sepolia', 'mainnet']) {
    const answer = await gateway.post(`/v1/${name}`, rpc('eth_chainId'));
    assert.equal(answer.status, 404);
    assert.equal(answer.json.id, null);
    assert.equal(answer.json.error.code, -32002);
    assert.equal(
      answer.json.error.message,
      `Unknown network "${name}". This gateway serves /v1/sepolia (chain id 11155111), /v1/rinkeby (retired on 2023-01-30; use /v1/sepolia).`,
    );
    assert.deepEqual(answer.json.error.data, { networks: ['sepolia', 'rinkeby'] });
  }
});

test('networks come from config: another embedded network, a disabled default', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t, {
    section: {
      networks: [
        { name: 'devnet', chain_id: 31337 },
        { name: 'rinkeby', enabled: false },
      ],
    },
  });
  assert.equal((await gateway.post('/v1/devnet', rpc('eth_chainId'))).json.result, '0x7a69');
  assert.equal((await gateway.post('/v1/sepolia', rpc('eth_chainId'))).json.result, '0xaa36a7');
  const gone = await gateway.post('/v1/rinkeby', rpc('eth_chainId'));
  assert.equal(gone.status, 404);
  assert.match(gone.json.error.message, /serves \/v1\/sepolia \(chain id 11155111\), \/v1\/devnet \(chain id 31337\)\.$/);
});
