/**
 * A flood of wrong credentials, run as its own process (so its work does not slow the measuring
 * test's own requests): `node --import tsx wrong-key-flood.ts <api base> <email> <concurrency>
 * <duration ms> [addresses]`. Each of `concurrency` loops sends GET /zones with a wrong
 * X-Auth-Key, as fast as answers come (Retry-After ignored, as an attacker would), until the
 * duration is over; then prints one JSON line: requests sent and answers by status, where `shed`
 * counts the listener's 503s for an event loop running behind (LISTENER_OVERLOADED: API code 10100,
 * S3 `SlowDown`), which answer everyone alike and say nothing of the credential checks.
 *
 * `{n}` in the e-mail becomes the loop's number and request's (a new e-mail each time: no
 * per-e-mail limit slows the flood). With `email` `-`, the base is a whole URL fetched as it is
 * (a presigned S3 URL with a wrong signature). With `addresses` (default: one, unbound), the loops
 * are spread over that many local addresses, 127.0.2.1 and up, each a client of its own to the
 * server's per-address limits.
 */
import { Agent, fetch } from 'undici';

const [base, email, concurrencyArg, durationArg, addressesArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const addresses = Number(addressesArg ?? 1);
const until = performance.now() + Number(durationArg);
const perAddress = Math.ceil(concurrency / addresses);
const agents = Array.from(
  { length: addresses },
  (_, i) =>
    new Agent({
      connections: perAddress,
      pipelining: 0,
      ...(addressesArg === undefined ? {} : { localAddress: `127.0.2.${i + 1}` }),
    }),
);
const byStatus: Record<string, number> = {};
let sent = 0;

async function loop(n: number): Promise<void> {
  const dispatcher = agents[n % addresses]!;
  for (let i = 0; performance.now() < until; i++) {
    sent++;
    try {
      const response =
        email === '-'
          ? await fetch(base!, { dispatcher })
          : await fetch(`${base}/zones`, { headers: { 'x-auth-email': email!.replace('{n}', `${n}-${i}`), 'x-auth-key': `wrong-key-${n}-${i}` }, dispatcher });
      const body = await response.text();
      const status = response.status === 503 && /"code":10100|<Code>SlowDown<\/Code>/.test(body) ? 'shed' : response.status;
      byStatus[status] = (byStatus[status] ?? 0) + 1;
    } catch {
      byStatus.error = (byStatus.error ?? 0) + 1;
    }
  }
}

await Promise.all(Array.from({ length: concurrency }, (_, n) => loop(n)));
await Promise.all(agents.map((agent) => agent.close()));
process.stdout.write(`${JSON.stringify({ sent, byStatus })}\n`);
