/** A real S3 listener on 127.0.0.1 (port 0) over a real engine, and an AWS SDK client for it. */
import { createServer, type Server } from 'node:http';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { silentLogger, type Logger } from '../../../src/core/log.ts';
import { adminKey } from '../../../src/store/s3/key-grant.ts';
import { createS3Handler } from '../../../src/store/s3/s3-handler.ts';
import { openTestEngine } from '../../helpers/engine.ts';
import { listen } from '../../helpers/listen.ts';

export const ACCESS_KEY_ID = 'EDGEPORTTESTKEY00001';
export const SECRET = 'edgeport-test-secret-key-0123456789abcdef';

export async function startS3(t: TestContext, options: { logger?: Logger } = {}) {
  const fixture = await openTestEngine(t);
  fixture.clock.set(Date.now());
  const handler = createS3Handler({
    engine: fixture.engine,
    clock: { now: () => Date.now() },
    logger: options.logger ?? silentLogger,
    keys: (id) => (id === ACCESS_KEY_ID ? adminKey(SECRET) : undefined),
  });
  const server: Server = createServer((req, res) => {
    void handler(req, res);
  });
  // As `edgeport start` listens: the handler answers Expect: 100-continue once it accepts the request.
  server.on('checkContinue', (req, res) => {
    void handler(req, res);
  });
  // And serves a request with any other expectation as without it (src/cli/listener.ts).
  server.on('checkExpectation', (req, res) => {
    void handler(req, res);
  });
  const port = await listen(server, t);
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET },
  });
  t.after(() => client.destroy());
  return { ...fixture, endpoint, client };
}

/** An assert.rejects check: the SDK error has this S3 code and HTTP status. */
export const s3ErrorCode = (name: string, status: number) => (error: unknown) => {
  assert.ok(error instanceof S3ServiceException, String(error));
  assert.equal(error.name, name);
  assert.equal(error.$metadata.httpStatusCode, status);
  return true;
};

/**
 * Every entry of a paged listing, in order: `page` gets the markers the previous page named
 * (undefined for the first) and returns its entries and, when truncated, the next markers.
 */
export async function allPages<Markers>(page: (markers: Markers | undefined) => Promise<{ entries: string[]; next?: Markers }>): Promise<string[]> {
  const seen: string[] = [];
  let markers: Markers | undefined;
  for (let n = 0; n < 100; n++) {
    const result = await page(markers);
    seen.push(...result.entries);
    if (!result.next) return seen;
    markers = result.next;
  }
  throw new Error('the listing did not end within 100 pages');
}

/**
 * Lets a test send a request document of its own through the SDK: while `set` was given a string,
 * that string replaces the serialized body before checksums and the signature are computed over
 * it (so the server sees a correctly signed request carrying it); `set(undefined)` stops.
 */
export function replaceDocuments(client: S3Client): (document: string | undefined) => void {
  let replacement: string | undefined;
  client.middlewareStack.add(
    (next) => async (args) => {
      if (replacement !== undefined) (args.request as { body: unknown }).body = replacement;
      return next(args);
    },
    { step: 'build', priority: 'high', name: 'replaceDocument' },
  );
  return (document) => {
    replacement = document;
  };
}
