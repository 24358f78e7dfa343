import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/load.ts';
import { loadScriptConfig, parseScriptConfig, SCRIPT_LIMIT_DEFAULTS } from '../../src/runtime/script-config.ts';
import { WORKERD } from '../../src/runtime/workerd/workerd-package.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const NOW = Date.UTC(2026, 10, 22);

function scriptDir(t: Parameters<typeof tempDir>[0]): string {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'worker.mjs'), 'export default { fetch() { return new Response("ok"); } };\n');
  return dir;
}

function invalid(run: () => unknown, ...patterns: RegExp[]): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.code, 'CONFIG_INVALID');
    for (const pattern of patterns) assert.match(error.message, pattern);
    return true;
  });
}

test('a TOML config becomes a frozen camelCase ScriptConfig with defaults filled in', { timeout: 10_000 }, (t) => {
  const dir = scriptDir(t);
  const file = join(dir, 'script.toml');
  writeFileSync(
    file,
    `name = "photos"
main = "worker.mjs"
compatibility_date = "2022-08-04"
compatibility_flags = ["store_list_honor_include"]
routes = ["example.test/api/*"]

[[store_buckets]]
binding = "PHOTOS"
bucket_name = "photo-bucket"
`,
  );
  const config = loadScriptConfig(file, { now: NOW });
  assert.deepEqual(config, {
    name: 'photos',
    runtime: 'workerd',
    main: join(dir, 'worker.mjs'),
    compatibilityDate: '2022-08-04',
    compatibilityFlags: ['store_list_honor_include'],
    storeBuckets: [{ binding: 'PHOTOS', bucketName: 'photo-bucket' }],
    routes: ['example.test/api/*'],
    limits: { cpuMs: SCRIPT_LIMIT_DEFAULTS.cpuMs, memoryMb: SCRIPT_LIMIT_DEFAULTS.memoryMb },
    outbound: { allow: ['public'], deny: [] },
  });
  assert.ok(Object.isFrozen(config));
  assert.ok(Object.isFrozen(config.storeBuckets[0]));
  assert.ok(Object.isFrozen(config.limits));
});

test('JSON works too, and limits can be set', { timeout: 10_000 }, (t) => {
  const dir = scriptDir(t);
  const file = join(dir, 'script.json');
  writeFileSync(file, JSON.stringify({ name: 'x', main: './worker.mjs', compatibility_date: '2025-01-01', limits: { cpu_ms: 50, memory_mb: 64 } }));
  const config = loadScriptConfig(file, { now: NOW });
  assert.deepEqual(config.limits, { cpuMs: 50, memoryMb: 64 });
  assert.deepEqual(config.compatibilityFlags, []);
  assert.deepEqual(config.storeBuckets, []);
  assert.deepEqual(config.routes, []);
});

test('every problem is reported at once: unknown keys by name, bad bindings, bucket names, runtime, date, main', { timeout: 10_000 }, (t) => {
  const dir = scriptDir(t);
  invalid(
    () =>
      parseScriptConfig(
        {
          name: 'x',
          main: 'missing.mjs',
          compatibility_date: '2099-01-01',
          runtime: 'node',
          store_buckets: [
            { binding: 'my-bucket', bucket_name: 'UPPER' },
            { binding: 'class', bucket_name: 'ok-bucket', extra: 1 },
          ],
          colour: 'blue',
          limits: { cpu_ms: 5, gpu: 1 },
        },
        { baseDir: dir, now: NOW },
      ),
    /unknown key\(s\) "colour"/,
    /main: file .*missing\.mjs does not exist/,
    /compatibility_date: 2099-01-01 is in the future/,
    /runtime: scripts now run in workerd only: the Node\.js worker-thread runtime was removed.*Leave `runtime` out \(or set runtime = "workerd"\).*compatibility_flags = \["nodejs_compat"\]/,
    /store_buckets\.0\.binding: must be a valid JavaScript identifier/,
    /store_buckets\.0\.bucket_name: must be 3-63 characters/,
    /store_buckets\.1\.binding: must be a valid JavaScript identifier/,
    /store_buckets\.1: unknown key\(s\) "extra"/,
    /limits: unknown key\(s\) "gpu"/,
    /limits\.cpu_ms:/,
  );
});

test('required keys are named when missing, and a binding may not be used twice', { timeout: 10_000 }, (t) => {
  const dir = scriptDir(t);
  invalid(() => parseScriptConfig({}, { baseDir: dir, now: NOW }), /name:/, /main:/, /compatibility_date:/);
  invalid(
    () =>
      parseScriptConfig(
        {
          name: 'x',
          main: 'worker.mjs',
          compatibility_date: '2025-01-01',
          store_buckets: [
            { binding: 'B', bucket_name: 'one' },
            { binding: 'B', bucket_name: 'two' },
          ],
        },
        { baseDir: dir, now: NOW },
      ),
    /store_buckets\.1\.binding: binding "B" is used twice/,
  );
});

test('an unreadable or malformed file is a clear CONFIG_INVALID error', { timeout: 10_000 }, (t) => {
  const dir = scriptDir(t);
  invalid(() => loadScriptConfig(join(dir, 'nope.toml')), /cannot be read/);
  const toml = join(dir, 'bad.toml');
  writeFileSync(toml, 'name = \n');
  invalid(() => loadScriptConfig(toml), /is not valid TOML/);
  const json = join(dir, 'bad.json');
  writeFileSync(json, '{');
  invalid(() => loadScriptConfig(json), /is not valid JSON/);
});

test('a date is refused when it is in the future, or later than the newest the installed workerd supports', { timeout: 10_000 }, (t) => {
  const dir = scriptDir(t);
  const newest = WORKERD.compatibilityDate;
  const dayAfter = new Date(Date.parse(`${newest}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  const muchLater = Date.parse(`${newest}T00:00:00Z`) + 30 * 86_400_000;
  const config = (date: string) => ({ name: 'x', main: 'worker.mjs', compatibility_date: date });
  assert.equal(parseScriptConfig(config(newest), { baseDir: dir, now: muchLater }).compatibilityDate, newest);
  invalid(
    () => parseScriptConfig(config(dayAfter), { baseDir: dir, now: muchLater }),
    new RegExp(
      `compatibility_date: ${dayAfter} is later than ${newest}, the newest date the installed workerd \\(${WORKERD.version.replace(/\./g, '\\.')}\\) supports; use ${newest} or earlier, or update the workerd package`,
    ),
  );
  invalid(() => parseScriptConfig(config(dayAfter), { baseDir: dir, now: Date.parse(`${newest}T00:00:00Z`) }), /is in the future/);
});

test('runtime: left out or "workerd" is workerd; anything else is refused, "node" with what changed', { timeout: 10_000 }, (t) => {
  const dir = scriptDir(t);
  const config = (extra: Record<string, unknown>) =>
    parseScriptConfig({ name: 'x', main: 'worker.mjs', compatibility_date: '2025-01-01', ...extra }, { baseDir: dir, now: NOW });
  assert.equal(config({}).runtime, 'workerd');
  assert.equal(config({ runtime: 'workerd' }).runtime, 'workerd');
  invalid(() => config({ runtime: 'node' }), /runtime: scripts now run in workerd only/, /no files, environment or process of the server/);
  invalid(() => config({ runtime: 'deno' }), /runtime: must be "workerd", the only runtime \(or left out\), got "deno"/);
  invalid(() => config({ workers: 4 }), /unknown key\(s\) "workers"/);
});

test("any flag name passes the config (workerd judges workerd's flags when the script starts)", { timeout: 10_000 }, (t) => {
  const dir = scriptDir(t);
  const config = parseScriptConfig(
    {
      name: 'x',
      main: 'worker.mjs',
      compatibility_date: '2025-01-01',
      compatibility_flags: ['nodejs_compat', 'streams_enable_constructors', 'store_list_honor_include'],
    },
    { baseDir: dir, now: NOW },
  );
  assert.deepEqual(config.compatibilityFlags, ['nodejs_compat', 'streams_enable_constructors', 'store_list_honor_include']);
});
