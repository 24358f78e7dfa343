/**
 * file:// log destinations stay in their lane, through the real API: only below `[logs]
 * file_roots` (never inside the data dir, no `..`, no symbolic link leading out, even one swapped
 * in after the job), refused with 400 / 1002 naming the roots; and a challenge never overwrites
 * another account's challenge (two accounts, the official SDK and plain fetch).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { tempDir } from '../helpers/temp-dir.ts';
import { startApi, type ApiFixture, type Credentials, type ErrorEntry } from './helpers.ts';

const CHALLENGE = 'ownership-challenge.txt';

async function zoneOf(api: ApiFixture, name: string, as?: Credentials): Promise<string> {
  const created = await api.call('/zones', { method: 'POST', json: { name }, ...(as ? { as } : {}) });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return created.body.result.id;
}

/** POST .../ownership as `as`; the answer's status and body. */
function challenge(api: ApiFixture, zoneId: string, destination: string, as?: Credentials) {
  return api.call(`/zones/${zoneId}/logshipping/ownership`, { method: 'POST', json: { destination_conf: destination }, ...(as ? { as } : {}) });
}

/** A 400 / 1002 on /destination_conf whose message matches. */
function assertRefused(answer: { status: number; body: { errors: ErrorEntry[] } }, message: RegExp): void {
  assert.equal(answer.status, 400, JSON.stringify(answer.body));
  const [error] = answer.body.errors;
  assert.deepEqual([error!.code, error!.source], [1002, { pointer: '/destination_conf' }]);
  assert.match(error!.message, message);
}

test(
  'file:// destinations only below [logs] file_roots: inside, outside, "..", symbolic links, the data dir; refusals name the roots',
  { timeout: 30_000 },
  async (t) => {
    const base = tempDir(t);
    const [rootA, rootB, outside] = [join(base, 'root-a'), join(base, 'root-b'), join(base, 'outside')];
    mkdirSync(rootA);
    mkdirSync(outside);
    symlinkSync(outside, join(rootA, 'escape'));
    // A root given through a link is judged by where it leads.
    symlinkSync(rootA, join(base, 'root-link'));
    const api = await startApi(t, { fileRoots: [join(base, 'root-link'), rootB] });
    const zoneId = await zoneOf(api, 'roots.test');
    const jobs = `/zones/${zoneId}/logshipping/jobs`;
    const roots = new RegExp(`\\[logs\\] file_roots\\): ${join(base, 'root-link')}, ${rootB}`);

    const refusedOutside = await challenge(api, zoneId, `file://${outside}/{DATE}`);
    assertRefused(refusedOutside, roots);
    assert.match(
      refusedOutside.body.errors[0].message,
      new RegExp(`^'file://${outside}/\\{DATE\\}' is not a valid value for destination_conf because it must lie below one of the directories`),
    );
    assert.equal(existsSync(join(outside, CHALLENGE)), false, 'nothing written outside');
    assertRefused(await challenge(api, zoneId, `file://${rootA}/escape/logs`), /through a symbolic link/);
    assert.equal(existsSync(join(outside, 'logs')), false, 'no directory made through the link');
    assertRefused(await challenge(api, zoneId, `file://${base}`), roots);
    assertRefused(await api.call(jobs, { method: 'POST', json: { destination_conf: `file://${outside}`, ownership_challenge: 'x' } }), roots);
    assertRefused(
      await api.call(`/zones/${zoneId}/logshipping/ownership/validate`, {
        method: 'POST',
        json: { destination_conf: `file://${outside}`, ownership_challenge: 'x' },
      }),
      roots,
    );
    const dots = await challenge(api, zoneId, `file://${rootA}/../outside`);
    assertRefused(dots, /"\." or "\.\." segments/);

    // Inside a root, through the root's link or its real path, with doubled slashes: one directory.
    const cf = api.sdk();
    const issued = await cf.logpush.ownership.create({ zone_id: zoneId, destination_conf: `file://${join(base, 'root-link')}/logs/{DATE}` });
    assert.deepEqual(issued, { filename: join(base, 'root-link', 'logs', CHALLENGE), message: '', valid: true });
    const token = readFileSync(join(rootA, 'logs', CHALLENGE), 'utf8');
    const job = await api.call(jobs, { method: 'POST', json: { destination_conf: `file://${rootA}//logs/{DATE}`, ownership_challenge: token, enabled: true } });
    assert.equal(job.status, 200, JSON.stringify(job.body));
    assert.deepEqual(await cf.logpush.ownership.validate({ zone_id: zoneId, destination_conf: `file://${rootA}/logs/http`, ownership_challenge: token }), {
      valid: true,
    });

    // A link put in the challenge file's place is not written through.
    mkdirSync(join(rootA, 'trap'));
    writeFileSync(join(outside, 'precious'), 'keep');
    symlinkSync(join(outside, 'precious'), join(rootA, 'trap', CHALLENGE));
    const trapped = await challenge(api, zoneId, `file://${rootA}/trap`);
    assert.deepEqual([trapped.body.result.valid, trapped.body.result.filename], [false, null]);
    assert.match(trapped.body.result.message, /^the challenge could not be written to the destination: ELOOP/);
    assert.equal(readFileSync(join(outside, 'precious'), 'utf8'), 'keep');

    // A PUT to a destination outside is refused and changes nothing.
    const moved = await api.call(`${jobs}/${job.body.result.id}`, {
      method: 'PUT',
      json: { destination_conf: `file://${outside}`, ownership_challenge: token },
    });
    assertRefused(moved, roots);
    assert.equal((await api.call(`${jobs}/${job.body.result.id}`)).body.result.destination_conf, `file://${rootA}//logs/{DATE}`);
  },
);

test(
  'never inside the data dir but for its log-files folder, even when a root contains it; an empty file_roots turns file:// off',
  { timeout: 30_000 },
  async (t) => {
    const api = await startApi(t); // roots: the system's temporary directory, which holds the data dir
    const zoneId = await zoneOf(api, 'data.test');
    for (const inside of [api.dataDir, join(api.dataDir, 'blobs'), join(api.dataDir, 'logs', 'new', '{DATE}')]) {
      assertRefused(await challenge(api, zoneId, `file://${inside}`), /inside the server's data directory/);
    }
    const around = tempDir(t);
    symlinkSync(join(api.dataDir, 'blobs'), join(around, 'blobs-link'));
    assertRefused(await challenge(api, zoneId, `file://${around}/blobs-link`), /inside the server's data directory/);
    assert.equal(existsSync(join(api.dataDir, 'blobs', CHALLENGE)), false);
    assert.equal((await challenge(api, zoneId, `file://${around}/logs`)).body.result.valid, true, 'beside the data dir is fine');
    const logFiles = join(api.dataDir, 'log-files', 'mine');
    assert.equal((await challenge(api, zoneId, `file://${logFiles}`)).body.result.valid, true, "the data dir's log-files folder (the default root) is fine");
    assert.equal(existsSync(join(logFiles, CHALLENGE)), true);
    assertRefused(await challenge(api, zoneId, `file://${api.dataDir}/log-files-not`), /outside the data directory but for .*\/log-files/);

    const off = await startApi(t, { fileRoots: [] });
    const offZone = await zoneOf(off, 'off.test');
    assertRefused(
      await challenge(off, offZone, `file://${tempDir(t)}/logs`),
      /file:\/\/ destinations are turned off on this server \(\[logs\] file_roots is empty\)/,
    );
  },
);

test('a symbolic link swapped in after the job was made leads no read outside (delivered lines)', { timeout: 30_000 }, async (t) => {
  const base = tempDir(t);
  const [root, outside] = [join(base, 'root'), join(base, 'outside')];
  mkdirSync(join(outside, '20261122'), { recursive: true });
  const api = await startApi(t, { fileRoots: [root] });
  const zoneId = await zoneOf(api, 'swap.test');
  const destination = `file://${root}/logs`;
  assert.equal((await challenge(api, zoneId, destination)).body.result.valid, true);
  const token = readFileSync(join(root, 'logs', CHALLENGE), 'utf8');
  const job = (await api.call(`/zones/${zoneId}/logshipping/jobs`, { method: 'POST', json: { destination_conf: destination, ownership_challenge: token } }))
    .body.result;
  const delivered = `/zones/${zoneId}/logshipping/jobs/${job.id}/delivered`;
  const batch = (line: string) => gzipSync(`${line}\n`);
  mkdirSync(join(root, 'logs', '20261122'));
  writeFileSync(join(root, 'logs', '20261122', 'a.log.gz'), batch('{"n":"ours"}'));
  writeFileSync(join(outside, '20261122', 'z.log.gz'), batch('{"n":"secret"}'));
  // The batch outside is the newest by far: were the link followed, it would be read.
  utimesSync(join(outside, '20261122', 'z.log.gz'), new Date(Date.now() + 3600_000), new Date(Date.now() + 3600_000));
  assert.deepEqual((await api.call(delivered)).body.result.lines, ['{"n":"ours"}']);

  // A day directory swapped for a link: the scan does not follow it.
  renameSync(join(root, 'logs', '20261122'), join(root, 'logs', 'old'));
  symlinkSync(join(outside, '20261122'), join(root, 'logs', '20261122'));
  assert.deepEqual((await api.call(delivered)).body.result.lines, ['{"n":"ours"}'], 'the batch behind the link is not read');
  // The destination itself swapped for a link: refused.
  renameSync(join(root, 'logs'), join(root, 'logs-before'));
  symlinkSync(outside, join(root, 'logs'));
  const refused = await api.call(delivered);
  assert.equal(refused.status, 400);
  assert.equal(refused.body.errors[0].code, 1002);
  assert.match(refused.body.errors[0].message, /^the delivered lines cannot be read back: it must lie below one of the directories .*through a symbolic link/);
  assert.doesNotMatch(JSON.stringify(refused.body), /secret/);
});

test(
  "a challenge never overwrites another account's: the same directory, one above or below it is refused; one account shares its own",
  { timeout: 30_000 },
  async (t) => {
    const root = tempDir(t);
    const api = await startApi(t, { fileRoots: [root] });
    const other = await api.newAccount('other@example.com');
    const [zoneA, zoneA2, zoneB] = [await zoneOf(api, 'a.test'), await zoneOf(api, 'a2.test'), await zoneOf(api, 'b.test', other)];
    const shared = join(root, 'shared');
    const issuedA = await api.sdk().logpush.ownership.create({ zone_id: zoneA, destination_conf: `file://${shared}/{DATE}` });
    assert.equal(issuedA?.valid, true);
    const tokenA = readFileSync(join(shared, CHALLENGE), 'utf8');

    const cfB = api.sdk(other);
    for (const destination of [`file://${shared}/{DATE}`, `file://localhost${shared}`, `file://${root}//shared/`, `file://${shared}/deeper/{DATE}`]) {
      const refused = await cfB.logpush.ownership.create({ zone_id: zoneB, destination_conf: destination });
      assert.equal(refused?.valid, false, destination);
      assert.equal(refused?.filename, null);
      assert.match(
        refused?.message ?? '',
        /is taken: another account holds it, or a directory above or below it, with a log job or an unexpired ownership challenge; choose another directory$/,
      );
    }
    // The root itself is no one's: refused for every account, whatever is below it.
    assertRefused(
      await challenge(api, zoneB, `file://${root}`, other),
      new RegExp(`${root} is a file root itself \\(\\[logs\\] file_roots\\), shared by every account of this server: choose a directory below it`),
    );
    assert.equal(readFileSync(join(shared, CHALLENGE), 'utf8'), tokenA, "the holder's file is left alone");
    assert.equal(existsSync(join(root, CHALLENGE)), false, 'nothing written above it');
    assert.equal(existsSync(join(shared, 'deeper')), false, 'nor below it');
    const stolen = await api.call(`/zones/${zoneB}/logshipping/jobs`, {
      method: 'POST',
      as: other,
      json: { destination_conf: `file://${shared}`, ownership_challenge: tokenA },
    });
    assert.equal(stolen.body.errors[0].message, 'incorrect ownership challenge');

    assert.equal((await challenge(api, zoneB, `file://${root}/shared-b`, other)).body.result.valid, true, "a sibling whose name starts alike is B's to take");
    assert.equal((await challenge(api, zoneA2, `file://${shared}`)).body.result.valid, true, "the same account's other zone shares the directory");
    const tokenA2 = readFileSync(join(shared, CHALLENGE), 'utf8');
    assert.equal(
      (
        await api.call(`/zones/${zoneA2}/logshipping/jobs`, {
          method: 'POST',
          json: { destination_conf: `file://${shared}/{DATE}`, ownership_challenge: tokenA2 },
        })
      ).status,
      200,
    );
    assert.equal(
      (
        await api.call(`/zones/${zoneA}/logshipping/jobs`, {
          method: 'POST',
          json: { destination_conf: `file://${shared}/{DATE}`, ownership_challenge: tokenA },
        })
      ).status,
      200,
    );

    // Two accounts racing for one new directory: exactly one gets it, and the file holds its token.
    const race = join(root, 'race');
    const answers = await Promise.all([challenge(api, zoneA, `file://${race}`), challenge(api, zoneB, `file://${race}`, other)]);
    const valid = answers.map((answer) => answer.body.result.valid);
    assert.equal(valid.filter(Boolean).length, 1, JSON.stringify(answers.map((a) => a.body.result)));
    const winnerZone = valid[0] ? zoneA : zoneB;
    const winnerAs = valid[0] ? undefined : other;
    const check = await api.call(`/zones/${winnerZone}/logshipping/ownership/validate`, {
      method: 'POST',
      json: { destination_conf: `file://${race}`, ownership_challenge: readFileSync(join(race, CHALLENGE), 'utf8') },
      ...(winnerAs ? { as: winnerAs } : {}),
    });
    assert.deepEqual(check.body.result, { valid: true });

    // A challenge alone lasts 7 days; a directory with a job in it stays held (see the takeover test below).
    api.clock.advance(7 * 24 * 3600 * 1000);
    assert.equal((await challenge(api, zoneB, `file://${root}/shared-b`, other)).body.result.valid, true, 'B renews its own');
    assert.equal((await challenge(api, zoneB, `file://${race}/b`, other)).body.result.valid, true, 'an expired challenge with no job holds nothing');
    assert.equal((await challenge(api, zoneB, `file://${shared}`, other)).body.result.valid, false, "A's jobs still hold its directory");
  },
);

test(
  'a job holds its directory after its challenge expired: another account cannot take it, nor a directory above or below it, nor read its lines',
  { timeout: 30_000 },
  async (t) => {
    const root = tempDir(t);
    const api = await startApi(t, { fileRoots: [root] });
    const mallory = await api.newAccount('mallory@example.com');
    const [zoneA, zoneM] = [await zoneOf(api, 'alice.test'), await zoneOf(api, 'mallory.test', mallory)];
    const dir = join(root, 'alice');
    // The honest side: a challenge, a job, a delivered batch holding a cookie.
    assert.equal((await challenge(api, zoneA, `file://${dir}/{DATE}`)).body.result.valid, true);
    const token = readFileSync(join(dir, CHALLENGE), 'utf8');
    const job = await api.call(`/zones/${zoneA}/logshipping/jobs`, {
      method: 'POST',
      json: { name: 'alice-secret-job', destination_conf: `file://${dir}/{DATE}`, ownership_challenge: token, enabled: true },
    });
    assert.equal(job.status, 200, JSON.stringify(job.body));
    mkdirSync(join(dir, '20261122'));
    writeFileSync(join(dir, '20261122', 'a.log.gz'), gzipSync('{"Cookies":{"session":"alice-secret"}}\n'));

    // Eight days on: Alice's challenge has expired; her job lives on.
    api.clock.advance(8 * 24 * 3600 * 1000);
    for (const destination of [`file://${dir}`, `file://${dir}/{DATE}`, `file://${root}//alice/`, `file://${dir}/20261122`, `file://${dir}/deeper/{DATE}`]) {
      const refused = await challenge(api, zoneM, destination, mallory);
      assert.equal(refused.status, 200);
      assert.deepEqual([refused.body.result.valid, refused.body.result.filename], [false, null], destination);
      assert.match(
        refused.body.result.message,
        /is taken: another account holds it, or a directory above or below it, with a log job or an unexpired ownership challenge; choose another directory$/,
      );
      assert.doesNotMatch(JSON.stringify(refused.body), /alice\.test|alice-secret-job|alice@/, "the refusal names nothing of Alice's");
    }
    assert.equal(readFileSync(join(dir, CHALLENGE), 'utf8'), token, "Alice's file is left alone");
    // Without a challenge of her own, Mallory has no token to make a job with (Alice's is expired and was never hers).
    for (const attempt of [token, 'x']) {
      const stolen = await api.call(`/zones/${zoneM}/logshipping/jobs`, {
        method: 'POST',
        as: mallory,
        json: { destination_conf: `file://${dir}`, ownership_challenge: attempt },
      });
      assert.deepEqual([stolen.status, stolen.body.errors[0].message], [400, 'incorrect ownership challenge']);
    }
    assert.deepEqual((await api.call(`/zones/${zoneM}/logshipping/jobs`, { as: mallory })).body.result, []);
    // A root-level claim would cover Alice's directory: the root itself is refused anyway.
    assert.equal((await challenge(api, zoneM, `file://${root}`, mallory)).status, 400);
    // The honest side still reads its lines, and a sibling is Mallory's to take.
    assert.deepEqual((await api.call(`/zones/${zoneA}/logshipping/jobs/${job.body.result.id}/delivered`)).body.result.lines, [
      '{"Cookies":{"session":"alice-secret"}}',
    ]);
    assert.equal((await challenge(api, zoneM, `file://${root}/mallory`, mallory)).body.result.valid, true);

    // Once Alice deletes her job, the directory is free again.
    assert.equal((await api.call(`/zones/${zoneA}/logshipping/jobs/${job.body.result.id}`, { method: 'DELETE' })).status, 200);
    assert.equal((await challenge(api, zoneM, `file://${dir}`, mallory)).body.result.valid, true);
  },
);
