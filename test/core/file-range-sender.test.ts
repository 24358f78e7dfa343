/**
 * sendFileRange over a real listener: any range of a file arrives byte for byte while responses run
 * at once (their pooled buffers never mix), a client that leaves mid-body fails the send without
 * spoiling the pool, and a file shorter than the range is an error, not a short body.
 */
import assert from 'node:assert/strict';
import { symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { FILE_CHUNK_BYTES, sendFileRange } from '../../src/core/http/file-range-sender.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const FILE_BYTES = 3 * FILE_CHUNK_BYTES + 12_345;

function pattern(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) out[i] = (i * seed + (i >>> 11)) & 0xff;
  return out;
}

/** A server answering `GET /<file>?offset&length` with that range; `sent` gets each send's outcome. */
async function rangeServer(t: TestContext, dir: string, sent: (outcome: Error | undefined) => void): Promise<string> {
  const server = createServer((req, res: ServerResponse) => {
    const url = new URL(req.url!, 'http://x');
    const offset = Number(url.searchParams.get('offset'));
    const length = Number(url.searchParams.get('length'));
    res.writeHead(200, { 'content-length': length });
    sendFileRange(res, join(dir, url.pathname.slice(1)), offset, length).then(
      () => {
        res.end();
        sent(undefined);
      },
      (error: Error) => {
        res.destroy();
        sent(error);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('property: concurrent ranges of two files arrive exactly', { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  const files = { a: pattern(FILE_BYTES, 3), b: pattern(FILE_BYTES, 7) };
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
  const base = await rangeServer(t, dir, () => undefined);
  const range = fc
    .tuple(fc.constantFrom('a', 'b') as fc.Arbitrary<'a' | 'b'>, fc.nat({ max: FILE_BYTES }), fc.nat({ max: FILE_BYTES }))
    .map(([name, x, y]) => ({ name, offset: Math.min(x, y), length: Math.abs(x - y) }));
  await fc.assert(
    fc.asyncProperty(fc.array(range, { minLength: 1, maxLength: 6 }), async (ranges) => {
      const bodies = await Promise.all(
        ranges.map(async ({ name, offset, length }) => {
          const response = await fetch(`${base}/${name}?offset=${offset}&length=${length}`);
          return Buffer.from(await response.arrayBuffer());
        }),
      );
      ranges.forEach(({ name, offset, length }, i) => {
        assert.ok(bodies[i]!.equals(files[name].subarray(offset, offset + length)), `${name} ${offset}+${length}`);
      });
    }),
    { numRuns: 25 },
  );
});

test('a client that leaves mid-body fails the send; later sends are intact', { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  const bytes = pattern(FILE_BYTES, 5);
  writeFileSync(join(dir, 'f'), bytes);
  const outcomes: Array<Error | undefined> = [];
  let settled = (): void => undefined;
  const base = await rangeServer(t, dir, (outcome) => {
    outcomes.push(outcome);
    settled();
  });
  // Kept far bigger than the socket buffers take, so the server is still sending when the client goes.
  const big = FILE_BYTES;
  await new Promise<void>((resolve, reject) => {
    const req = request(`${base}/f?offset=0&length=${big}`, (res) => {
      res.once('data', () => {
        settled = resolve;
        res.destroy();
      });
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(outcomes.length, 1);
  assert.ok(outcomes[0] instanceof Error, 'the send reports the client gone');
  const again = await fetch(`${base}/f?offset=1&length=${big - 1}`);
  assert.ok(Buffer.from(await again.arrayBuffer()).equals(bytes.subarray(1)));
});

test('a file shorter than the range fails the send', { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'short'), pattern(1000, 9));
  const outcomes: Array<Error | undefined> = [];
  const base = await rangeServer(t, dir, (outcome) => outcomes.push(outcome));
  await assert.rejects(fetch(`${base}/short?offset=500&length=600`).then((response) => response.arrayBuffer()));
  assert.match(String(outcomes[0]?.message), /ended 100 bytes before the range/);
});

test("a link at a file's name is not followed: the send fails, nothing of its target is sent", { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  const outside = join(tempDir(t), 'outside');
  writeFileSync(outside, 'OUTSIDE-MARKER');
  symlinkSync(outside, join(dir, 'planted'));
  const outcomes: Array<Error | undefined> = [];
  const base = await rangeServer(t, dir, (outcome) => outcomes.push(outcome));
  const answer = await fetch(`${base}/planted?offset=0&length=14`)
    .then((response) => response.text())
    .catch(() => '');
  assert.doesNotMatch(answer, /OUTSIDE-MARKER/);
  assert.match(String((outcomes[0] as NodeJS.ErrnoException | undefined)?.code), /ELOOP/);
});
