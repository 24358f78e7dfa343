/**
 * Opens a real store engine on a temporary directory for a test, with a fake clock. Under
 * EDGEPORT_TEST_DB=postgres its metadata lives in a PostgreSQL schema of the test's own
 * (helpers/postgres.ts), one per data dir, instead of SQLite in the directory.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { PgDatabase } from '../../src/db/postgres/pg-database.ts';
import { openBlobStore, parseBlobsUrl } from '../../src/store/blobs/open-blob-store.ts';
import { openStoreEngine, type OpenStoreEngineOptions } from '../../src/store/engine/open-store-engine.ts';
import type { ObjectEngine } from '../../src/store/engine/object-engine.ts';
import type { ObjectMeta } from '../../src/store/engine/types.ts';
import { pgTestUrl, TEST_DB } from './postgres.ts';
import { TEST_SECRETS } from './secrets.ts';
import { startS3Endpoint, TEST_BLOBS, type S3Endpoint } from './s3-endpoint.ts';
import { tempDir } from './temp-dir.ts';

export interface EngineFixture {
  engine: ObjectEngine;
  clock: FakeClock;
  dataDir: string;
  bucket: string;
  /** The PostgreSQL database holding the metadata, when there is one (EDGEPORT_TEST_DB=postgres or given). */
  database: PgDatabase | undefined;
  /** Ids of the published blobs, wherever they live (the data dir, `blobsUrl`, or the S3 endpoint). */
  blobIds(): Promise<string[]>;
  /** Writes in progress or left over: temporary files, or multipart uploads on the S3 endpoint. */
  temporaryCount(): Promise<number>;
}

export async function openTestEngine(t: TestContext, options: Partial<OpenStoreEngineOptions> = {}): Promise<EngineFixture> {
  const dataDir = options.dataDir ?? tempDir(t);
  const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const ownDatabase =
    options.database === undefined && TEST_DB === 'postgres' ? await PgDatabase.open({ url: await schemaOf(t, dataDir), now: clock.now() }) : undefined;
  const database = options.database ?? ownDatabase;
  // A test that names its blob store (even `blobsUrl: undefined`, the data dir) gets that one.
  const blobsUrl = 'blobsUrl' in options ? options.blobsUrl : TEST_BLOBS === 's3' ? await testBlobsUrl(t, dataDir) : undefined;
  const engine = await openStoreEngine({
    dataDir,
    clock,
    recover: true,
    secrets: TEST_SECRETS,
    ...options,
    ...(database ? { database } : {}),
    ...(blobsUrl ? { blobsUrl } : {}),
  }).catch(async (error: unknown) => {
    await ownDatabase?.close();
    throw error;
  });
  t.after(async () => {
    await engine.close();
    await ownDatabase?.close();
  });
  await engine.ensureBucket('test-bucket');
  return {
    engine,
    clock,
    dataDir,
    bucket: 'test-bucket',
    database,
    blobIds: async () => {
      const { store } = await openBlobStore({ url: blobsUrl, dataDir });
      return store.list().finally(() => store.close());
    },
    temporaryCount: () => temporaryCount(t, dataDir, blobsUrl),
  };
}

/**
 * EDGEPORT_TEST_BLOBS=s3: blobs on edgeport's own S3 API (helpers/s3-endpoint.ts), one endpoint
 * per test and one prefix per data dir, so an engine reopened on its data dir finds its blobs.
 */
const testEndpoints = new WeakMap<TestContext, { endpoint: Promise<S3Endpoint>; prefixes: Map<string, string> }>();

async function testBlobsUrl(t: TestContext, dataDir: string): Promise<string> {
  let entry = testEndpoints.get(t);
  if (!entry) {
    entry = { endpoint: startS3Endpoint(t), prefixes: new Map() };
    testEndpoints.set(t, entry);
  }
  const prefix = entry.prefixes.get(dataDir) ?? `engine-${entry.prefixes.size + 1}`;
  entry.prefixes.set(dataDir, prefix);
  return (await entry.endpoint).blobsUrl(prefix);
}

async function temporaryCount(t: TestContext, dataDir: string, blobsUrl: string | undefined): Promise<number> {
  const location = blobsUrl === undefined ? { kind: 'fs' as const, root: dataDir } : parseBlobsUrl(blobsUrl);
  // tmp/<process>/<id> (and tmp/<id> as older versions wrote them).
  if (location.kind === 'fs') return readdirSync(join(location.root, 'tmp'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length;
  const endpoint = await testEndpoints.get(t)?.endpoint;
  if (!endpoint) throw new Error('temporaryCount() knows only the test S3 endpoint');
  return (await endpoint.engine.listUploads(endpoint.bucket, { prefix: `${location.prefix}/` })).length;
}

/** Schemas by data dir, per test: reopening a data dir reopens its metadata, as with SQLite in the dir. */
const SCHEMAS = new WeakMap<TestContext, Map<string, Promise<string>>>();

function schemaOf(t: TestContext, dataDir: string): Promise<string> {
  let byDir = SCHEMAS.get(t);
  if (!byDir) SCHEMAS.set(t, (byDir = new Map()));
  let url = byDir.get(dataDir);
  if (!url) byDir.set(dataDir, (url = pgTestUrl(t)));
  return url;
}

export async function readAll(body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  if (body) for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

export function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** An object's metadata row as a metadata store takes it, for tests that write rows directly. */
export function objectMeta(key: string, version: string, size: number): ObjectMeta {
  return { key, version, size, etag: 'e', uploaded: 0, httpMetadata: {}, customMetadata: {}, checksums: {}, storageClass: 'Standard' };
}
