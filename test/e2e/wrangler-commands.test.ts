/**
 * The common wrangler 4 commands against `edgeport start`, each run as a user runs it (the real
 * CLI through test/helpers/wrangler.ts) and its effect checked through the API or the edge: R2
 * buckets, objects, CORS and public access; deploy (first and again, with logpush and
 * observability), versions, deployments, rollback, secrets (one, in bulk, per version), tail with
 * a status filter, delete; and the two refused by name (KV, D1). The test prints each command's
 * verdict, `works`, `refused by name` (edgeport says it does not provide that) or `wrong`, with
 * the counts, and fails on any command that is wrong.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stopChild } from '../helpers/child-processes.ts';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { managementApi } from '../helpers/management-api.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { servedWithin, viaEdge, wranglerForm } from '../helpers/workers-upload.ts';
import { wranglerFor, type WranglerResult } from '../helpers/wrangler.ts';

const OPERATOR = { email: 'commands@example.test', key: 'wrangler-commands-key-0123' };
type Verdict = 'works' | 'refused by name' | 'wrong';

function source(version: string): string {
  return `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/boom') throw new Error('boom ${version}');
    console.log('served', url.pathname);
    return new Response([env.GREETING, env.TOKEN ?? '-', env.BULK_A ?? '-', '${version}'].join(' '));
  },
};
`;
}

test('the common wrangler commands: each works or is refused by name', { timeout: 300_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const server = await startEdgeport({ owner: t, dataDir, env: { EDGEPORT_ADMIN_EMAIL: OPERATOR.email, EDGEPORT_ADMIN_KEY: OPERATOR.key } });
  const apiBase = server.urls['management API']!;
  const edge = server.urls.edge!;
  const api = managementApi(apiBase, OPERATOR.email, OPERATOR.key);
  const [account] = await api.call<Array<{ id: string }>>('GET', '/accounts');
  const accountId = account!.id;
  const zone = await api.call<{ id: string }>('POST', '/zones', { name: 'commands.test', account: { id: accountId } });
  const wrangler = wranglerFor(t, { apiBase, accountId, credentials: OPERATOR });
  const file = (name: string, text: string) => {
    writeFileSync(join(wrangler.dir, name), text);
    return join(wrangler.dir, name);
  };
  const project = (version: string, extra: Record<string, unknown> = {}) => {
    file('index.js', source(version));
    file(
      'wrangler.json',
      JSON.stringify({
        name: 'hello',
        main: 'index.js',
        compatibility_date: '2025-01-01',
        routes: [{ pattern: 'commands.test/*', zone_name: 'commands.test' }],
        vars: { GREETING: 'hi' },
        logpush: true,
        observability: { enabled: true, head_sampling_rate: 1 },
        ...extra,
      }),
    );
  };

  const verdicts: Array<{ command: string; verdict: Verdict; detail: string }> = [];
  /** Runs `args`; `check` says how it went (throws when the command did something wrong). */
  async function command(
    label: string,
    args: string[],
    check: (result: WranglerResult, out: string) => Promise<Verdict | void> | Verdict | void,
    options: { input?: string } = {},
  ): Promise<WranglerResult> {
    const result = await wrangler.run(args, options);
    const out = `${result.stdout}\n${result.stderr}`;
    try {
      const verdict = (await check(result, out)) ?? 'works';
      if (verdict === 'works') assert.equal(result.code, 0, `exited with ${result.code}`);
      verdicts.push({ command: label, verdict, detail: '' });
    } catch (error) {
      verdicts.push({ command: label, verdict: 'wrong', detail: `${(error as Error).message}\n${out.slice(0, 2000)}` });
    }
    return result;
  }
  const refusedByName = (result: WranglerResult, out: string, feature: RegExp): Verdict => {
    assert.notEqual(result.code, 0);
    assert.match(out, feature);
    return 'refused by name';
  };
  const versionOf = (out: string, label: RegExp) => label.exec(out)?.[1] ?? '';

  await command('whoami', ['whoami'], (_, out) => {
    assert.match(out, new RegExp(accountId));
  });
  await command('r2 bucket create', ['r2', 'bucket', 'create', 'site'], async () => {
    assert.equal((await api.call<{ name: string }>('GET', `/accounts/${accountId}/r2/buckets/site`)).name, 'site');
  });
  await command('r2 bucket list', ['r2', 'bucket', 'list'], (_, out) => {
    assert.match(out, /name:\s+site/);
  });
  const object = file('page.html', '<h1>public</h1>');
  await command('r2 object put --remote', ['r2', 'object', 'put', 'site/page.html', '--file', object, '--content-type', 'text/html', '--remote'], () => {});
  await command('r2 object get --remote', ['r2', 'object', 'get', 'site/page.html', '--pipe', '--remote'], (result) => {
    assert.equal(result.stdout, '<h1>public</h1>');
  });
  await command('r2 bucket info', ['r2', 'bucket', 'info', 'site'], (_, out) => {
    assert.match(out, /object_count:\s+1\b/);
  });
  const cors = file('cors.json', JSON.stringify({ rules: [{ allowed: { origins: ['https://app.test'], methods: ['GET'] } }] }));
  await command('r2 bucket cors set', ['r2', 'bucket', 'cors', 'set', 'site', '--file', cors, '--force'], () => {});
  await command('r2 bucket cors list', ['r2', 'bucket', 'cors', 'list', 'site'], (_, out) => {
    assert.match(out, /https:\/\/app\.test/);
  });
  await command('r2 bucket dev-url enable', ['r2', 'bucket', 'dev-url', 'enable', 'site', '--force'], async (_, out) => {
    const host = /Public access enabled at 'https:\/\/(pub-[0-9a-f]{32}\.r2\.localhost)'/.exec(out)?.[1];
    assert.ok(host, 'wrangler printed the public URL');
    const deadline = Date.now() + 5_000;
    for (;;) {
      const got = await viaEdge(edge, host, '/page.html');
      if (got.status === 200) return assert.equal(got.body, '<h1>public</h1>');
      assert.ok(Date.now() < deadline, `the public URL answered ${got.status}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
  await command('r2 bucket dev-url get', ['r2', 'bucket', 'dev-url', 'get', 'site'], (_, out) => {
    assert.match(out, /Public access is enabled at 'https:\/\/pub-[0-9a-f]{32}\.r2\.localhost'/);
  });
  await command(
    'r2 bucket domain add',
    ['r2', 'bucket', 'domain', 'add', 'site', '--domain', 'cdn.commands.test', '--zone-id', zone.id, '--force'],
    async () => {
      const got = await (async () => {
        const deadline = Date.now() + 5_000;
        for (;;) {
          const answer = await viaEdge(edge, 'cdn.commands.test', '/page.html');
          if (answer.status === 200 || Date.now() > deadline) return answer;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })();
      assert.deepEqual([got.status, got.body], [200, '<h1>public</h1>']);
    },
  );
  await command('r2 bucket domain list', ['r2', 'bucket', 'domain', 'list', 'site'], (_, out) => {
    assert.match(out, /cdn\.commands\.test/);
    assert.match(out, /commands\.test/);
  });
  await command('r2 object delete --remote', ['r2', 'object', 'delete', 'site/page.html', '--remote'], async () => {
    assert.equal((await viaEdge(edge, 'cdn.commands.test', '/page.html')).status, 404);
  });

  project('v1');
  const first = await command('deploy (first)', ['deploy'], async () => {
    await servedWithin(edge, 'commands.test', 'hi - - v1', 5_000);
    const settings = await api.call<{ logpush: boolean; observability: { enabled: boolean } }>(
      'GET',
      `/accounts/${accountId}/workers/scripts/hello/script-settings`,
    );
    assert.deepEqual([settings.logpush, settings.observability.enabled], [true, true], 'the first upload keeps logpush and observability');
  });
  const v1 = versionOf(first.stdout, /Current Version ID: (\S+)/);
  project('v2');
  const second = await command('deploy (again)', ['deploy'], async () => {
    await servedWithin(edge, 'commands.test', 'hi - - v2', 5_000);
  });
  const v2 = versionOf(second.stdout, /Current Version ID: (\S+)/);
  await command(
    'secret put',
    ['secret', 'put', 'TOKEN'],
    async () => {
      await servedWithin(edge, 'commands.test', 'hi s3cret - v2', 5_000);
    },
    { input: 's3cret' },
  );
  await command('secret list', ['secret', 'list'], (_, out) => {
    assert.match(out, /"name": "TOKEN"/);
    assert.doesNotMatch(out, /s3cret/);
  });
  const bulk = file('secrets.json', JSON.stringify({ BULK_A: 'a', BULK_B: 'b' }));
  await command('secret bulk', ['secret', 'bulk', bulk], async (_, out) => {
    assert.match(out, /Successfully created secret for key: BULK_A/);
    await servedWithin(edge, 'commands.test', 'hi s3cret a v2', 5_000);
  });
  await command('secret delete', ['secret', 'delete', 'BULK_B'], async () => {
    const names = (await api.call<Array<{ name: string }>>('GET', `/accounts/${accountId}/workers/scripts/hello/secrets`)).map((s) => s.name);
    assert.deepEqual(names, ['BULK_A', 'TOKEN']);
  });
  await command('versions list', ['versions', 'list'], (_, out) => {
    assert.ok(out.includes(v1) && out.includes(v2), 'both uploads are listed');
    assert.match(out, /Author:\s+commands@example\.test/);
  });
  const latest = (await api.call<{ items: Array<{ id: string }> }>('GET', `/accounts/${accountId}/workers/scripts/hello/versions`)).items[0]!.id;
  await command('versions view', ['versions', 'view', latest], (_, out) => {
    assert.match(out, /Author:\s+commands@example\.test/);
    assert.match(out, /Secret Name:\s+TOKEN/);
    assert.match(out, /Secret Name:\s+BULK_A/);
  });
  await command(
    'versions secret put',
    ['versions', 'secret', 'put', 'VERSIONED'],
    async (_, out) => {
      assert.match(out, /Created version (\S+) with secret VERSIONED/);
    },
    { input: 'per-version' },
  );
  await command('versions secret list', ['versions', 'secret', 'list'], (_, out) => {
    assert.match(out, /TOKEN/);
  });
  project('v3');
  const uploaded = await command('versions upload', ['versions', 'upload'], (_, out) => {
    assert.match(out, /Worker Version ID: \S+/);
  });
  const v3 = versionOf(uploaded.stdout, /Worker Version ID: (\S+)/);
  await command('versions deploy', ['versions', 'deploy', `${v3}@100%`, '--yes'], async () => {
    await servedWithin(edge, 'commands.test', 'hi s3cret a v3', 5_000);
  });
  await command('deployments list', ['deployments', 'list'], (_, out) => {
    assert.ok(out.includes(v3) && out.includes(v1), 'the deployments are listed');
  });
  await command('rollback', ['rollback', v1, '--message', 'back to one', '--yes'], async () => {
    await servedWithin(edge, 'commands.test', 'hi s3cret a v1', 5_000);
  });

  // tail --status error: only the requests that threw are printed.
  {
    const tail = wrangler.start(['tail', 'hello', '--format', 'json', '--status', 'error'], { env: { HTTPS_PROXY: '', HTTP_PROXY: '' } });
    let printed = '';
    tail.stdout!.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    const deadline = Date.now() + 30_000;
    let detail = '';
    try {
      while (!printed.includes('/boom')) {
        assert.ok(Date.now() < deadline, 'wrangler tail printed no failed request within 30 s');
        await viaEdge(edge, 'commands.test', '/fine');
        await viaEdge(edge, 'commands.test', '/boom');
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      assert.doesNotMatch(printed, /\/fine/, 'a request that went well was printed');
      assert.match(printed, /"outcome": "exception"/);
    } catch (error) {
      detail = `${(error as Error).message}\n${printed.slice(0, 2000)}`;
    }
    await stopChild(tail, 10_000);
    verdicts.push({ command: 'tail --status error', verdict: detail === '' ? 'works' : 'wrong', detail });
  }

  // Refused by name: what edgeport does not have.
  await command('kv namespace create', ['kv', 'namespace', 'create', 'cache'], (result, out) =>
    refusedByName(result, out, /edgeport does not provide Workers KV \[code: 10015\]/),
  );
  await command('d1 create', ['d1', 'create', 'db'], (result, out) => refusedByName(result, out, /edgeport does not provide D1 databases \[code: 10015\]/));

  // Without --force, wrangler first asks what refers to the script (and, not on a terminal, takes the default: yes).
  const other = await fetch(`${apiBase}/accounts/${accountId}/workers/scripts/other`, {
    method: 'PUT',
    headers: { 'x-auth-email': OPERATOR.email, 'x-auth-key': OPERATOR.key },
    body: wranglerForm(source('other'), { main_module: 'index.js' }),
  });
  assert.equal(other.status, 200);
  await command('delete (asks first)', ['delete', 'other'], async () => {
    const names = (await api.call<Array<{ id: string }>>('GET', `/accounts/${accountId}/workers/scripts`)).map((script) => script.id);
    assert.deepEqual(names, ['hello'], 'other is gone, hello stays');
  });
  await command('delete', ['delete', 'hello', '--force'], async () => {
    const scripts = await api.call<unknown[]>('GET', `/accounts/${accountId}/workers/scripts`);
    assert.deepEqual(scripts, [], 'the script is gone');
    // Every instance stops serving it within about a second (they poll the registry).
    const deadline = Date.now() + 5_000;
    while ((await viaEdge(edge, 'commands.test', '/')).status === 200) {
      assert.ok(Date.now() < deadline, 'and no longer served');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
  await command('r2 bucket delete', ['r2', 'bucket', 'delete', 'site'], async () => {
    const answer = await fetch(`${apiBase}/accounts/${accountId}/r2/buckets/site`, { headers: { 'x-auth-email': OPERATOR.email, 'x-auth-key': OPERATOR.key } });
    assert.equal(answer.status, 404);
  });

  const count = (verdict: Verdict) => verdicts.filter((entry) => entry.verdict === verdict).length;
  console.log(`wrangler ${verdicts.length} commands: works ${count('works')}, refused by name ${count('refused by name')}, wrong ${count('wrong')}`);
  for (const entry of verdicts) console.log(`  ${entry.verdict.padEnd(15)} ${entry.command}`);
  const wrong = verdicts.filter((entry) => entry.verdict === 'wrong');
  assert.deepEqual(
    wrong.map((entry) => `${entry.command}: ${entry.detail}`),
    [],
    'every command works or is refused by name',
  );
  assert.deepEqual(wrangler.refused(), [], 'wrangler tried to reach a host off this machine');
});
