import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('defaults apply with no file, env or flags', { timeout: 10_000 }, () => {
  const config = loadConfig({ env: {} });
  assert.deepEqual(config.ports, { edge: 8080, api: 8081, gateway: 8545, s3: 9000 });
  assert.equal(config.dataDir, './.edgeport');
  assert.ok(Object.isFrozen(config.ports));
});

test('file, then environment, then flags: each overrides the one before', { timeout: 10_000 }, (t) => {
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(file, 'data_dir = "/from/file"\n[ports]\napi = 1111\nedge = 2222\n');
  const config = loadConfig({ file, env: { EDGEPORT_API_PORT: '3333' }, flags: { ports: { edge: 4444 } } });
  assert.equal(config.dataDir, '/from/file');
  assert.equal(config.ports.api, 3333);
  assert.equal(config.ports.edge, 4444);
  assert.equal(config.ports.s3, 9000);
});

test('every problem is reported at once, unknown keys by name', { timeout: 10_000 }, (t) => {
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(file, 'colour = "blue"\n[ports]\napi = "high"\nweb = 1\n');
  assert.throws(
    () => loadConfig({ file, env: {} }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.code, 'CONFIG_INVALID');
      assert.match(error.message, /unknown key\(s\) "colour"/);
      assert.match(error.message, /ports: unknown key\(s\) "web"/);
      assert.match(error.message, /ports\.api:/);
      return true;
    },
  );
});

test('a missing or malformed file is a clear error', { timeout: 10_000 }, (t) => {
  assert.throws(() => loadConfig({ file: '/no/such/edgeport.toml', env: {} }), /does not exist/);
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(file, 'ports = [');
  assert.throws(() => loadConfig({ file, env: {} }), /not valid TOML/);
});

test(
  '[edge] allow_private_origins: false by default; the file or EDGEPORT_EDGE_ALLOW_PRIVATE_ORIGINS turn it on; anything else is refused',
  { timeout: 10_000 },
  (t) => {
    assert.equal(loadConfig({ env: {} }).edge.allowPrivateOrigins, false);
    const file = join(tempDir(t), 'edgeport.toml');
    writeFileSync(file, '[edge]\nallow_private_origins = true\n');
    assert.equal(loadConfig({ file, env: {} }).edge.allowPrivateOrigins, true);
    assert.equal(
      loadConfig({ file, env: { EDGEPORT_EDGE_ALLOW_PRIVATE_ORIGINS: 'false' } }).edge.allowPrivateOrigins,
      false,
      'the environment overrides the file',
    );
    assert.equal(loadConfig({ env: { EDGEPORT_EDGE_ALLOW_PRIVATE_ORIGINS: 'true' } }).edge.allowPrivateOrigins, true);
    assert.throws(() => loadConfig({ env: { EDGEPORT_EDGE_ALLOW_PRIVATE_ORIGINS: 'yes' } }), /edge\.allow_private_origins:/);
    writeFileSync(file, '[edge]\nallow_private_origins = "true"\nallow_public = 1\n');
    assert.throws(
      () => loadConfig({ file, env: {} }),
      (error: unknown) => /edge\.allow_private_origins:/.test(String(error)) && /unknown key\(s\) "allow_public"/.test(String(error)),
    );
  },
);

test(
  "[logs] file_roots: the data dir's log-files by default, a list in the file, PATH-style in the environment, [] turns file:// off; only absolute paths",
  { timeout: 10_000 },
  (t) => {
    assert.deepEqual(
      loadConfig({ env: {} }).logs.fileRoots,
      [resolve('.edgeport', 'log-files')],
      'absolute: below the default data dir, where the server runs',
    );
    assert.deepEqual(loadConfig({ env: { EDGEPORT_DATA_DIR: '/srv/edgeport' } }).logs.fileRoots, ['/srv/edgeport/log-files'], 'it follows the data dir');
    const file = join(tempDir(t), 'edgeport.toml');
    writeFileSync(file, '[logs]\nfile_roots = ["/var/log/edgeport", "/srv/logs"]\n');
    assert.deepEqual(loadConfig({ file, env: {} }).logs.fileRoots, ['/var/log/edgeport', '/srv/logs']);
    assert.deepEqual(loadConfig({ file, env: { EDGEPORT_LOGS_FILE_ROOTS: '/a:/b/c' } }).logs.fileRoots, ['/a', '/b/c'], 'the environment replaces the list');
    writeFileSync(file, '[logs]\nfile_roots = []\n');
    assert.deepEqual(loadConfig({ file, env: {} }).logs.fileRoots, []);
    writeFileSync(file, '[logs]\nfile_roots = ["logs", "/a/../etc"]\n');
    assert.throws(
      () => loadConfig({ file, env: {} }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /logs\.file_roots\.0: each file root must be an absolute path/);
        assert.match(error.message, /logs\.file_roots\.1: a file root may not contain "\." or "\.\." segments/);
        return true;
      },
    );
  },
);

test('[auth]: defaults, every key read, out-of-range values and unknown keys named', { timeout: 10_000 }, (t) => {
  assert.deepEqual(loadConfig({ env: {} }).auth, {
    failureWindowMs: 60_000,
    maxFailuresPerAddress: 20,
    maxFailuresPerIdentity: 10,
    maxQueuedHashes: 16,
    maxSessionsPerAccount: 100,
    maxTokensPerAccount: 50,
  });
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(
    file,
    '[auth]\nfailure_window_ms = 300000\nmax_failures_per_address = 100\nmax_failures_per_identity = 5\nmax_queued_hashes = 4\nmax_sessions_per_account = 10\nmax_tokens_per_account = 5\n',
  );
  assert.deepEqual(loadConfig({ file, env: {} }).auth, {
    failureWindowMs: 300_000,
    maxFailuresPerAddress: 100,
    maxFailuresPerIdentity: 5,
    maxQueuedHashes: 4,
    maxSessionsPerAccount: 10,
    maxTokensPerAccount: 5,
  });
  writeFileSync(file, '[auth]\nfailure_window_ms = 10\nmax_failures_per_address = 0\nlockout_ms = 5\n');
  assert.throws(
    () => loadConfig({ file, env: {} }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /auth\.failure_window_ms:/);
      assert.match(error.message, /auth\.max_failures_per_address:/);
      assert.match(error.message, /auth: unknown key\(s\) "lockout_ms"/);
      return true;
    },
  );
});

test('[logs] spool bounds and file_roots_claimable: documented defaults, set in the file, refused when out of range', { timeout: 10_000 }, (t) => {
  const { logs } = loadConfig({ env: {} });
  assert.deepEqual(
    [logs.fileRootsClaimable, logs.maxJobSpoolBytes, logs.maxTotalSpoolBytes, logs.pauseAfterFailingMs],
    [false, 64 * 1024 * 1024, 1024 * 1024 * 1024, 300_000],
  );
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(file, '[logs]\nfile_roots_claimable = true\nmax_job_spool_bytes = 1048576\nmax_total_spool_bytes = 8388608\npause_after_failing_ms = 60000\n');
  const set = loadConfig({ file, env: {} }).logs;
  assert.deepEqual([set.fileRootsClaimable, set.maxJobSpoolBytes, set.maxTotalSpoolBytes, set.pauseAfterFailingMs], [true, 1_048_576, 8_388_608, 60_000]);
  writeFileSync(file, '[logs]\nmax_job_spool_bytes = 100\npause_after_failing_ms = 10\n');
  assert.throws(
    () => loadConfig({ file, env: {} }),
    (error: unknown) => /logs\.max_job_spool_bytes/.test(String(error)) && /logs\.pause_after_failing_ms/.test(String(error)),
  );
});

test('[secrets]: none by default; EDGEPORT_SECRETS_KEY and _FILE over the file; a malformed key is refused without being echoed', { timeout: 10_000 }, (t) => {
  assert.deepEqual(loadConfig({ env: {} }).secrets, { key: undefined, keyFile: undefined });
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(file, '[secrets]\nkey_file = "/run/secrets/edgeport.key"\n');
  assert.deepEqual(loadConfig({ file, env: {} }).secrets, { key: undefined, keyFile: '/run/secrets/edgeport.key' });
  const key = Buffer.alloc(32, 1).toString('base64');
  assert.deepEqual(loadConfig({ file, env: { EDGEPORT_SECRETS_KEY: key, EDGEPORT_SECRETS_KEY_FILE: '/other.key' } }).secrets, { key, keyFile: '/other.key' });
  for (const bad of ['hunter2-not-a-key', Buffer.alloc(16, 1).toString('base64')]) {
    assert.throws(
      () => loadConfig({ env: { EDGEPORT_SECRETS_KEY: bad } }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /secrets\.key: must be the base64 of 32 random bytes/);
        assert.ok(!error.message.includes(bad), 'the value is not echoed');
        return true;
      },
    );
  }
  writeFileSync(file, '[secrets]\nkey_file = ""\n');
  assert.throws(() => loadConfig({ file, env: {} }), /secrets\.key_file/);
});

test("[workers] upload trials: defaults, the file's values, and values out of range refused by name", { timeout: 10_000 }, (t) => {
  assert.deepEqual(loadConfig({ env: {} }).workers.uploadTrials, { running: 2, runningPerAccount: 1, waitingPerAccount: 3, waiting: 16 });
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(
    file,
    '[workers]\nmax_upload_trials = 4\nmax_upload_trials_per_account = 2\nmax_upload_trials_waiting_per_account = 0\nmax_upload_trials_waiting = 8\n',
  );
  assert.deepEqual(loadConfig({ file, env: {} }).workers.uploadTrials, { running: 4, runningPerAccount: 2, waitingPerAccount: 0, waiting: 8 });
  writeFileSync(file, '[workers]\nmax_upload_trials = 0\nmax_upload_trials_waiting = -1\n');
  assert.throws(
    () => loadConfig({ file, env: {} }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /workers\.max_upload_trials:/);
      assert.match(error.message, /workers\.max_upload_trials_waiting:/);
      return true;
    },
  );
});
