/**
 * The listeners' own refusals: docs/errors.md lists exactly LISTENER_ERRORS, and each surface's
 * refusal is read as that surface's error by its real client (AWS SDK, cloudflare SDK, viem, fetch).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { ListBucketsCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import Cloudflare from 'cloudflare';
import { BaseError, createPublicClient, http, LimitExceededRpcError } from 'viem';
import { LISTENER_ERRORS, listenerMessage, prepareRefusal, type Surface } from '../../src/cli/listener-errors.ts';
import { listen } from '../../src/cli/listener.ts';
import { openRaw } from '../helpers/raw-connections.ts';
import { onTestEnd } from '../helpers/cleanup.ts';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

test('docs/errors.md lists every listener error with its status and message, and nothing else', { timeout: 10_000 }, () => {
  const rows = new Map([...doc.matchAll(/^\| `(LISTENER_[A-Z_]+)` \| (\d{3}) \| (.+) \|$/gm)].map((m) => [m[1]!, { status: Number(m[2]), message: m[3]! }]));
  assert.deepEqual(
    Object.fromEntries(rows),
    Object.fromEntries(Object.entries(LISTENER_ERRORS).map(([code, entry]) => [code, { status: 503, message: entry.message }])),
  );
});

test('every prepared refusal is a whole HTTP response whose Content-Length is its body', { timeout: 10_000 }, () => {
  for (const surface of ['edge', 'api', 'gateway', 's3'] as Surface[]) {
    for (const code of Object.keys(LISTENER_ERRORS) as Array<keyof typeof LISTENER_ERRORS>) {
      const refusal = prepareRefusal(surface, code, 7);
      const raw = refusal.raw.toString();
      const split = raw.indexOf('\r\n\r\n');
      assert.match(raw, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
      assert.match(raw.slice(0, split), new RegExp(`\r\ncontent-length: ${refusal.body.length}\r\n`));
      assert.equal(raw.slice(split + 4), refusal.body.toString());
      assert.ok(refusal.body.toString().includes(listenerMessage(code, 7)), `${surface} ${code}`);
    }
  }
});

/** A listener for `surface` whose one connection slot is taken, so the next connection is refused. */
async function fullListener(t: TestContext, surface: Surface) {
  const listener = await listen(() => assert.fail('no request gets through'), '127.0.0.1', 0, `${surface} listener`, {
    surface,
    limits: { maxConnections: 1, maxConnectionsPerClient: 0 },
  });
  onTestEnd(t, () => listener.close());
  const held = await openRaw(listener.port, { localAddress: '127.0.0.2', send: 'GET / HTTP/1.1\r\n' });
  onTestEnd(t, () => held.socket.destroy());
  return listener;
}

const FULL = 'edgeport has too many open connections: at most 1 are allowed. Retry after the Retry-After delay.';

test('S3: the AWS SDK reads a refusal as SlowDown (503)', { timeout: 30_000 }, async (t) => {
  const listener = await fullListener(t, 's3');
  const s3 = new S3Client({
    endpoint: listener.url,
    region: 'auto',
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  });
  onTestEnd(t, () => s3.destroy());
  const error = await s3.send(new ListBucketsCommand({})).then(
    () => assert.fail('refused'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof S3ServiceException, String(error));
  assert.equal(error.name, 'SlowDown');
  assert.equal(error.message, FULL);
  assert.equal(error.$metadata.httpStatusCode, 503);
});

test('management API: the cloudflare SDK reads a refusal as a 503 envelope with code 10100', { timeout: 30_000 }, async (t) => {
  const listener = await fullListener(t, 'api');
  const cf = new Cloudflare({
    baseURL: `${listener.url}/client/v4`,
    apiEmail: 'a@example.test',
    apiKey: 'k',
    apiToken: null,
    userServiceKey: null,
    maxRetries: 0,
  });
  const error = await cf.zones.list().then(
    () => assert.fail('refused'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof Cloudflare.APIError, String(error));
  assert.equal(error.status, 503);
  assert.deepEqual(error.errors, [{ code: 10100, message: FULL }]);
});

test('gateway: viem reads a refusal as LimitExceededRpcError (-32005) from an HTTP 503', { timeout: 30_000 }, async (t) => {
  const listener = await fullListener(t, 'gateway');
  const client = createPublicClient({ transport: http(`${listener.url}/v1/sepolia`, { retryCount: 0 }) });
  const error = await client.getChainId().then(
    () => assert.fail('refused'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof BaseError, String(error));
  const limited = error.walk((e) => e instanceof LimitExceededRpcError);
  assert.ok(limited instanceof LimitExceededRpcError, String(error));
  assert.equal(limited.code, -32005);
  assert.equal(limited.details, FULL);
  assert.match(error.message, /Status: 503/);
});

test('edge: a plain-text 503 with Retry-After', { timeout: 30_000 }, async (t) => {
  const listener = await fullListener(t, 'edge');
  const response = await fetch(`${listener.url}/`);
  assert.equal(response.status, 503);
  assert.equal(response.headers.get('retry-after'), '1');
  assert.equal(await response.text(), `error 503: ${FULL}\n`);
});
