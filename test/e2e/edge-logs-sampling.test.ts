/**
 * Log sampling end to end through `edgeport start`: a file:// job with sample_rate 0.1 over
 * 20,000 requests from autocannon delivers 10% of them, within 1.5 points.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import autocannon from 'autocannon';
import { until } from '../helpers/delivered-logs.ts';
import { apiOf, createFileJob, createZone, fileLines, startOrigin, startServer } from '../helpers/edge-logs-setup.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('sample_rate 0.1 over 20,000 requests delivers 10% within 1.5 points', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  const origin = await startOrigin(t);
  const server = await startServer(t, join(dir, 'data'));
  const api = apiOf(server);
  const zoneId = await createZone(api, origin.url);
  await createFileJob(api, zoneId, join(dir, 'sampled'), { output_options: { field_names: ['RayID'], sample_rate: 0.1 } });
  const result = await autocannon({ url: server.urls.edge!, connections: 16, amount: 20_000, headers: { host: 'example.test' } });
  assert.equal(result.errors, 0);
  await sleep(600);
  const lines = await until(() => fileLines(join(dir, 'sampled')), (l) => l.length > 0, 'sampled lines');
  await sleep(500);
  const kept = fileLines(join(dir, 'sampled')).length / 20_000;
  assert.ok(Math.abs(kept - 0.1) <= 0.015, `kept ${(kept * 100).toFixed(2)}%`);
  assert.ok(lines.every((l) => Object.keys(l).join() === 'RayID'));
});
