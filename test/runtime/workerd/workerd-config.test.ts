/** The workerd config edgeport generates from a script config, and the script-config keys only workerd uses. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../../src/config/load.ts';
import { parseScriptConfig } from '../../../src/runtime/script-config.ts';
import { workerdConfig } from '../../../src/runtime/workerd/workerd-config.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

function scriptIn(dir: string, config: Record<string, unknown>) {
  writeFileSync(join(dir, 'script.mjs'), 'export default {};\n');
  return parseScriptConfig({ name: 's', main: 'script.mjs', compatibility_date: '2022-08-03', ...config }, { baseDir: dir });
}

const SOCKETS = { scriptModule: 'script.js', scriptSocket: '/run/x/script.sock', internalCompatibilityDate: '2025-01-01' };

test("the script's date, flags (edgeport's own left out), bindings and outbound lists reach workerd's config", { timeout: 10_000 }, (t) => {
  const script = scriptIn(tempDir(t), {
    compatibility_flags: ['nodejs_compat', 'store_list_honor_include'],
    store_buckets: [{ binding: 'PHOTOS', bucket_name: 'photos' }], outbound: { allow: ['public', '10.1.0.0/16'], deny: ['10.1.2.0/24'] },
  });
  const config = workerdConfig({ script, ...SOCKETS, storeSocket: '/run/x/store.sock' });
  assert.match(config, /compatibilityDate = "2022-08-03"/);
  assert.match(config, /compatibilityFlags = \["nodejs_compat"\]/);
  assert.match(config, /name = "PHOTOS",\s+wrapped = \(\s+moduleName = "edgeport-internal:store-binding"/);
  assert.match(config, /\(name = "bucket", text = "photos"\)/);
  assert.match(config, /\(name = "listHonorsInclude", json = "true"\)/, 'the flag decides the rule');
  assert.match(config, /allow = \["public", "10\.1\.0\.0\/16"\],\s+deny = \["10\.1\.2\.0\/24"\]/);
  assert.match(config, /external = \(address = "unix:\/run\/x\/store\.sock", http = \(\)\)/);
  assert.match(config, /address = "unix:\/run\/x\/script\.sock"/);
  assert.doesNotMatch(config, /disk|fromEnvironment/, 'nothing of the host is given to the worker');

  const plain = workerdConfig({ script: scriptIn(tempDir(t), {}), ...SOCKETS, storeSocket: undefined });
  assert.match(plain, /allow = \["public"\],\s+deny = \[\]/, 'public addresses only by default');
  assert.doesNotMatch(plain, /extensions|"store"/, 'no store service without buckets');
  assert.throws(() => workerdConfig({ script: scriptIn(tempDir(t), { compatibility_flags: ['a\nb'] }), ...SOCKETS, storeSocket: undefined }), /control character/);
});

test('outbound is checked: real addresses or workerd\'s address classes only', { timeout: 10_000 }, (t) => {
  const dir = tempDir(t);
  const invalid = (config: Record<string, unknown>, message: RegExp) => assert.throws(() => scriptIn(dir, config), (error: unknown) => error instanceof ConfigError && message.test(error.message));
  assert.deepEqual(scriptIn(dir, { outbound: { allow: ['private'] } }).outbound, { allow: ['private'], deny: [] });
  invalid({ outbound: { allow: ['everything', '10.0.0.0'] } }, /outbound\.allow\.0: "everything" is neither a CIDR block.*\n.*outbound\.allow\.1: "10\.0\.0\.0" is neither/);
});
