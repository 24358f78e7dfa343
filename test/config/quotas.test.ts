/** `[quotas]`: the documented defaults, the file's values (0: no limit), every bad value and unknown key named. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('[quotas] defaults: 100 GiB and 10 million objects, 1 GiB of scripts, 100 versions kept per script', { timeout: 10_000 }, () => {
  assert.deepEqual(loadConfig({ env: {} }).quotas, {
    maxObjectBytes: 100 * 1024 ** 3,
    maxObjects: 10_000_000,
    maxScriptBytes: 1024 ** 3,
    maxVersionsPerScript: 100,
  });
});

test('[quotas] from the file; 0 is no limit', { timeout: 10_000 }, (t) => {
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(
    file,
    '[quotas]\nmax_object_bytes_per_account = 0\nmax_objects_per_account = 5000\nmax_script_bytes_per_account = 10485760\nmax_versions_per_script = 10\n',
  );
  assert.deepEqual(loadConfig({ file, env: {} }).quotas, { maxObjectBytes: 0, maxObjects: 5000, maxScriptBytes: 10_485_760, maxVersionsPerScript: 10 });
});

test('[quotas]: every bad value is reported, unknown keys by name', { timeout: 10_000 }, (t) => {
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(file, '[quotas]\nmax_object_bytes_per_account = -1\nmax_versions_per_script = 0\nmax_buckets_per_account = 3\nmax_objects_per_account = 1.5\n');
  assert.throws(
    () => loadConfig({ file, env: {} }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /quotas\.max_object_bytes_per_account: /);
      assert.match(error.message, /quotas\.max_versions_per_script: /);
      assert.match(error.message, /quotas\.max_objects_per_account: /);
      assert.match(error.message, /quotas: unknown key\(s\) "max_buckets_per_account"/);
      return true;
    },
  );
});
