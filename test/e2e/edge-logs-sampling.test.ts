/**
 * Log sampling end to end through `edgeport start`: a file:// job with sample_rate 0.1 over
 * 20,000 requests from autocannon delivers 10% of them, within 1.5 points. The lines are counted
 * once the job has delivered every line it took (as many shipped as spooled, as /metrics says,
 * and the files holding as many lines as it shipped), not after a fixed wait.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import autocannon from 'autocannon';
import { until } from '../helpers/delivered-logs.ts';
import { apiOf, createFileJob, createZone, fileLines, jobDelivery, startOrigin, startServer } from '../helpers/edge-logs-setup.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('sample_rate 0.1 over 20,000 requests delivers 10% within 1.5 points', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  const origin = await startOrigin(t);
  const server = await startServer(t, join(dir, 'data'));
  const api = apiOf(server);
  const zoneId = await createZone(api, origin.url);
  const job = await createFileJob(api, zoneId, join(dir, 'sampled'), { output_options: { field_names: ['RayID'], sample_rate: 0.1 } });
  const result = await autocannon({ url: server.urls.edge!, connections: 16, amount: 20_000, headers: { host: 'example.test' } });
  assert.equal(result.errors, 0);
  assert.equal(result['2xx'], 20_000, 'every request was answered (and its line spooled before its answer)');
  // Every line the job took is delivered: as many shipped as spooled, and the files hold all it shipped.
  const delivered = await until(
    async () => ({ ...(await jobDelivery(server, job.id)), lines: fileLines(join(dir, 'sampled')) }),
    (now) => now.spooledLines > 0 && now.shippedLines === now.spooledLines && now.lines.length === now.shippedLines,
    'every sampled line delivered',
    60_000,
  );
  const kept = delivered.lines.length / 20_000;
  console.log(`kept ${delivered.lines.length} of 20,000 lines (${(kept * 100).toFixed(2)}%)`);
  assert.ok(Math.abs(kept - 0.1) <= 0.015, `kept ${(kept * 100).toFixed(2)}%`);
  assert.ok(delivered.lines.every((l) => Object.keys(l).join() === 'RayID'));
});
