/**
 * One account cannot hold up another's deploys (through `edgeport start`, two accounts): the first
 * floods uploads of scripts whose top level never ends (each trial lasts until the CPU limit cuts
 * it off), and meanwhile the second account's upload is tried at once and deployed. The flooding
 * account keeps one trial running and three waiting; its other uploads are answered 429 / 971 with
 * Retry-After at once.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { tenant, type Tenant } from '../helpers/workers-tenants.ts';
import { wranglerForm } from '../helpers/workers-upload.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'hog@example.test', EDGEPORT_ADMIN_KEY: 'upload-fairness-operator-key-01' };
const LOOP = 'while (true) {}\nexport default { fetch: () => new Response("never") };';
const CALM = 'export default { fetch: () => new Response("calm") };';

interface UploadAnswer {
  status: number;
  ms: number;
  code: number | undefined;
  message: string | undefined;
  retryAfter: string | null;
}

async function upload(apiUrl: string, who: Tenant, name: string, source: string): Promise<UploadAnswer> {
  const started = performance.now();
  const answer = await fetch(`${apiUrl}/accounts/${who.id}/workers/scripts/${name}`, {
    method: 'PUT',
    headers: { 'x-auth-email': who.email, 'x-auth-key': who.key },
    body: wranglerForm(source, {}),
  });
  const body = (await answer.json()) as { errors: Array<{ code: number; message: string }> };
  return {
    status: answer.status,
    ms: performance.now() - started,
    code: body.errors[0]?.code,
    message: body.errors[0]?.message,
    retryAfter: answer.headers.get('retry-after'),
  };
}

test(
  "an account flooding uploads that never start holds one trial place; another account's upload is tried and deployed at once",
  { timeout: 120_000 },
  async (t) => {
    const dir = tempDir(t);
    const dataDir = join(dir, 'data');
    const config = join(dir, 'edgeport.toml');
    // A 3 s CPU limit: each looping trial holds its place that long.
    writeFileSync(config, '[workers]\nscript_cpu_ms = 3000\n');
    const server = await startEdgeport({ owner: t, dataDir, env: ADMIN, shedding: false, args: ['--config', config] });
    const apiUrl = server.urls['management API']!;
    const hog = await tenant(apiUrl, dataDir, ADMIN.EDGEPORT_ADMIN_EMAIL, 'hog.test', ADMIN.EDGEPORT_ADMIN_KEY);
    const calm = await tenant(apiUrl, dataDir, 'calm@example.test', 'calm.test');

    const flood = Array.from({ length: 12 }, (_, i) => upload(apiUrl, hog, `loop-${i}`, LOOP));
    // The hog's first trial is running, three more wait, and the rest are refused at once.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const calmAnswer = await upload(apiUrl, calm, 'calm', CALM);
    assert.equal(calmAnswer.status, 200, JSON.stringify(calmAnswer));
    // Tried at once (a workerd start), not after the hog's trials of 3 s each.
    assert.ok(calmAnswer.ms < 2_500, `the calm account's upload took ${Math.round(calmAnswer.ms)} ms`);

    const hogAnswers = await Promise.all(flood);
    const tried = hogAnswers.filter((a) => a.status === 400);
    const refused = hogAnswers.filter((a) => a.status === 429);
    assert.equal(tried.length, 4, JSON.stringify(hogAnswers.map((a) => a.status)));
    assert.equal(refused.length, 8);
    for (const answer of tried) {
      assert.equal(answer.code, 10021);
      assert.match(answer.message!, /CPU time limit/);
    }
    for (const answer of refused) {
      assert.equal(answer.code, 971);
      assert.equal(answer.retryAfter, '5');
      assert.match(answer.message!, /your account has as many script uploads being tried as it may/);
      assert.ok(answer.ms < 1_000, `a refusal took ${Math.round(answer.ms)} ms`);
    }
    // One after another: the fourth trial ended after about four CPU limits.
    const slowest = Math.max(...tried.map((a) => a.ms));
    t.diagnostic(
      `calm upload ${Math.round(calmAnswer.ms)} ms; hog trials ended after ${tried.map((a) => Math.round(a.ms)).join(', ')} ms; refusals within ${Math.round(Math.max(...refused.map((a) => a.ms)))} ms`,
    );
    assert.ok(slowest > 4 * 3_000 - 500, `the hog's trials ran one at a time (the last ended after ${Math.round(slowest)} ms)`);

    // The calm account's script is deployed and serves.
    const list = await fetch(`${apiUrl}/accounts/${calm.id}/workers/scripts`, { headers: { 'x-auth-email': calm.email, 'x-auth-key': calm.key } });
    const scripts = ((await list.json()) as { result: Array<{ id: string }> }).result.map((s) => s.id);
    assert.deepEqual(scripts, ['calm']);
  },
);

test("[workers] max_upload_trials_* set an account's share of upload trials and the server's", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const config = join(dir, 'edgeport.toml');
  // Two of an account's trials at once and one more waiting; three places in all, so another
  // account still finds one free.
  writeFileSync(
    config,
    '[workers]\nscript_cpu_ms = 2000\nmax_upload_trials = 3\nmax_upload_trials_per_account = 2\nmax_upload_trials_waiting_per_account = 1\n',
  );
  const server = await startEdgeport({ owner: t, dataDir, env: ADMIN, shedding: false, args: ['--config', config] });
  const apiUrl = server.urls['management API']!;
  const hog = await tenant(apiUrl, dataDir, ADMIN.EDGEPORT_ADMIN_EMAIL, 'hog.test', ADMIN.EDGEPORT_ADMIN_KEY);
  const calm = await tenant(apiUrl, dataDir, 'calm@example.test', 'calm.test');

  const flood = Array.from({ length: 5 }, (_, i) => upload(apiUrl, hog, `loop-${i}`, LOOP));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const calmAnswer = await upload(apiUrl, calm, 'calm', CALM);
  assert.equal(calmAnswer.status, 200, JSON.stringify(calmAnswer));
  assert.ok(calmAnswer.ms < 2_400, `the calm account's upload took ${Math.round(calmAnswer.ms)} ms`);

  const hogAnswers = await Promise.all(flood);
  const tried = hogAnswers.filter((a) => a.status === 400).map((a) => a.ms);
  assert.equal(tried.length, 3, JSON.stringify(hogAnswers.map((a) => a.status)));
  assert.equal(hogAnswers.filter((a) => a.status === 429 && a.code === 971).length, 2);
  tried.sort((a, b) => a - b);
  t.diagnostic(`hog trials ended after ${tried.map(Math.round).join(', ')} ms`);
  // Two ran side by side (ending together), the third after one of them (a CPU limit later).
  assert.ok(tried[1]! - tried[0]! < 1_500, `the second trial ran beside the first (ended ${Math.round(tried[1]! - tried[0]!)} ms after it)`);
  assert.ok(tried[2]! - tried[1]! > 1_500, `the third trial waited for a place (ended ${Math.round(tried[2]! - tried[1]!)} ms after the second)`);
});
