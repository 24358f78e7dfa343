/**
 * Fair credential checking against the real `edgeport start`, attacker and honest side by side.
 *
 * Management API: while 64 addresses flood wrong keys (a new e-mail each time, so only the
 * per-address limits and the hash queue stand in the way), 10 sign-ins with correct keys, each
 * from an address never seen and each a pair never verified (so each needs its scrypt hash), are
 * all admitted, 9 of 10 within 1 s (see SIGN_IN_BOUND_MS). Before the hash queue was shared fairly, wrong keys from 16 addresses held
 * all 16 places and none of 10 got in (503).
 *
 * S3 API: while 16 addresses flood a presigned URL with a wrong signature (far past the old
 * per-key-id limit of 10), the genuine URL works from a new address, and so does the AWS SDK.
 *
 * The floods run in their own process at nice 5 (see auth-flood.test.ts: an attacker's CPU is not
 * the server's, but here both share one small machine). A round whose sign-ins miss 1 s, or whose
 * flood did not get going, is measured once more on a new server before the test fails: the
 * machine is shared, and a stalled second says little about fairness.
 */
import assert from 'node:assert/strict';
import { Agent as HttpAgent } from 'node:http';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { test, type TestContext } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Agent, fetch } from 'undici';
import { createAccount } from '../../src/api/index.ts';
import { systemClock } from '../../src/core/clock.ts';
import { ScryptThread } from '../../src/core/crypto/scrypt-thread.ts';
import { openControlStore } from '../../src/db/open-control-store.ts';
import { startFlood, type FloodResult } from '../helpers/flood-process.ts';
import { startEdgeport, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'ops@example.com', EDGEPORT_ADMIN_KEY: 'the-right-key-0123456789' };
const S3_KEY = { accessKeyId: 'FAIRTESTKEY00001', secretAccessKey: 'fair-test-secret-0123456789' };
const SIGN_INS = 10;
/** The figure: each fresh sign-in admitted within a second. */
const SIGN_IN_BOUND_MS = 1_000;
const FLOOD_MS = 14_000;
/** Sign-ins measured before the flood, on the same server: what this machine takes now. */
const QUIET_SIGN_INS = 5;
/**
 * On a machine busy with other work, the hashing thread (at nice 10) is slow with no flood at all
 * (seen: load average 10 on 2 cores, 20 hashes in 8 s); there the bound is twice the slowest quiet sign-in.
 */
const BUSY_FACTOR = 2;
/*
 * Nine of ten within the bound, the slowest within 10 s: on a machine at load 12-14 (2 cores), a
 * single sign-in in ten now and then took 2-8 s while the others took 100-600 ms, the quiet ones
 * up to 1 s, and nothing was refused; at load 8 all ten took 80-650 ms. Before the queue was fair,
 * none of ten got in at all (503), which is what `statuses` checks.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function startServer(t: TestContext): Promise<{ server: EdgeportServer; dataDir: string }> {
  const dataDir = join(tempDir(t), 'data');
  const server = await startEdgeport({
    owner: t,
    dataDir,
    env: { ...ADMIN, EDGEPORT_S3_ACCESS_KEY_ID: S3_KEY.accessKeyId, EDGEPORT_S3_SECRET_ACCESS_KEY: S3_KEY.secretAccessKey },
  });
  return { server, dataDir };
}

/** `count` new accounts made beside the running server, as `edgeport accounts create` does. */
async function newAccounts(dataDir: string, count: number): Promise<Array<{ email: string; key: string }>> {
  const control = await openControlStore({ dataDir, clock: systemClock });
  const scrypt = new ScryptThread();
  try {
    const made = [];
    for (let i = 0; i < count; i++) {
      const { account, key } = await createAccount(control, `signer${i}@example.com`, { scrypt });
      made.push({ email: account.email, key });
    }
    return made;
  } finally {
    await scrypt.close();
    await control.close();
  }
}

/** The listener's answer when the event loop runs behind (LISTENER_OVERLOADED): load shedding, which answers everyone alike. */
const SHED = /"code":10100/;
/** The same on the S3 port. */
const S3_SHED = /<Code>SlowDown<\/Code><Message>edgeport is overloaded/;

/**
 * POST /sessions from `address` (a new client): its status and how long the request the listener
 * took in was answered in. A request the listener shed (its event loop was behind, whoever asked:
 * seen here when the machine ran at load 11, with stalls of seconds) is sent again 100 ms later;
 * the sheds and the whole time are reported beside.
 */
async function signIn(
  t: TestContext,
  api: string,
  address: string,
  as: { email: string; key: string },
): Promise<{ status: number; ms: number; totalMs: number; body: string; shed: number }> {
  const agent = new Agent({ localAddress: address });
  t.after(() => agent.close());
  const first = performance.now();
  for (let shed = 0; ; shed++) {
    const started = performance.now();
    const response = await fetch(`${api}/sessions`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(as),
    });
    const body = await response.text();
    if (response.status !== 503 || !SHED.test(body) || shed === 20) {
      return { status: response.status, ms: performance.now() - started, totalMs: performance.now() - first, body, shed };
    }
    await sleep(100);
  }
}

interface SignInRound {
  latencies: number[];
  statuses: number[];
  flood: FloodResult;
  /** What the slowest may take: 1 s, or twice the slowest sign-in without the flood on a busy machine. */
  bound: number;
  /** The flood was still running when the last sign-in was answered. */
  during: boolean;
}

async function signInRound(t: TestContext, round: number): Promise<SignInRound> {
  const { server, dataDir } = await startServer(t);
  const api = server.urls['management API']!;
  const accounts = await newAccounts(dataDir, SIGN_INS + QUIET_SIGN_INS);
  const quiet: number[] = [];
  for (const [i, account] of accounts.splice(0, QUIET_SIGN_INS).entries()) {
    const answer = await signIn(t, api, `127.0.4.${round * QUIET_SIGN_INS + i + 1}`, account);
    assert.equal(answer.status, 200, answer.body);
    quiet.push(answer.ms);
  }
  const bound = Math.max(SIGN_IN_BOUND_MS, BUSY_FACTOR * Math.max(...quiet));
  const flood = startFlood(t, [api, 'flood-{n}@example.com', '128', String(FLOOD_MS), '64']);
  let floodOver = false;
  void flood.then(
    () => {
      floodOver = true;
    },
    () => {},
  );
  // Let the flood fill the hash queue, and its addresses ask a few times each: until then they
  // are as new as the honest clients, and share with them (on a machine at load 12 the flood
  // managed about one request per address and second).
  await sleep(3_000);
  const latencies: number[] = [];
  const statuses: number[] = [];
  let sheds = 0;
  for (const [i, account] of accounts.entries()) {
    const answer = await signIn(t, api, `127.0.${5 + round}.${i + 1}`, account);
    assert.ok(answer.status === 200 || answer.status === 503, `${answer.status}: ${answer.body}`);
    statuses.push(answer.status);
    sheds += answer.shed;
    if (answer.shed > 0) process.stdout.write(`# sign-in ${i + 1}: shed ${answer.shed} time(s) by the listener, ${answer.totalMs.toFixed(0)} ms in all\n`);
    if (answer.status !== 200) process.stdout.write(`# sign-in ${i + 1}: ${answer.status} ${answer.body}\n`);
    latencies.push(answer.ms);
    await sleep(200);
  }
  const during = !floodOver;
  const result = await flood;
  assert.equal(await server.stop(), 0);
  const inOrder = latencies.map((ms) => ms.toFixed(0)).join(', ');
  latencies.sort((a, b) => a - b);
  process.stdout.write(
    `# round ${round + 1}: ${SIGN_INS} fresh sign-ins during 128 concurrent wrong-key requests from 64 addresses: ` +
      `statuses ${JSON.stringify(statuses)}, ${inOrder} ms (load average ${loadavg()[0]!.toFixed(1)}; ${sheds} shed by the listener and sent again), p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, ` +
      `max ${latencies.at(-1)!.toFixed(0)} ms (bound ${bound.toFixed(0)} ms; without the flood ${quiet.map((ms) => ms.toFixed(0)).join(', ')} ms); ` +
      `the flood sent ${result.sent}, answered ${JSON.stringify(result.byStatus)}\n`,
  );
  return { latencies, statuses, flood: result, bound, during };
}

/** At least two full rounds of the 128 concurrent requests make a flood. */
const MIN_FLOOD = 256;

test('10 fresh sign-ins with correct keys are all admitted, 9 of 10 within 1 s, while 64 addresses flood wrong keys', { timeout: 120_000 }, async (t) => {
  let round = await signInRound(t, 0);
  const fair = (r: SignInRound) =>
    r.statuses.every((status) => status === 200) && percentile(r.latencies, 90) < r.bound && r.flood.sent >= MIN_FLOOD && r.during;
  if (!fair(round)) {
    process.stdout.write('# a sign-in was refused or slow, or the flood did not get going: measuring once more on a new server\n');
    round = await signInRound(t, 1);
  }
  assert.deepEqual(round.statuses, new Array<number>(SIGN_INS).fill(200), 'every fresh sign-in was admitted');
  assert.ok(
    percentile(round.latencies, 90) < round.bound,
    `9 of 10 sign-ins within ${round.bound.toFixed(0)} ms: ${round.latencies.map((ms) => ms.toFixed(0)).join(', ')} ms`,
  );
  assert.ok(round.latencies.at(-1)! < 10 * SIGN_IN_BOUND_MS, `slowest sign-in ${round.latencies.at(-1)!.toFixed(0)} ms`);
  assert.ok(round.flood.sent >= MIN_FLOOD, `a flood: ${round.flood.sent} wrong-key requests`);
  assert.ok(round.during, 'every sign-in was answered while the flood ran');
  assert.ok((round.flood.byStatus['403'] ?? 0) > 0, 'wrong keys were hashed (and refused)');
  // How many hashes run in 8 s depends on the machine (20 to 160 here): the flood kept the queue full.
  assert.ok((round.flood.byStatus['503'] ?? 0) > (round.flood.sent - (round.flood.byStatus.shed ?? 0)) / 2, 'most of the flood found the hash queue full');
  assert.equal(round.flood.byStatus.error, undefined);
});

test(
  'an S3 key id under a flood of bad signatures from 16 addresses: its presigned URL works from a new address, and the AWS SDK too',
  { timeout: 120_000 },
  async (t) => {
    const { server } = await startServer(t);
    const endpoint = server.urls['S3-compatible API']!;
    /** An SDK client bound to `address`, without retries (they would hide a refusal). */
    const clientAt = (address: string) => {
      const client = new S3Client({
        endpoint,
        region: 'auto',
        forcePathStyle: true,
        maxAttempts: 1,
        credentials: S3_KEY,
        requestHandler: { httpAgent: new HttpAgent({ localAddress: address }) },
      });
      t.after(() => client.destroy());
      return client;
    };
    const owner = clientAt('127.0.0.1');
    await owner.send(new CreateBucketCommand({ Bucket: 'shared' }));
    await owner.send(new PutObjectCommand({ Bucket: 'shared', Key: 'report.txt', Body: 'the report' }));
    const url = await getSignedUrl(owner, new GetObjectCommand({ Bucket: 'shared', Key: 'report.txt' }), { expiresIn: 600 });
    const forged = url.replace(/X-Amz-Signature=[0-9a-f]{64}/, `X-Amz-Signature=${'0'.repeat(64)}`);
    assert.notEqual(forged, url);

    const flood = startFlood(t, [forged, '-', '64', '4000', '16']);
    await sleep(1_500);
    // A request the listener shed (its event loop behind the flood: whoever asks) is sent again, as
    // a client retries a SlowDown; what is under test is that the key's refusals never reach it.
    const fetchFrom = async (address: string) => {
      const agent = new Agent({ localAddress: address });
      t.after(() => agent.close());
      for (let shed = 0; ; shed++) {
        const response = await fetch(url, { dispatcher: agent });
        const text = await response.text();
        if (response.status !== 503 || !S3_SHED.test(text) || shed === 20) return { status: response.status, text };
        await sleep(100);
      }
    };
    for (let i = 1; i <= 3; i++) assert.deepEqual(await fetchFrom(`127.0.7.${i}`), { status: 200, text: 'the report' }, `consumer ${i} from a new address`);
    const sdk = clientAt('127.0.7.10');
    const unlessShed = async <T>(send: () => Promise<T>): Promise<T> => {
      for (let shed = 0; ; shed++) {
        try {
          return await send();
        } catch (error) {
          if (shed === 20 || !(error instanceof Error) || error.name !== 'SlowDown' || !/overloaded/.test(error.message)) throw error;
          await sleep(100);
        }
      }
    };
    const got = await unlessShed(() => sdk.send(new GetObjectCommand({ Bucket: 'shared', Key: 'report.txt' })));
    assert.equal(await got.Body!.transformToString(), 'the report');
    await unlessShed(() => sdk.send(new PutObjectCommand({ Bucket: 'shared', Key: 'reply.txt', Body: 'thanks' })));
    const result = await flood;
    process.stdout.write(`# the bad-signature flood sent ${result.sent}, answered ${JSON.stringify(result.byStatus)}\n`);
    // 20 at once per address, then one every 3 s: a few more in the 4 s of the flood (fewer in all
    // when a busy machine slows the flood: at load 13 it sent 250 requests, 63 of them shed).
    const checked = result.byStatus['403'] ?? 0;
    assert.ok(checked > 10, `more bad signatures were checked than the old per-key-id limit let through: ${checked}`);
    assert.ok(checked <= 16 * 23, `no address had more than its 20 failures and a few since checked: ${checked}`);
    assert.ok(checked < 16 * 20 || (result.byStatus['429'] ?? 0) > 0, 'addresses past their limit were refused with SlowDown');
    assert.equal(result.byStatus['200'], undefined);
    assert.equal(await server.stop(), 0);
  },
);
