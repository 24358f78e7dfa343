/**
 * GraphQL alias fan-out, run as its own process (so its work does not slow the measuring test's
 * own requests): `node --import tsx graphql-fanout-flood.ts <graphql url> <email> <key> <account
 * id> <aliases> <concurrency> <duration ms>`. Sends `concurrency` copies at once of one query of
 * `aliases` aliases of `r2StorageAdaptiveGroups(limit: 10000)` over the account (about 130
 * characters each: 493 make 64 KiB), round after round until the duration is over (Retry-After
 * ignored, as an attacker would); then prints one JSON line: the query's length, the rounds, the
 * first round's answers, and every answer by outcome (status and GraphQL's extensions.code, or the
 * envelope's code: 10100 for the listener's load shedding) with the slowest of each.
 */
const [url, email, key, account, aliasesArg, concurrencyArg, durationArg] = process.argv.slice(2);

interface Sent {
  status: number;
  code: string | undefined;
  ms: number;
}

function fanOutQuery(accountId: string, count: number): string {
  const aliases = Array.from(
    { length: count },
    (_, i) => `a${i}: r2StorageAdaptiveGroups(limit: 10000, filter: {storageClass: "Standard"}) { max { objectCount } dimensions { bucketName } }`,
  );
  return `{ viewer { accounts(filter: {accountTag: "${accountId}"}) {\n${aliases.join('\n')}\n} } }`;
}

async function send(body: string): Promise<Sent> {
  const started = performance.now();
  const response = await fetch(url!, { method: 'POST', headers: { 'x-auth-email': email!, 'x-auth-key': key! }, body });
  const answer = (await response.json()) as { errors?: Array<{ code?: number; extensions?: { code?: string } }> | null };
  const first = answer.errors?.[0];
  return {
    status: response.status,
    code: first?.extensions?.code ?? (first?.code === undefined ? undefined : String(first.code)),
    ms: performance.now() - started,
  };
}

{
  const query = fanOutQuery(account!, Number(aliasesArg));
  const body = JSON.stringify({ query });
  const until = performance.now() + Number(durationArg);
  const rounds: Sent[][] = [];
  while (performance.now() < until) rounds.push(await Promise.all(Array.from({ length: Number(concurrencyArg) }, () => send(body))));
  const outcomes: Record<string, { count: number; slowestMs: number }> = {};
  for (const sent of rounds.flat()) {
    const outcome = `${sent.status} ${sent.code ?? 'data'}`;
    const entry = (outcomes[outcome] ??= { count: 0, slowestMs: 0 });
    entry.count++;
    entry.slowestMs = Math.max(entry.slowestMs, Math.round(sent.ms));
  }
  process.stdout.write(`${JSON.stringify({ length: query.length, rounds: rounds.length, first: rounds[0] ?? [], outcomes })}\n`);
}
