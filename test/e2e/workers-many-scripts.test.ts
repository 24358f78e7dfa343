/**
 * Many scripts on one instance, a small version of `npm run bench isolates`: through `edgeport
 * start`, 30 scripts deployed across 3 accounts, 24 of them asked for once each: every one answers
 * 200, there is one workerd process per account that has running scripts (none for the others),
 * and edgeport with every workerd stays within a memory budget (a process per script would take
 * about 18 MB per script). Prints the cold starts' latencies, with and without the account's
 * process already running.
 */
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { residentBytes } from '../helpers/process-memory.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { workerdProcesses } from '../helpers/workerd-processes.ts';
import { deploy, tenant, type Tenant } from '../helpers/workers-tenants.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'many-0@example.test', EDGEPORT_ADMIN_KEY: 'many-scripts-operator-key-0123' };
const MiB = 1024 * 1024;

function get(edge: URL, host: string, path: string, agent: Agent): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    request({ host: edge.hostname, port: edge.port, path, headers: { host }, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
    })
      .on('error', reject)
      .end();
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

test('30 scripts across 3 accounts: 24 asked for all answer, in one workerd process per account, within a memory budget', { timeout: 180_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const server = await startEdgeport({ owner: t, dataDir, env: ADMIN });
  const apiUrl = server.urls['management API']!;
  const edge = new URL(server.urls.edge!);
  const tenants: Tenant[] = [];
  for (let i = 0; i < 4; i++)
    tenants.push(await tenant(apiUrl, dataDir, `many-${i}@example.test`, `many-${i}.test`, i === 0 ? ADMIN.EDGEPORT_ADMIN_KEY : undefined));
  // Accounts 0-2 get ten scripts each; account 3 none that is asked for. Account 0's last: once
  // its s9 is served, the edge has read every deploy (it reloads what is deployed as a whole).
  for (const account of [3, 2, 1, 0]) {
    for (let script = 0; script < (account === 3 ? 1 : 10); script++) {
      await deploy(apiUrl, tenants[account]!, `s${script}`, `export default { fetch: () => new Response(${JSON.stringify(`${account}/${script}`)}) };`);
    }
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  t.after(() => agent.destroy());
  for (const deadline = Date.now() + 20_000; (await get(edge, tenants[0]!.zone, '/s9/', agent)).status !== 200;) {
    assert.ok(Date.now() < deadline, 'the deployed scripts were served within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const noProcess: number[] = [];
  const processRuns: number[] = [];
  const answers: string[] = [];
  for (let script = 1; script < 9; script++) {
    for (let account = 0; account < 3; account++) {
      const answer = await get(edge, tenants[account]!.zone, `/s${script}/`, agent);
      answers.push(`${answer.status} ${answer.body}`);
      (script === 1 && account > 0 ? noProcess : processRuns).push(answer.ms);
    }
  }
  const expected = [];
  for (let script = 1; script < 9; script++) for (let account = 0; account < 3; account++) expected.push(`200 ${account}/${script}`);
  assert.deepEqual(answers, expected);
  const workerds = workerdProcesses(server.child.pid);
  const workerdBytes = workerds.reduce((sum, pid) => sum + residentBytes(pid), 0);
  const edgeportBytes = residentBytes(server.child.pid!);
  t.diagnostic(
    `first request, account without a process yet: median ${median(noProcess).toFixed(1)} ms of ${noProcess.length}; ` +
      `account's process running: median ${median(processRuns).toFixed(1)} ms of ${processRuns.length}`,
  );
  t.diagnostic(
    `${workerds.length} workerd processes for ${answers.length + 1} running scripts; resident memory: edgeport ${(edgeportBytes / MiB).toFixed(0)} MiB + workerd ${(workerdBytes / MiB).toFixed(0)} MiB`,
  );
  assert.equal(workerds.length, 3, 'one process per account with running scripts, none for the account whose script was not asked for');
  // 25 processes of their own would take about 25 x 48 MiB of workerd alone.
  assert.ok(workerdBytes < 500 * MiB, `${(workerdBytes / MiB).toFixed(0)} MiB`);
});
