/**
 * A real management API server for a test: a temporary data dir with the object store, the control
 * store (in the same `metadata.sqlite`, or on PostgreSQL under EDGEPORT_TEST_DB=postgres), a
 * FakeClock, the service behind a node:http listener on 127.0.0.1:0, and clients (the official
 * `cloudflare` SDK, plain fetch). Stopped when the test ends.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import Cloudflare, { APIError } from 'cloudflare';
import { createAccount, createApiService, type ApiService } from '../../src/api/index.ts';
import type { Clock, FakeClock } from '../../src/core/clock.ts';
import { AUTH_DEFAULTS } from '../../src/config/defaults.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { ControlStore } from '../../src/db/control-store.ts';
import type { PgDatabase } from '../../src/db/postgres/pg-database.ts';
import { accountStore } from '../../src/store/engine/account-store.ts';
import { BucketDomains } from '../../src/db/public-buckets/bucket-domains.ts';
import { openRegistryDriver } from '../../src/db/scripts/script-registry-drivers.ts';
import { adoptUnowned } from '../../src/store/engine/adopt-unowned.ts';
import { FileRoots } from '../../src/logs/index.ts';
import type { ObjectEngine } from '../../src/store/engine/object-engine.ts';
import type { StoreEngine } from '../../src/store/engine/store-engine.ts';
import type { ScryptThread } from '../../src/core/crypto/scrypt-thread.ts';
import { AccessKeys } from '../../src/store/s3/access-keys.ts';
import { openTestControlStore } from '../helpers/control-store.ts';
import { openTestEngine } from '../helpers/engine.ts';
import { testScryptThread } from '../helpers/scrypt-thread.ts';

export interface Credentials {
  email: string;
  key: string;
  accountId: string;
}

export interface ApiFixture {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** `<origin>/client/v4` */
  base: string;
  service: ApiService;
  control: ControlStore;
  engine: ObjectEngine;
  /** The admin account's view of the store (its buckets; `test-bucket` is one). */
  store: StoreEngine;
  accessKeys: AccessKeys;
  clock: FakeClock;
  /** The PostgreSQL database holding the metadata (EDGEPORT_TEST_DB=postgres), else undefined (SQLite in dataDir). */
  database: PgDatabase | undefined;
  /** Where the service's (and newAccount's) key hashes run. */
  scrypt: ScryptThread;
  dataDir: string;
  admin: Credentials;
  /** Another account (younger than the admin, the operator). */
  newAccount(email: string): Promise<Credentials>;
  /** fetch below `/client/v4` with the given (default: admin) credentials. */
  call(path: string, init?: RequestInit & { as?: Credentials | null; json?: unknown }): Promise<{ status: number; headers: Headers; body: Json }>;
  /** The official SDK pointed at this server, as it comes (its `/logpush/` paths included). */
  sdk(as?: Credentials): Cloudflare;
}

export const MAX_BODY_BYTES = 64 * 1024;

/** A parsed JSON answer: tests read many shapes and check them with assertions. */
export type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary envelope shapes

/** One entry of an envelope's `errors`. */
export interface ErrorEntry {
  code: number;
  message: string;
  source?: { pointer: string };
  error_chain?: Array<{ code: number; message: string }>;
}

export interface ApiOptions {
  /** `[logs] file_roots` (default: the system's temporary directory, which holds every test's directories and the data dir). */
  fileRoots?: string[];
  /** `[auth] max_tokens_per_account` (default DEFAULTS.auth's). */
  maxTokensPerAccount?: number;
}

export async function startApi(t: TestContext, options: ApiOptions = {}): Promise<ApiFixture> {
  const { engine, clock, dataDir, database } = await openTestEngine(t);
  // One database for the object store and the control plane, as in one edgeport instance.
  const control = await openTestControlStore(t, { dataDir, clock, database });
  const accessKeys = new AccessKeys(engine.metadata, clock);
  const fileRoots = new FileRoots({ roots: options.fileRoots ?? [tmpdir()], dataDir });
  const scrypt = testScryptThread(t);
  // Public buckets' settings, on the same database (as `edgeport start` keeps them).
  const bucketDomains = new BucketDomains(openRegistryDriver({ dataDir, clock, ...(database ? { database } : {}) }), clock);
  t.after(() => bucketDomains.close());
  const service = await createApiService({
    control,
    accessKeys,
    clock,
    logger: silentLogger,
    store: engine,
    fileRoots,
    maxBodyBytes: MAX_BODY_BYTES,
    probeTimeoutMs: 2000,
    scrypt,
    publicBuckets: { domains: bucketDomains, publicDomain: 'r2.localhost' },
    ...(options.maxTokensPerAccount === undefined ? {} : { auth: { ...AUTH_DEFAULTS, maxTokensPerAccount: options.maxTokensPerAccount } }),
  });
  const server = createServer(service.handler);
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await service.close();
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const base = `${origin}/client/v4`;
  const newAccount = async (email: string, accountClock: Clock = clock): Promise<Credentials> => {
    const { account, key } = await createAccount(control, email, { clock: accountClock, scrypt });
    return { email, key, accountId: account.id };
  };
  // The admin is the operator, the oldest account: made a moment before the fake time at which the
  // test makes its other accounts (a tie would leave the operator to the order of random ids).
  const admin = await newAccount('admin@example.com', { now: () => clock.now() - 1 });
  // As `edgeport start` does: the first account adopts the buckets made before it (the fixture's test-bucket).
  await adoptUnowned(engine.metadata, admin.accountId);
  return {
    origin,
    base,
    service,
    control,
    engine,
    store: accountStore(engine, admin.accountId),
    accessKeys,
    clock,
    database,
    scrypt,
    dataDir,
    admin,
    newAccount,
    async call(path, init = {}) {
      const { as = admin, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (as) {
        headers.set('x-auth-email', as.email);
        headers.set('x-auth-key', as.key);
      }
      if (json !== undefined) headers.set('content-type', 'application/json');
      const response = await fetch(base + path, { ...rest, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text === '' ? null : JSON.parse(text) };
    },
    sdk(as = admin) {
      return new Cloudflare({
        baseURL: base,
        apiEmail: as.email,
        apiKey: as.key,
        apiToken: null,
        userServiceKey: null,
        maxRetries: 0,
      });
    },
  };
}

/** The SDK's APIError that `promise` rejects with (anything else is rethrown; a success fails the test). */
export async function sdkError(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  assert.fail('the SDK call succeeded');
}
