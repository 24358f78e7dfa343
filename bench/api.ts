/**
 * Management API over a real listener (32 connections, wrk or autocannon): GET of the custom-fields
 * ruleset, and PUT of its rules (each PUT is a durable write: group commit + WAL fsync on SQLite, a
 * transaction on PostgreSQL). Beside them, the edge's per-request lookups through the ControlStore
 * in process (custom-fields rule and enabled jobs of a zone).
 *
 * The control store is SQLite in a temporary data dir, or with EDGEPORT_BENCH_DB_URL=postgres://...
 * PostgreSQL, in a schema of its own (`bench_api_<random>`, dropped afterwards).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount, createApiService } from '../src/api/index.ts';
import { systemClock } from '../src/core/clock.ts';
import { ScryptThread } from '../src/core/crypto/scrypt-thread.ts';
import { silentLogger } from '../src/core/log.ts';
import { openControlStore } from '../src/db/open-control-store.ts';
import { PgDatabase } from '../src/db/postgres/pg-database.ts';
import { openStoreEngine } from '../src/store/engine/open-store-engine.ts';
import { AccessKeys } from '../src/store/s3/access-keys.ts';
import { runLoad } from './load.ts';
import { formatResult, runClosedLoop } from './stats.ts';

const RULES = {
  rules: [
    {
      action: 'log_custom_field',
      expression: 'true',
      description: 'bench',
      action_parameters: {
        request_fields: [{ name: 'content-type' }, { name: 'x-forwarded-for' }, { name: 'host' }],
        response_fields: [{ name: 'server' }, { name: 'content-type' }],
        cookie_fields: [{ name: '__ga' }, { name: 'session' }],
      },
    },
  ],
};

export async function benchApi(seconds: number): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeport-bench-api-'));
  const engine = await openStoreEngine({ dataDir, recover: true, maintenance: true, backgroundCheckpoints: true });
  const database = await openBenchDatabase();
  const db = database ? 'postgres' : 'sqlite';
  const control = await openControlStore({ dataDir, clock: systemClock, autoCheckpoint: false, ...(database ? { database } : {}) });
  const scrypt = new ScryptThread();
  const service = await createApiService({
    control,
    accessKeys: new AccessKeys(engine.metadata, systemClock),
    clock: systemClock,
    logger: silentLogger,
    store: engine,
    scrypt,
  });
  const server = createServer(service.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/client/v4`;
  const { account, key } = await createAccount(control, 'bench@example.com', { scrypt });
  const headers = { 'x-auth-email': account.email, 'x-auth-key': key, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(base + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return ((await response.json()) as { result: { id: string } }).result;
  };
  const zone = await call('POST', '/zones', { name: 'bench.example.com' });
  const ruleset = await call('PUT', `/zones/${zone.id}/rulesets/phases/http_log_custom_fields/entrypoint`, RULES);
  await call('POST', `/zones/${zone.id}/logshipping/jobs`, { destination_conf: 's3://logs/x?region=auto&access-key-id=a&secret-access-key=b', enabled: true });
  const url = `${base}/zones/${zone.id}/rulesets/${ruleset.id}`;
  const lua = (method: string, body?: string) => {
    const file = join(dataDir, `${method}.lua`);
    writeFileSync(
      file,
      [
        `wrk.method = "${method}"`,
        ...Object.entries(headers).map(([name, value]) => `wrk.headers["${name}"] = "${value}"`),
        ...(body === undefined ? [] : [`wrk.body = [[${body}]]`]),
      ].join('\n'),
    );
    return file;
  };
  const lines: string[] = [];
  const report = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  try {
    const get = await runLoad({ url, connections: 32, seconds, lua: lua('GET'), env: {}, autocannonRequest: () => ({ method: 'GET', headers }) });
    report(
      formatResult({ name: `api GET ruleset (${db}, ${get.tool})`, ops: get.requestsPerSec * seconds, seconds, p50: get.p50, p99: get.p99 }) +
        (get.errors ? `  errors ${get.errors}` : ''),
    );
    const body = JSON.stringify(RULES);
    const put = await runLoad({ url, connections: 32, seconds, lua: lua('PUT', body), env: {}, autocannonRequest: () => ({ method: 'PUT', headers, body }) });
    report(
      formatResult({ name: `api PUT rules (${db}, ${put.tool})`, ops: put.requestsPerSec * seconds, seconds, p50: put.p50, p99: put.p99 }) +
        (put.errors ? `  errors ${put.errors}` : ''),
    );
    report(
      formatResult(
        await runClosedLoop(`edge lookups (${db})`, { concurrency: 32, durationMs: seconds * 1000 }, async () => {
          await Promise.all([control.getCustomFieldsRule(zone.id), control.listEnabledJobs(zone.id)]);
        }),
      ),
    );
  } finally {
    server.closeAllConnections();
    server.close();
    await service.close();
    await scrypt.close();
    await control.close();
    if (database) {
      await database.query(`DROP SCHEMA ${database.schema} CASCADE`);
      await database.close();
    }
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return lines;
}

/** EDGEPORT_BENCH_DB_URL's database, in a fresh schema; null without it (SQLite). */
async function openBenchDatabase(): Promise<PgDatabase | null> {
  const given = process.env.EDGEPORT_BENCH_DB_URL;
  if (!given) return null;
  const url = new URL(given);
  url.searchParams.set('schema', `bench_api_${randomBytes(4).toString('hex')}`);
  if (!url.searchParams.has('pool')) url.searchParams.set('pool', '16');
  return PgDatabase.open({ url: url.toString(), now: Date.now() });
}
