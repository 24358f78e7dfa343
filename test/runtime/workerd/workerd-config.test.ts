/** The workerd config edgeport generates for an account's process, and the script-config keys only workerd uses. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../../src/config/load.ts';
import { parseScriptConfig } from '../../../src/runtime/script-config.ts';
import { workerdConfig, type WorkerdConfigInput } from '../../../src/runtime/workerd/workerd-config.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

function scriptIn(dir: string, config: Record<string, unknown>) {
  writeFileSync(join(dir, 'script.mjs'), 'export default {};\n');
  return parseScriptConfig({ name: 's', main: 'script.mjs', compatibility_date: '2022-08-03', ...config }, { baseDir: dir });
}

const INPUT: WorkerdConfigInput = {
  hostSocket: '/run/x/host.sock',
  codeSocket: '/run/x/code.sock',
  storeSocket: '/run/x/store.sock',
  tailSocket: '/run/x/tail.sock',
  outbounds: [{ allow: ['public'], deny: [] }],
  marks: { probe: 'x-p', isolate: 'x-i', hostFailure: 'x-h', tail: 'x-t' },
  memoryMb: 128,
  internalCompatibilityDate: '2025-01-01',
};

test("an account process's config: the host worker with the Worker Loader, the server's services, one network per outbound policy", { timeout: 10_000 }, () => {
  const config = workerdConfig({
    ...INPUT,
    outbounds: [
      { allow: ['public'], deny: [] },
      { allow: ['public', '10.1.0.0/16'], deny: ['10.1.2.0/24'] },
    ],
    memoryMb: 256,
  });
  assert.match(config, /\(name = "LOADER", workerLoader = \(\)\)/);
  assert.match(config, /\(name = "NET_0", service = "net-0"\),\s+\(name = "NET_1", service = "net-1"\)/);
  assert.match(config, /name = "net-1", network = \(\s+allow = \["public", "10\.1\.0\.0\/16"\],\s+deny = \["10\.1\.2\.0\/24"\]/);
  assert.match(config, /external = \(address = "unix:\/run\/x\/store\.sock", http = \(\)\)/);
  assert.match(config, /external = \(address = "unix:\/run\/x\/code\.sock", http = \(\)\)/);
  assert.match(config, /address = "unix:\/run\/x\/host\.sock", http = \(\), service = "host"/);
  assert.match(config, /"--max-old-space-size=256"/);
  assert.match(config, /\(name = "MARKS", json = "\{\\"probe\\":\\"x-p\\",/);
  assert.match(config, /globalOutbound = "nowhere"/, "edgeport's own workers reach no network");
  assert.doesNotMatch(config, /disk|fromEnvironment/, 'nothing of the host is given to any worker');
  assert.throws(() => workerdConfig({ ...INPUT, outbounds: [{ allow: ['a\nb'], deny: [] }] }), /control character/);
});

test("outbound is checked: real addresses or workerd's address classes only", { timeout: 10_000 }, (t) => {
  const dir = tempDir(t);
  const invalid = (config: Record<string, unknown>, message: RegExp) =>
    assert.throws(
      () => scriptIn(dir, config),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
    );
  assert.deepEqual(scriptIn(dir, { outbound: { allow: ['private'] } }).outbound, { allow: ['private'], deny: [] });
  invalid(
    { outbound: { allow: ['everything', '10.0.0.0'] } },
    /outbound\.allow\.0: "everything" is neither a CIDR block.*\n.*outbound\.allow\.1: "10\.0\.0\.0" is neither/,
  );
});
