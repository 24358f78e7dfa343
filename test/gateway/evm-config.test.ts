/** The [gateway] keys for EVM calls and large bodies: defaults filled in, values read, bad values named. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GATEWAY_DEFAULTS } from '../../src/config/defaults.ts';
import { gatewaySectionSchema, toGatewayConfig } from '../../src/config/gateway.ts';

test('an empty [gateway] gets the default EVM limits; each key overrides its own', { timeout: 10_000 }, () => {
  const defaults = toGatewayConfig(gatewaySectionSchema.parse({}));
  assert.deepEqual(defaults.evmGasCap, GATEWAY_DEFAULTS.evmGasCap);
  // Upstream nodes bound their own memory: their calls get geth's own cap, the embedded chain a tighter one.
  assert.equal(defaults.evmGasCap.upstream, 50_000_000);
  assert.ok(defaults.evmGasCap.embedded < defaults.evmGasCap.upstream);
  assert.equal(defaults.evmTimeoutMs, 5_000);
  assert.deepEqual(defaults.evmTimePerClient, GATEWAY_DEFAULTS.evmTimePerClient);
  assert.equal(defaults.maxBodyBytesInFlight, GATEWAY_DEFAULTS.maxBodyBytesInFlight);
  const set = toGatewayConfig(
    gatewaySectionSchema.parse({
      evm_gas_cap: 50_000_000,
      evm_timeout_ms: 250,
      evm_time_per_client: { burst_ms: 10 },
      max_queued_evm_calls_per_client: 2,
      max_queued_evm_calls: 9,
      max_body_bytes_in_flight: 1_000_000,
    }),
  );
  assert.deepEqual(set.evmGasCap, { embedded: 50_000_000, upstream: 50_000_000 });
  assert.equal(set.evmTimeoutMs, 250);
  assert.deepEqual(set.evmTimePerClient, { msPerSecond: GATEWAY_DEFAULTS.evmTimePerClient.msPerSecond, burstMs: 10 });
  assert.equal(set.maxQueuedEvmCallsPerClient, 2);
  assert.equal(set.maxQueuedEvmCalls, 9);
  assert.equal(set.maxBodyBytesInFlight, 1_000_000);
});

test('a gas cap below a plain transfer, a zero timeout or an unknown key in evm_time_per_client is refused, naming the key', { timeout: 10_000 }, () => {
  for (const [section, key] of [
    [{ evm_gas_cap: 20_999 }, 'evm_gas_cap'],
    [{ evm_timeout_ms: 0 }, 'evm_timeout_ms'],
    [{ evm_time_per_client: { ms_per_sec: 5 } }, 'evm_time_per_client'],
    [{ max_body_bytes_in_flight: -1 }, 'max_body_bytes_in_flight'],
  ] as const) {
    const parsed = gatewaySectionSchema.safeParse(section);
    assert.equal(parsed.success, false, JSON.stringify(section));
    assert.equal(parsed.error!.issues[0]!.path[0], key);
  }
});
