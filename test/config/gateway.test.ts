/** The `[gateway]` section of edgeport.toml: defaults, merge by network name, validation. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function loadToml(t: Parameters<typeof tempDir>[0], toml: string) {
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(file, toml);
  return loadConfig({ file, env: {} });
}

function assertInvalid(t: Parameters<typeof tempDir>[0], toml: string, ...messages: RegExp[]) {
  assert.throws(
    () => loadToml(t, toml),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      for (const message of messages) assert.match(error.message, message);
      return true;
    },
  );
}

test('defaults: sepolia (11155111) on the embedded chain, rinkeby (4) retired on 2023-01-30 for sepolia', { timeout: 10_000 }, () => {
  const { gateway } = loadConfig({ env: {} });
  assert.deepEqual(gateway.networks, [
    { name: 'sepolia', chainId: 11155111, backend: { kind: 'embedded' }, retiredOn: undefined, replacement: undefined },
    { name: 'rinkeby', chainId: 4, backend: { kind: 'embedded' }, retiredOn: '2023-01-30', replacement: 'sepolia' },
  ]);
  assert.equal(gateway.maxBodyBytes, 5 * 1024 * 1024);
  assert.equal(gateway.maxBatchItems, 1000);
  assert.equal(gateway.maxLogsBlockRange, 800);
  assert.equal(gateway.maxFeeHistoryBlocks, 10);
  assert.deepEqual(gateway.rateLimit, { requestsPerSecond: 2000, burst: 10000 });
  assert.ok(Object.isFrozen(gateway.networks[0]));
});

test('a file entry merges over the default of the same name; new networks are added; a TOML date works', { timeout: 10_000 }, (t) => {
  const { gateway } = loadToml(
    t,
    `
[gateway]
max_batch_items = 50
allow_methods = ["eth_maxPriorityFeePerGas"]
rate_limit = { requests_per_second = 10 }

[[gateway.networks]]
name = "sepolia"
upstreams = ["https://node-a.example/v1/key", "http://127.0.0.1:8546"]

[[gateway.networks]]
name = "goerli"
chain_id = 5
retired_on = 2024-04-13
replacement = "sepolia"
`,
  );
  assert.deepEqual(
    gateway.networks.map((n) => n.name),
    ['sepolia', 'rinkeby', 'goerli'],
  );
  assert.deepEqual(gateway.networks[0], {
    name: 'sepolia',
    chainId: 11155111,
    backend: { kind: 'upstreams', urls: ['https://node-a.example/v1/key', 'http://127.0.0.1:8546'] },
    retiredOn: undefined,
    replacement: undefined,
  });
  assert.deepEqual(gateway.networks[2], { name: 'goerli', chainId: 5, backend: { kind: 'embedded' }, retiredOn: '2024-04-13', replacement: 'sepolia' });
  assert.equal(gateway.maxBatchItems, 50);
  assert.deepEqual(gateway.allowMethods, ['eth_maxPriorityFeePerGas']);
  assert.deepEqual(gateway.rateLimit, { requestsPerSecond: 10, burst: 10000 });
});

test('enabled = false drops a network; "embedded" can be named explicitly', { timeout: 10_000 }, (t) => {
  const { gateway } = loadToml(t, '[[gateway.networks]]\nname = "rinkeby"\nenabled = false\n[[gateway.networks]]\nname = "sepolia"\nupstreams = "embedded"\n');
  assert.deepEqual(
    gateway.networks.map((n) => [n.name, n.backend.kind]),
    [['sepolia', 'embedded']],
  );
});

test('every problem is reported at once, naming the key', { timeout: 10_000 }, (t) => {
  assertInvalid(
    t,
    `
[gateway]
max_body_bytes = -1
colour = "blue"
deny_methods = ["eth call"]

[[gateway.networks]]
name = "devnet"

[[gateway.networks]]
name = "Main Net"
chain_id = 1

[[gateway.networks]]
name = "old"
chain_id = 9
retired_on = "30/01/2023"
replacement = "nowhere"
upstreams = ["ftp://node"]
`,
    /gateway: unknown key\(s\) "colour"/,
    /gateway\.max_body_bytes:/,
    /gateway\.deny_methods\.0: a method name, optionally ending in \*/,
    /gateway\.networks\.1\.name: a network name is lower case letters/,
    /gateway\.networks\.2\.retired_on: a date is YYYY-MM-DD/,
    /gateway\.networks\.2\.upstreams/,
  );
});

test('cross-network checks: chain id needed for new networks, replacements must exist, no duplicates', { timeout: 10_000 }, (t) => {
  assertInvalid(t, '[[gateway.networks]]\nname = "devnet"\n', /gateway\.networks\.0\.chain_id: network "devnet" needs a chain_id/);
  assertInvalid(
    t,
    '[[gateway.networks]]\nname = "old"\nchain_id = 9\nreplacement = "nowhere"\n',
    /gateway\.networks\.0\.replacement: replacement "nowhere" is not an enabled network/,
  );
  assertInvalid(t, '[[gateway.networks]]\nname = "sepolia"\nenabled = false\n', /replacement "sepolia" is not an enabled network/);
  assertInvalid(
    t,
    '[[gateway.networks]]\nname = "x"\nchain_id = 9\n[[gateway.networks]]\nname = "x"\nchain_id = 9\n',
    /gateway\.networks\.1\.name: network "x" is listed twice/,
  );
  assertInvalid(t, '[[gateway.networks]]\nname = "x"\nchain_id = 9\nreplacement = "x"\n', /cannot replace itself/);
  assertInvalid(t, '[[gateway.networks]]\nname = "x"\nchain_id = 9\nretired_on = "2023-02-30"\n', /"2023-02-30" is not a calendar date/);
});
