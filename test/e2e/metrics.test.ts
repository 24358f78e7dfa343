/**
 * `GET /metrics` on the API's port through the real `edgeport start`: requests, latencies and
 * errors of every service (edge, management API, S3, gateway) in one exposition, log delivery per
 * job (lines shipped, spool bytes), the gateway's own metrics, and no label that carries a zone id,
 * a zone name, a path or a key; and both listeners that serve `/metrics` (the API's and the
 * gateway's) pass `promtool check metrics`, Prometheus's own linter, on a live scrape.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { apiOf, createFileJob, createZone, fileLines, getVia, S3_KEY, startOrigin, startServer } from '../helpers/edge-logs-setup.ts';
import { checkMetrics } from '../helpers/promtool.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** The value of the sample `name{labels}` (labels in the order prom-client prints them), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((each) => each.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test("/metrics on the API port: every service's requests, latencies and errors, log delivery per job, bounded labels", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const server = await startServer(t, join(dir, 'data'));
  const api = apiOf(server);
  const origin = await startOrigin(t);
  const zoneId = await createZone(api, origin.url);
  const job = await createFileJob(api, zoneId, join(dir, 'logs'), { output_options: { field_names: ['RayID'] } });
  const edge = server.urls.edge!;
  for (let i = 0; i < 5; i++) assert.equal((await getVia(edge, 'example.test', `/page/${i}?secret-query`)).status, 200);
  assert.equal((await getVia(edge, 'example.test', '/fail/now')).status, 500, "the origin's 500 is passed on");
  const s3 = new S3Client({
    endpoint: server.urls['S3-compatible API']!,
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
  });
  t.after(() => s3.destroy());
  await s3.send(new CreateBucketCommand({ Bucket: 'metered' }));
  await s3.send(new PutObjectCommand({ Bucket: 'metered', Key: 'private/key-name.txt', Body: 'x' }));
  const rpc = await fetch(server.urls.gateway!.replace('<network>', 'sepolia'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
  });
  assert.equal(rpc.status, 200);
  await rpc.text();
  const deadline = Date.now() + 30_000;
  while (fileLines(join(dir, 'logs')).length < 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(fileLines(join(dir, 'logs')).length, 6, 'the job delivered the six lines');

  const origin8081 = new URL(server.urls['management API']!).origin;
  // A batch is counted shipped once its destination acknowledged it, a moment after its lines are in the file.
  let response = await fetch(`${origin8081}/metrics`);
  let text = await response.text();
  while (sample(text, `edgeport_logs_shipped_lines_total{log_job="${job.id}"}`) !== 6 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    response = await fetch(`${origin8081}/metrics`);
    text = await response.text();
  }
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  assert.equal(sample(text, 'edgeport_http_requests_total{service="edge",method="GET",status_class="2xx"}'), 5);
  assert.equal(sample(text, 'edgeport_http_requests_total{service="edge",method="GET",status_class="5xx"}'), 1);
  assert.equal(sample(text, 'edgeport_http_request_errors_total{service="edge",kind="server_error"}'), 1);
  assert.equal(sample(text, 'edgeport_http_request_duration_seconds_count{service="edge"}'), 6);
  assert.ok(sample(text, 'edgeport_http_request_duration_seconds_bucket{le="+Inf",service="edge"}') === 6, 'a histogram with buckets');
  assert.equal(sample(text, 'edgeport_http_requests_total{service="s3",method="PUT",status_class="2xx"}'), 2);
  assert.equal(sample(text, 'edgeport_http_requests_total{service="gateway",method="POST",status_class="2xx"}'), 1);
  assert.ok(sample(text, 'edgeport_http_requests_total{service="api",method="POST",status_class="2xx"}')! >= 3, 'zone, ownership, job');
  assert.equal(sample(text, 'edgeport_api_requests_total{operation="zones-create",status_class="2xx"}'), 1);
  assert.equal(sample(text, `edgeport_logs_spooled_lines_total{log_job="${job.id}"}`), 6);
  assert.equal(sample(text, `edgeport_logs_shipped_lines_total{log_job="${job.id}"}`), 6);
  assert.equal(sample(text, `edgeport_logs_failed_lines_total{log_job="${job.id}"}`), 0);
  assert.equal(sample(text, `edgeport_logs_dropped_lines_total{log_job="${job.id}"}`), 0);
  assert.equal(typeof sample(text, `edgeport_logs_job_spool_bytes{log_job="${job.id}"}`), 'number');
  assert.equal(typeof sample(text, 'edgeport_logs_spool_bytes'), 'number');
  assert.match(text, /^edgeport_gateway_calls_total\{network="sepolia",method="eth_chainId",outcome="result"\} 1$/m, "the gateway's metrics too");
  for (const secret of [zoneId, 'example.test', '/page/', 'secret-query', 'key-name', 'metered', S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID]) {
    assert.ok(!text.includes(secret), `no label holds ${secret}`);
  }
  const head = await fetch(`${origin8081}/metrics`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), '');

  await t.test('promtool check metrics finds nothing on a live scrape of every listener that serves /metrics', { timeout: 60_000 }, async () => {
    const listeners = { 'management API': `${origin8081}/metrics`, gateway: `${new URL(server.urls.gateway!).origin}/metrics` };
    for (const [listener, url] of Object.entries(listeners)) {
      const scrape = await fetch(url);
      assert.equal(scrape.status, 200, `${listener}: ${url}`);
      const exposition = await scrape.text();
      // Labels Prometheus sets itself on every scraped series (promtool does not check these): one of ours would be renamed exported_<name>.
      assert.doesNotMatch(exposition, /[{,](job|instance)="/, `${listener}: no series of ours carries the job or instance label`);
      const { code, problems } = await checkMetrics(exposition);
      assert.deepEqual({ code, problems }, { code: 0, problems: '' }, `promtool check metrics on the ${listener}'s ${url}:\n${problems}`);
    }
  });
});
