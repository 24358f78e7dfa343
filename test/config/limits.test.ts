/** `[limits]`: defaults, the file, EDGEPORT_LIMITS_* overrides, and every bad value named. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('[limits] defaults: 20 s head, 5 s keep-alive, 120 s idle, 4096 connections, 256 per client, shed at 50 ms', { timeout: 10_000 }, () => {
  assert.deepEqual(loadConfig({ env: {} }).limits, {
    headerTimeoutMs: 20_000,
    keepAliveTimeoutMs: 5_000,
    idleTimeoutMs: 120_000,
    maxConnections: 4_096,
    maxConnectionsPerClient: 256,
    maxEventLoopDelayMs: 50,
  });
});

test('[limits] from the file, overridden by EDGEPORT_LIMITS_* variables; 0 turns a limit off', { timeout: 10_000 }, (t) => {
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(file, '[limits]\nheader_timeout_ms = 5000\nmax_connections = 0\nmax_connections_per_client = 32\nmax_event_loop_delay_ms = 0\n');
  const config = loadConfig({
    file,
    env: { EDGEPORT_LIMITS_MAX_CONNECTIONS_PER_CLIENT: '64', EDGEPORT_LIMITS_KEEP_ALIVE_TIMEOUT_MS: '1500', EDGEPORT_LIMITS_IDLE_TIMEOUT_MS: '30000' },
  });
  assert.deepEqual(config.limits, {
    headerTimeoutMs: 5_000,
    keepAliveTimeoutMs: 1_500,
    idleTimeoutMs: 30_000,
    maxConnections: 0,
    maxConnectionsPerClient: 64,
    maxEventLoopDelayMs: 0,
  });
  assert.equal(
    loadConfig({ env: { EDGEPORT_LIMITS_HEADER_TIMEOUT_MS: '700', EDGEPORT_LIMITS_MAX_CONNECTIONS: '10', EDGEPORT_LIMITS_MAX_EVENT_LOOP_DELAY_MS: '250' } })
      .limits.maxEventLoopDelayMs,
    250,
  );
});

test('[limits]: every bad value is reported, unknown keys by name', { timeout: 10_000 }, (t) => {
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(file, '[limits]\nheader_timeout_ms = 10\nmax_connections = -1\nmax_event_loop_delay_ms = 5\nmax_connections_per_ip = 3\n');
  assert.throws(
    () => loadConfig({ file, env: {} }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /limits\.header_timeout_ms: /);
      assert.match(error.message, /limits\.max_connections: /);
      assert.match(error.message, /limits\.max_event_loop_delay_ms: is 0 \(never shed\) or 20 to 600000 ms/);
      assert.match(error.message, /limits: unknown key\(s\) "max_connections_per_ip"/);
      return true;
    },
  );
  assert.throws(() => loadConfig({ env: { EDGEPORT_LIMITS_MAX_CONNECTIONS: 'many' } }), /limits\.max_connections/);
});
