/**
 * An S3-compatible endpoint for blob-store tests: edgeport's own S3 API on a real 127.0.0.1
 * listener (port 0), over an engine with local-disk blobs in a temporary directory, with one
 * bucket and an access key. It records every request, so tests can see what a client sent.
 *
 * EDGEPORT_TEST_BLOBS=s3 makes the store suites keep their blobs here (helpers/engine.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { systemClock, type Clock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { ObjectEngine } from '../../src/store/engine/object-engine.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { adminKey } from '../../src/store/s3/key-grant.ts';
import { createS3Handler } from '../../src/store/s3/s3-handler.ts';
import { tempDir } from './temp-dir.ts';

/** Which blob store the parametrized store suites run on. */
export const TEST_BLOBS: 'fs' | 's3' = process.env.EDGEPORT_TEST_BLOBS === 's3' ? 's3' : 'fs';

export const ENDPOINT_KEY_ID = 'EDGEPORTBLOBKEY00001';
export const ENDPOINT_SECRET = 'edgeport-blob-secret+with/odd=chars';

export interface S3Endpoint {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  bucket: string;
  /** The engine behind the endpoint (its buckets are the S3 buckets). */
  engine: ObjectEngine;
  /** `<METHOD> <path?query>` of every request so far. */
  requests: string[];
  /** An `s3://` blobs URL for this endpoint with its key, under `prefix`. */
  blobsUrl(prefix: string): string;
}

export async function startS3Endpoint(t: TestContext, options: { clock?: Clock } = {}): Promise<S3Endpoint> {
  const clock = options.clock ?? systemClock;
  const engine = await openStoreEngine({ dataDir: tempDir(t, 'edgeport-s3-endpoint-'), clock });
  const bucket = 'blobs';
  await engine.createBucket(bucket);
  // Signatures are checked against real time; `clock` only stamps what the engine stores.
  const handler = createS3Handler({
    engine,
    clock: systemClock,
    logger: silentLogger,
    keys: (id) => (id === ENDPOINT_KEY_ID ? adminKey(ENDPOINT_SECRET) : undefined),
  });
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method ?? ''} ${req.url ?? ''}`);
    void handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.after(async () => {
    await new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
    await engine.close();
  });
  return {
    endpoint,
    bucket,
    engine,
    requests,
    blobsUrl: (prefix) =>
      `s3://${bucket}/${prefix}?endpoint=${endpoint}&region=auto` +
      `&access-key-id=${ENDPOINT_KEY_ID}&secret-access-key=${encodeURIComponent(ENDPOINT_SECRET)}`,
  };
}
