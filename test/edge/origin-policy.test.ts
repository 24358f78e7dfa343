/** OriginPolicy: who may reach which addresses, and which origins the API refuses before any DNS. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OriginPolicy, type OriginPolicyOptions } from '../../src/edge/index.ts';

const OPERATOR = 'a'.repeat(32);
const OTHER = 'b'.repeat(32);

function policy(options: Partial<OriginPolicyOptions> = {}): OriginPolicy {
  return new OriginPolicy({
    allowPrivateOrigins: false,
    operatorAccountId: async () => OPERATOR,
    ownListeners: () => [
      { host: '0.0.0.0', port: 8081 },
      { host: '0.0.0.0', port: 8545 },
    ],
    localAddresses: () => ['127.0.0.1', '::1', '198.51.7.7', '2606:4700::7'],
    ...options,
  });
}

test(
  "the operator's zones connect anywhere; other accounts' only to public addresses that are not edgeport's own, refused without naming them",
  { timeout: 10_000 },
  async () => {
    const p = policy();
    assert.equal(await p.guardFor(OPERATOR), null);
    const guard = (await p.guardFor(OTHER))!;
    assert.equal(guard('8.8.8.8', 80), null);
    assert.equal(guard('2a00:1450:4001::200e', 443), null);
    assert.match(
      guard('127.0.0.1', 3000)!,
      /^127\.0\.0\.1 is a loopback address, which only the operator's zones may use as an origin \(.*\[edge\] allow_private_origins = true\)$/,
    );
    assert.match(guard('::ffff:169.254.169.254', 80)!, /^169\.254\.169\.254 is a link-local address/);
    assert.match(guard('10.1.2.3', 80)!, /private network address/);
    assert.match(guard('fd00::1', 80)!, /private network address/);
    assert.match(guard('0.0.0.0', 80)!, /unspecified/);
    assert.match(guard('100.64.1.1', 80)!, /carrier-grade NAT/);
    // edgeport's own listeners are refused without saying so: on loopback in the words of any other loopback port.
    assert.equal(guard('127.0.0.1', 8081), guard('127.0.0.1', 3000));
    assert.equal(
      guard('198.51.7.7', 8545),
      "198.51.7.7:8545 may not be used as an origin by this account's zones; only the operator's zones may",
      "a public address of this machine at a listener's port",
    );
    assert.equal(guard('2606:4700::7', 8081), "[2606:4700::7]:8081 may not be used as an origin by this account's zones; only the operator's zones may");
    for (const refusal of [guard('127.0.0.1', 8081), guard('198.51.7.7', 8545)]) assert.doesNotMatch(refusal!, /edgeport|listener/);
    assert.equal(guard('198.51.7.7', 9999), null, 'another port of this machine');
    assert.equal(guard('8.8.8.8', 8081), null, 'another machine at the same port');
  },
);

test("allow_private_origins lets every account use private addresses, never edgeport's own listeners", { timeout: 10_000 }, async () => {
  const guard = (await policy({ allowPrivateOrigins: true }).guardFor(OTHER))!;
  for (const address of ['127.0.0.1', '169.254.169.254', '10.0.0.1', '::1', 'fe80::1']) assert.equal(guard(address, 3000), null, address);
  assert.equal(guard('127.0.0.1', 8081), "127.0.0.1:8081 may not be used as an origin by this account's zones; only the operator's zones may");
  assert.match(guard('0.0.0.0', 8545)!, /^0\.0\.0\.0:8545 may not be used as an origin/);
  assert.match(guard('::ffff:127.0.0.1', 8545)!, /^127\.0\.0\.1:8545 may not be used as an origin/);
});

test('the API refuses IP-literal and localhost origins it can judge without DNS; host names wait for the edge', { timeout: 10_000 }, async () => {
  const p = policy();
  const problem = (account: string, origin: string) => p.originProblem(account, new URL(origin));
  assert.equal(await problem(OPERATOR, 'http://127.0.0.1:3000'), null);
  assert.match((await problem(OTHER, 'http://127.0.0.1:3000'))!, /loopback/);
  assert.match((await problem(OTHER, 'http://169.254.169.254'))!, /link-local/);
  assert.match((await problem(OTHER, 'http://[::1]:3000'))!, /loopback/);
  assert.match((await problem(OTHER, 'http://[::ffff:7f00:1]/'))!, /^127\.0\.0\.1 is a loopback/);
  assert.match((await problem(OTHER, 'http://0x7f.1/'))!, /loopback/, 'the URL parser normalizes IPv4 forms');
  assert.match((await problem(OTHER, 'http://2130706433/'))!, /loopback/);
  assert.match((await problem(OTHER, 'http://localhost:3000'))!, /loopback/);
  assert.match((await problem(OTHER, 'http://api.localhost'))!, /loopback/);
  assert.match((await problem(OTHER, 'http://LocalHost.:3000'))!, /loopback/, 'the fully qualified form');
  assert.match((await problem(OTHER, 'https://198.51.7.7:8081'))!, /^198\.51\.7\.7:8081 may not be used as an origin/);
  assert.equal(await problem(OTHER, 'https://8.8.8.8'), null);
  assert.equal(await problem(OTHER, 'http://origin.example.test:3000'), null, 'a name is judged where it is connected to');
});

test('the operator is read until there is one, then kept', { timeout: 10_000 }, async () => {
  let operator: string | null = null;
  let reads = 0;
  const p = policy({
    operatorAccountId: async () => {
      reads += 1;
      return operator;
    },
  });
  assert.notEqual(await p.guardFor(OPERATOR), null, 'no account yet: nobody is the operator');
  operator = OPERATOR;
  assert.equal(await p.guardFor(OPERATOR), null);
  assert.equal(await p.guardFor(OPERATOR), null);
  assert.equal(reads, 2);
});
