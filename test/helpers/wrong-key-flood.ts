/**
 * A flood of wrong-key management API requests, run as its own process (so its work does not slow
 * the measuring test's own requests): `node --import tsx wrong-key-flood.ts <api base> <email>
 * <concurrency> <duration ms>`. Each of `concurrency` loops sends GET /zones with a wrong
 * X-Auth-Key, as fast as answers come (Retry-After ignored, as an attacker would), until the
 * duration is over; then prints one JSON line: requests sent and answers by status.
 */
import { Agent, fetch } from 'undici';

const [base, email, concurrencyArg, durationArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const until = performance.now() + Number(durationArg);
const agent = new Agent({ connections: concurrency, pipelining: 0 });
const byStatus: Record<string, number> = {};
let sent = 0;

async function loop(n: number): Promise<void> {
  for (let i = 0; performance.now() < until; i++) {
    sent++;
    try {
      const response = await fetch(`${base}/zones`, { headers: { 'x-auth-email': email!, 'x-auth-key': `wrong-key-${n}-${i}` }, dispatcher: agent });
      await response.arrayBuffer();
      byStatus[response.status] = (byStatus[response.status] ?? 0) + 1;
    } catch {
      byStatus.error = (byStatus.error ?? 0) + 1;
    }
  }
}

await Promise.all(Array.from({ length: concurrency }, (_, n) => loop(n)));
await agent.close();
process.stdout.write(`${JSON.stringify({ sent, byStatus })}\n`);
