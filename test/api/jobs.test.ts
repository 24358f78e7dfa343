import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { test, type TestContext } from 'node:test';
import { jobResult } from '../../src/api/logshipping/job-schema.ts';
import { silentLogger } from '../../src/core/log.ts';
import { FileRoots } from '../../src/logs/destinations/file-roots.ts';
import { LogPipeline } from '../../src/logs/log-pipeline.ts';
import { HTTP_REQUESTS_FIELDS, isFilledField } from '../../src/logs/index.ts';
import { readAll } from '../helpers/engine.ts';
import { reservePort } from '../helpers/reserved-port.ts';
import { ENDPOINT_KEY_ID, ENDPOINT_SECRET, startS3Endpoint } from '../helpers/s3-endpoint.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { startApi, type ApiFixture, type ErrorEntry, type Json } from './helpers.ts';

/** An s3:// destination on a real S3 endpoint (a job's destination is tried when the job is made). */
async function s3Of(t: TestContext): Promise<string> {
  const endpoint = await startS3Endpoint(t);
  return `s3://${endpoint.bucket}/http?region=auto&access-key-id=${ENDPOINT_KEY_ID}&secret-access-key=${encodeURIComponent(ENDPOINT_SECRET)}&endpoint=${endpoint.endpoint}`;
}
const criterion = (key: string, operator: string, value: unknown) => ({ key, operator, value });

async function zoneOf(api: ApiFixture): Promise<string> {
  return (await api.call('/zones', { method: 'POST', json: { name: 'example.com' } })).body.result.id;
}

async function collector(t: TestContext, status: number) {
  const received: Array<{ headers: Record<string, unknown>; body: string }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: gunzipSync(Buffer.concat(chunks)).toString() });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ingest`, received };
}

test('log jobs with the official SDK: create, list, update and delete a job with a nested filter', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const S3 = await s3Of(t);
  const zoneId = await zoneOf(api);
  const cf = api.sdk();
  const filter = JSON.stringify({
    where: {
      and: [
        criterion('ClientRequestPath', 'contains', '/static'),
        { or: [criterion('ClientRequestHost', 'eq', 'example.com'), criterion('EdgeResponseStatus', 'in', [200, 201])] },
      ],
    },
  });
  const created = await cf.logpush.jobs.create({
    zone_id: zoneId,
    name: 'static.example.com',
    destination_conf: S3,
    dataset: 'http_requests',
    filter,
    output_options: {
      field_names: ['RayID', 'EdgeStartTimestamp', 'ClientIP', 'Cookies', 'RequestHeaders', 'ResponseHeaders'],
      timestamp_format: 'rfc3339',
      sample_rate: 0.1,
      'CVE-2021-44228': true,
    },
  });
  jobResult.parse(created);
  assert.ok(created && Number.isInteger(created.id));
  assert.deepEqual(
    [created.enabled, created.kind, created.dataset, created.last_complete, created.last_error, created.error_message],
    [false, '', 'http_requests', null, null, null],
  );
  assert.equal((created as unknown as { filter: string }).filter, filter, 'the filter travels back as the string sent');
  assert.deepEqual(created.output_options, {
    field_names: ['RayID', 'EdgeStartTimestamp', 'ClientIP', 'Cookies', 'RequestHeaders', 'ResponseHeaders'],
    output_type: 'ndjson',
    batch_prefix: '',
    batch_suffix: '',
    record_prefix: '{',
    record_suffix: '}\n',
    record_delimiter: '',
    field_delimiter: ',',
    record_template: null,
    timestamp_format: 'rfc3339',
    sample_rate: 0.1,
    'CVE-2021-44228': true,
  });
  assert.equal('ownership_challenge' in created, false);
  const listed = [];
  for await (const job of cf.logpush.jobs.list({ zone_id: zoneId })) listed.push(job);
  assert.deepEqual(listed, [created]);
  assert.deepEqual(await cf.logpush.jobs.get(created.id!, { zone_id: zoneId }), created);
  assert.deepEqual(await api.control.listEnabledJobs(zoneId), [], 'created disabled');
  const updated = (await cf.logpush.jobs.update(created.id!, {
    zone_id: zoneId,
    enabled: true,
    filter: JSON.stringify({ where: criterion('ClientCountry', 'eq', 'pt') }),
  }))!;
  assert.deepEqual([updated.enabled, updated.name, updated.output_options?.sample_rate], [true, 'static.example.com', 0.1], 'fields not sent are kept');
  const edge = await api.control.listEnabledJobs(zoneId);
  assert.deepEqual(
    edge.map((job) => [job.id, job.filter]),
    [[created.id, JSON.stringify({ where: criterion('ClientCountry', 'eq', 'pt') })]],
    'the pipeline sees the change at once',
  );
  await cf.logpush.jobs.delete(created.id!, { zone_id: zoneId });
  await assert.rejects(cf.logpush.jobs.get(created.id!, { zone_id: zoneId }), (error: Json) => error.status === 404 && error.errors[0].code === 1003);
  const fieldsList = (await cf.logpush.datasets.fields.get('http_requests', { zone_id: zoneId })) as Record<string, string>;
  assert.match(fieldsList.ClientRequestHost!, /Host requested by the client/);
  assert.ok('Cookies' in fieldsList && 'RayID' in fieldsList);
});

test('defaults, the deprecated logpull_options, and at most 4 jobs per zone (403 / 1004)', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const S3 = await s3Of(t);
  const zoneId = await zoneOf(api);
  const jobs = `/zones/${zoneId}/logshipping/jobs`;
  const plain = await api.call(jobs, { method: 'POST', json: { destination_conf: S3 } });
  assert.deepEqual(plain.body.result.output_options.field_names, [
    'ClientIP',
    'ClientRequestHost',
    'ClientRequestMethod',
    'ClientRequestURI',
    'EdgeEndTimestamp',
    'EdgeResponseBytes',
    'EdgeResponseStatus',
    'EdgeStartTimestamp',
    'RayID',
  ]);
  assert.deepEqual([plain.body.result.output_options.timestamp_format, plain.body.result.frequency, plain.body.result.filter], ['unixnano', 'high', null]);
  const csv = await api.call(jobs, { method: 'POST', json: { destination_conf: S3, output_options: { output_type: 'csv', field_names: ['RayID'] } } });
  assert.deepEqual([csv.body.result.output_options.record_prefix, csv.body.result.output_options.record_suffix], ['', '\n']);
  const legacy = await api.call(jobs, {
    method: 'POST',
    json: { destination_conf: S3, logpull_options: 'fields=RayID,ClientIP&timestamps=rfc3339&sample=0.5&CVE-2021-44228=true' },
  });
  assert.deepEqual(legacy.body.result.output_options.field_names, ['RayID', 'ClientIP']);
  assert.deepEqual(
    [legacy.body.result.output_options.sample_rate, legacy.body.result.output_options['CVE-2021-44228'], legacy.body.result.logpull_options],
    [0.5, true, 'fields=RayID,ClientIP&timestamps=rfc3339&sample=0.5&CVE-2021-44228=true'],
  );
  const fourth = await api.call(jobs, { method: 'POST', json: { destination_conf: S3, output_options: { 'CVE-2021-44228': 'true' } } });
  assert.equal(fourth.body.result.output_options['CVE-2021-44228'], true, 'the flag may come as the text "true", as the real API\'s examples send it');
  const fifth = await api.call(jobs, { method: 'POST', json: { destination_conf: S3 } });
  assert.deepEqual(
    [fifth.status, fifth.body.errors],
    [403, [{ code: 1004, message: 'creating a new job (for http_requests dataset) is not allowed: exceeded max jobs allowed' }]],
  );
  assert.deepEqual(
    (await api.call(jobs)).body.result.map((j: { id: number }) => j.id),
    [1, 2, 3, 4],
  );
  await api.call(`${jobs}/2`, { method: 'DELETE' });
  assert.equal((await api.call(jobs, { method: 'POST', json: { destination_conf: S3 } })).body.result.id, 5, 'ids are never reused');
});

test(
  'the dataset catalog (extension): every field with its type and whether the edge fills it, the jobs limit and the file roots; the fields route says which are never filled',
  { timeout: 10_000 },
  async (t) => {
    const api = await startApi(t);
    const zoneId = await zoneOf(api);
    const catalog = (await api.call(`/zones/${zoneId}/logshipping/datasets/http_requests/catalog`)).body.result;
    assert.equal(catalog.max_jobs_per_zone, 4);
    assert.deepEqual(catalog.file_roots, [tmpdir()], "where file:// destinations may point: the server's [logs] file_roots");
    const byName = new Map<string, Json>(catalog.fields.map((f: { name: string }) => [f.name, f]));
    assert.equal(byName.size, Object.keys(HTTP_REQUESTS_FIELDS).length);
    assert.deepEqual(byName.get('RayID'), {
      name: 'RayID',
      type: 'string',
      description: 'ID of the request (16 lowercase hex characters).',
      deprecated: false,
      filled: true,
    });
    assert.deepEqual(byName.get('BotScore'), {
      name: 'BotScore',
      type: 'int',
      description: 'Bot score, 1 (likely automated) to 99 (likely human).',
      deprecated: false,
      filled: false,
    });
    assert.equal(byName.get('OriginResponseTime').deprecated, true);
    assert.deepEqual(
      catalog.fields
        .filter((f: { filled: boolean }) => f.filled)
        .map((f: { name: string }) => f.name)
        .sort(),
      Object.keys(HTTP_REQUESTS_FIELDS).filter(isFilledField).sort(),
    );
    const described = (await api.call(`/zones/${zoneId}/logshipping/datasets/http_requests/fields`)).body.result;
    assert.equal(described.BotScore, 'Bot score, 1 (likely automated) to 99 (likely human). Type: int. Not filled by edgeport: null in every line.');
    assert.equal(described.RayID, 'ID of the request (16 lowercase hex characters). Type: string.');
    assert.deepEqual((await api.call(`/zones/${zoneId}/logshipping/datasets/dns_logs/catalog`)).status, 404);
  },
);

test('every job validation error, with its code and pointer; refused requests change nothing', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const S3 = await s3Of(t);
  const zoneId = await zoneOf(api);
  const jobs = `/zones/${zoneId}/logshipping/jobs`;
  const existing = (await api.call(jobs, { method: 'POST', json: { destination_conf: S3, name: 'keep' } })).body.result;
  const where = (w: unknown) => JSON.stringify({ where: w });
  const padded = (bytes: number) => {
    const text = where(criterion('ClientRequestHost', 'eq', ''));
    return `${text.slice(0, -1)}${' '.repeat(bytes - text.length)}}`;
  };
  const thirtyOne = where({ and: Array.from({ length: 31 }, () => criterion('JA4', 'eq', '')) });
  const nestedGroups = (levels: number) => `{"where":${'{"and":['.repeat(levels)}${JSON.stringify(criterion('ClientIP', 'eq', 'x'))}${']}'.repeat(levels)}}`;
  const cases: Array<[object, number, string, RegExp]> = [
    [{}, 1002, '/destination_conf', /destination_conf is required/],
    [{ destination_conf: 'gs://bucket/x' }, 1002, '/destination_conf', /the scheme gs:\/\/ is not supported/],
    [{ destination_conf: 'file://relative/dir' }, 1002, '/destination_conf', /absolute path/],
    [{ destination_conf: 'file:///var/../etc' }, 1002, '/destination_conf', /"\." or "\.\." segments/],
    [{ destination_conf: 'store://Bad_Bucket/x' }, 1002, '/destination_conf', /not a valid bucket name/],
    [{ destination_conf: 's3://logs/x?access-key-id=a&secret-access-key=b' }, 1002, '/destination_conf', /needs \?region=/],
    [{ destination_conf: 's3://logs/x?region=auto' }, 1002, '/destination_conf', /needs access-key-id and secret-access-key/],
    [{ destination_conf: `${S3}&colour=red` }, 1002, '/destination_conf', /colour is not known/],
    [{ destination_conf: 'https://user:pw@example.com/' }, 1002, '/destination_conf', /header_<Name>/],
    [{ destination_conf: `https://x.test/${'a'.repeat(4096)}` }, 1002, '/destination_conf', /at most 4096 characters/],
    [{ destination_conf: S3, dataset: 'firewall_events' }, 1002, '/dataset', /serves the http_requests dataset only/],
    [{ destination_conf: S3, kind: 'edge' }, 1002, '/kind', /no edge jobs/],
    [{ destination_conf: S3, name: 'has_underscore' }, 1002, '/name', /letters, digits, hyphens and dots/],
    [{ destination_conf: S3, enabled: 'yes' }, 1002, '/enabled', /must be a boolean/],
    [{ destination_conf: S3, frequency: 'often' }, 1002, '/frequency', /must be one of "high", "low"/],
    [{ destination_conf: S3, max_upload_bytes: 4_999_999 }, 1002, '/max_upload_bytes', /0 \(no limit\) or from 5000000 to 1000000000/],
    [{ destination_conf: S3, max_upload_records: 999 }, 1002, '/max_upload_records', /from 1000 to 1000000/],
    [{ destination_conf: S3, max_upload_interval_seconds: 301 }, 1002, '/max_upload_interval_seconds', /from 30 to 300/],
    [{ destination_conf: S3, output_options: { field_names: [] } }, 1002, '/output_options/field_names', /at least one field/],
    [
      { destination_conf: S3, output_options: { field_names: ['RayID', 'Nope'] } },
      1002,
      '/output_options/field_names/1',
      /'Nope' is not a valid value for field_names because it is not a field of the http_requests dataset/,
    ],
    [{ destination_conf: S3, output_options: { field_names: ['RayID', 'RayID'] } }, 1002, '/output_options/field_names/1', /listed twice/],
    [
      { destination_conf: S3, output_options: { timestamp_format: 'iso' } },
      1002,
      '/output_options/timestamp_format',
      /must be one of "unixnano", "unix", "rfc3339"/,
    ],
    [{ destination_conf: S3, output_options: { sample_rate: 0 } }, 1002, '/output_options/sample_rate', /greater than 0 and at most 1/],
    [{ destination_conf: S3, output_options: { sample_rate: 1.01 } }, 1002, '/output_options/sample_rate', /greater than 0 and at most 1/],
    [{ destination_conf: S3, output_options: { 'CVE-2021-44228': 'yes' } }, 1002, '/output_options/CVE-2021-44228', /not a valid value/],
    [{ destination_conf: S3, output_options: { merge_subrequests: true } }, 1002, '/output_options/merge_subrequests', /not supported/],
    [{ destination_conf: S3, output_options: { record_template: '{{ .Nope }}' } }, 1002, '/output_options/record_template', /not a field/],
    [{ destination_conf: S3, output_options: { record_template: '{{ .RayID ' } }, 1002, '/output_options/record_template', /without "}}"/],
    [{ destination_conf: S3, output_options: { record_template: '{{ printf "%s" .RayID }}' } }, 1002, '/output_options/record_template', /not allowed/],
    [{ destination_conf: S3, output_options: { colour: 'red' } }, 1002, '/output_options/colour', /not a valid field of output_options/],
    [{ destination_conf: S3, logpull_options: 'fields=Nope' }, 1002, '/logpull_options', /Nope is not a field/],
    [{ destination_conf: S3, filter: '{"where":' }, 1002, '/filter', /^invalid filter: the filter is not valid JSON/],
    [{ destination_conf: S3, filter: '{"select":{}}' }, 1002, '/filter', /must contain the key "where"/],
    [
      { destination_conf: S3, filter: where(criterion('ClientIP', 'like', 'x')) },
      1002,
      '/filter',
      /"like" is not an operator; use one of eq, !eq, lt, leq, gt, geq, startsWith, endsWith, !startsWith, !endsWith, contains, !contains, in, !in \(at \/where\/operator\)/,
    ],
    [{ destination_conf: S3, filter: where(criterion('Cookies', 'eq', 'x')) }, 1002, '/filter', /cannot be filtered on/],
    [{ destination_conf: S3, filter: padded(1001) }, 1002, '/filter', /^invalid filter: the filter is 1001 bytes long; at most 1000 bytes are allowed$/],
    // 31 criteria never fit in 1000 bytes: refused for its length before it is parsed.
    [{ destination_conf: S3, filter: thirtyOne }, 1002, '/filter', /^invalid filter: the filter is 1290 bytes long; at most 1000 bytes are allowed$/],
    // 4,000 nested groups (once a stack overflow and 500 / 10001): refused for its length, unparsed.
    [
      { destination_conf: S3, filter: nestedGroups(4000) },
      1002,
      '/filter',
      new RegExp(`^invalid filter: the filter is ${Buffer.byteLength(nestedGroups(4000))} bytes long; at most 1000 bytes are allowed$`),
    ],
    [
      { destination_conf: S3, filter: nestedGroups(32) },
      1002,
      '/filter',
      /^invalid filter: the filter nests arrays and objects more than 64 levels deep \(each "and"\/"or" group takes two\); at most 64 are allowed$/,
    ],
    [{ destination_conf: S3, ownership_challenge: 'not a token!' }, 1002, '/ownership_challenge', /incorrect ownership challenge/],
  ];
  for (const [body, code, pointer, message] of cases) {
    const response = await api.call(jobs, { method: 'POST', json: body });
    assert.equal(response.status, 400, JSON.stringify(body).slice(0, 200));
    assert.ok(
      response.body.errors.some((e: ErrorEntry) => e.code === code && e.source?.pointer === pointer && message.test(e.message)),
      `${JSON.stringify(body).slice(0, 200)} -> ${JSON.stringify(response.body.errors).slice(0, 400)}`,
    );
  }
  assert.equal((await api.call(jobs, { method: 'POST', json: { destination_conf: S3, filter: padded(1000) } })).status, 200, 'exactly 1000 bytes is accepted');
  assert.equal(
    (await api.call(jobs, { method: 'POST', json: { destination_conf: S3, output_options: { sample_rate: 1 } } })).status,
    200,
    'sample_rate 1 is accepted',
  );
  assert.equal((await api.call(jobs)).body.result.length, 3, 'only the three accepted creates wrote');
  const put = (body: object) => api.call(`${jobs}/${existing.id}`, { method: 'PUT', json: body });
  for (const [body, pointer, message] of [
    [{ dataset: 'dns_logs' }, '/dataset', /serves the http_requests dataset only/],
    [{ filter: where(criterion('Nope', 'eq', 1)) }, '/filter', /not a field/],
    [{ output_options: { sample_rate: -1 } }, '/output_options/sample_rate', /greater than 0/],
    [{ enabled: true, name: 'bad name' }, '/name', /letters, digits/],
  ] as const) {
    const response = await put(body);
    assert.ok(
      response.status === 400 && response.body.errors.some((e: ErrorEntry) => e.source?.pointer === pointer && message.test(e.message)),
      JSON.stringify(response.body),
    );
  }
  assert.deepEqual((await api.call(`${jobs}/${existing.id}`)).body.result, existing, 'the refused PUTs changed nothing');
  assert.deepEqual([(await api.call(`${jobs}/999`)).status, (await api.call(`${jobs}/abc`)).status], [404, 400]);
  for (const [bytes, records, interval] of [
    [5_000_000, 1_000, 30],
    [1_000_000_000, 1_000_000, 300],
    [0, 0, 0],
  ]) {
    const edge = await put({ max_upload_bytes: bytes, max_upload_records: records, max_upload_interval_seconds: interval });
    assert.deepEqual([edge.status, edge.body.result?.max_upload_bytes], [200, bytes], 'batch limits exactly at their bounds');
  }
});

test('ownership challenge: the file holds the token, the job needs it, a wrong or expired one is refused', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const S3 = await s3Of(t);
  const zoneId = await zoneOf(api);
  const dir = join(tempDir(t), 'logs');
  const destination = `file://${dir}/{DATE}`;
  const jobs = `/zones/${zoneId}/logshipping/jobs`;
  const missing = await api.call(jobs, { method: 'POST', json: { destination_conf: destination } });
  assert.deepEqual([missing.status, missing.body.errors[0].code, missing.body.errors[0].source], [400, 1002, { pointer: '/ownership_challenge' }]);
  assert.match(missing.body.errors[0].message, /^missing ownership challenge: file:\/\/ destinations need the token written by POST/);
  const cf = api.sdk();
  const challenge = await cf.logpush.ownership.create({ zone_id: zoneId, destination_conf: destination });
  assert.deepEqual(challenge, { filename: join(dir, 'ownership-challenge.txt'), message: '', valid: true });
  const token = readFileSync(challenge!.filename!, 'utf8');
  assert.match(token, /^[A-Za-z0-9_-]{64}$/);
  // Change the last character to one it is not: a fixed 'A' equals the token one time in 64.
  const wrongToken = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
  const wrong = await api.call(jobs, { method: 'POST', json: { destination_conf: destination, ownership_challenge: wrongToken } });
  assert.deepEqual(
    [wrong.status, wrong.body.errors],
    [400, [{ code: 1002, message: 'incorrect ownership challenge', source: { pointer: '/ownership_challenge' } }]],
  );
  assert.deepEqual(await cf.logpush.ownership.validate({ zone_id: zoneId, destination_conf: destination, ownership_challenge: token }), { valid: true });
  assert.deepEqual(await cf.logpush.ownership.validate({ zone_id: zoneId, destination_conf: destination, ownership_challenge: 'x' }), { valid: false });
  const job = await api.call(jobs, { method: 'POST', json: { destination_conf: destination, ownership_challenge: token } });
  assert.equal(job.status, 200);
  const child = await api.call(jobs, { method: 'POST', json: { destination_conf: `file://${dir}/http/{DATE}`, ownership_challenge: token } });
  assert.equal(child.status, 200, 'a token for a directory covers the directories below it');
  const other = await api.newAccount('other@example.com');
  const otherZone = (await api.call('/zones', { method: 'POST', json: { name: 'other.test' }, as: other })).body.result.id;
  const stolen = await api.call(`/zones/${otherZone}/logshipping/jobs`, {
    method: 'POST',
    as: other,
    json: { destination_conf: destination, ownership_challenge: token },
  });
  assert.equal(stolen.body.errors[0].message, 'incorrect ownership challenge', 'a token is bound to its zone');
  // PUT to a new destination needs that destination's proof; the rest of the job may change freely.
  const elsewhere = `file://${join(tempDir(t), 'elsewhere')}`;
  const moved = await api.call(`${jobs}/${job.body.result.id}`, { method: 'PUT', json: { destination_conf: elsewhere } });
  assert.deepEqual([moved.status, moved.body.errors[0].code], [400, 1002]);
  assert.equal((await api.call(`${jobs}/${job.body.result.id}`, { method: 'PUT', json: { enabled: true } })).body.result.destination_conf, destination);
  api.clock.advance(7 * 24 * 3600 * 1000);
  const expired = await api.call(jobs, { method: 'POST', json: { destination_conf: destination, ownership_challenge: token } });
  assert.equal(expired.body.errors[0].message, 'incorrect ownership challenge', 'tokens live 7 days');
  const noNeed = await api.call(`/zones/${zoneId}/logshipping/ownership`, { method: 'POST', json: { destination_conf: S3 } });
  assert.match(noNeed.body.errors[0].message, /s3:\/\/ destinations need no ownership challenge/);
});

test('store:// destinations get the challenge in the bucket; http(s) ones must accept a test upload', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const zoneId = await zoneOf(api);
  const jobs = `/zones/${zoneId}/logshipping/jobs`;
  const challenge = await api.call(`/zones/${zoneId}/logshipping/ownership`, { method: 'POST', json: { destination_conf: 'store://test-bucket/logs/{DATE}' } });
  assert.deepEqual(challenge.body.result, { filename: 'test-bucket/logs/ownership-challenge.txt', message: '', valid: true });
  const object = await api.store.get('test-bucket', 'logs/ownership-challenge.txt');
  const token = (await readAll(object!.body!.stream())).toString();
  assert.equal(
    (await api.call(jobs, { method: 'POST', json: { destination_conf: 'store://test-bucket/logs/{DATE}', ownership_challenge: token } })).status,
    200,
  );
  const noBucket = await api.call(`/zones/${zoneId}/logshipping/ownership`, { method: 'POST', json: { destination_conf: 'store://no-such-bucket/x' } });
  assert.deepEqual([noBucket.status, noBucket.body.result.valid, noBucket.body.result.filename], [200, false, null]);
  assert.match(noBucket.body.result.message, /could not be written/);
  // Another account's store:// names its own buckets: my test-bucket is not one of them.
  const other = await api.newAccount('other@example.com');
  const otherZone = (await api.call('/zones', { method: 'POST', json: { name: 'other.example' }, as: other })).body.result.id;
  const foreign = await api.call(`/zones/${otherZone}/logshipping/ownership`, {
    method: 'POST',
    json: { destination_conf: 'store://test-bucket/logs/{DATE}' },
    as: other,
  });
  assert.deepEqual([foreign.body.result.valid, foreign.body.result.filename], [false, null]);
  assert.match(foreign.body.result.message, /bucket does not exist/);
  const stolen = await api.call(`/zones/${otherZone}/logshipping/jobs`, {
    method: 'POST',
    json: { destination_conf: 'store://test-bucket/logs/{DATE}', ownership_challenge: token },
    as: other,
  });
  assert.deepEqual(
    [stolen.status, stolen.body.errors[0].message],
    [400, 'incorrect ownership challenge'],
    "a token read from my bucket proves nothing for another account's zone",
  );
  assert.equal(
    await readAll((await api.store.get('test-bucket', 'logs/ownership-challenge.txt'))!.body!.stream()).then(String),
    token,
    'my challenge is untouched',
  );

  const good = await collector(t, 200);
  const created = await api.call(jobs, { method: 'POST', json: { destination_conf: `${good.url}?header_Authorization=Bearer%20abc&source=edge` } });
  assert.equal(created.status, 200);
  assert.deepEqual([good.received.length, good.received[0]!.body, good.received[0]!.headers.authorization], [1, '{"content":"tests"}', 'Bearer abc']);
  const bad = await collector(t, 403);
  const refused = await api.call(jobs, { method: 'POST', json: { destination_conf: bad.url } });
  assert.deepEqual(
    [refused.status, refused.body.errors],
    [
      400,
      [
        {
          code: 1002,
          message: `error validating destination: error writing object: error uploading: POST ${bad.url} answered HTTP 403`,
          source: { pointer: '/destination_conf' },
        },
      ],
    ],
  );
  assert.equal((await api.call(jobs)).body.result.length, 2);
});

/** A TCP listener that accepts connections and never answers (a destination that hangs). */
async function silentListener(t: TestContext): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test(
  's3:// and https:// destinations are tried when the job is made: one that never answers, refuses connections or refuses the upload is refused, saying what failed',
  { timeout: 30_000 },
  async (t) => {
    const api = await startApi(t); // probe timeout: 2 s
    const zoneId = await zoneOf(api);
    const jobs = `/zones/${zoneId}/logshipping/jobs`;
    const key = `access-key-id=${ENDPOINT_KEY_ID}&secret-access-key=${encodeURIComponent(ENDPOINT_SECRET)}`;
    const hanging = await silentListener(t);
    const closedPort = await reservePort(t);
    const refusedWith = async (destination: string, message: RegExp) => {
      const started = Date.now();
      const answer = await api.call(jobs, { method: 'POST', json: { destination_conf: destination, enabled: true } });
      const took = Date.now() - started;
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.deepEqual([answer.body.errors[0].code, answer.body.errors[0].source], [1002, { pointer: '/destination_conf' }]);
      assert.match(answer.body.errors[0].message, /^error validating destination: error writing object: error uploading: /);
      assert.match(answer.body.errors[0].message, message);
      return took;
    };
    const s3Took = await refusedWith(
      `s3://logs/http?region=auto&${key}&endpoint=${hanging}`,
      /S3 PutObject to bucket "logs" failed: no answer from http:\/\/127\.0\.0\.1:\d+ within 2000 ms/,
    );
    assert.ok(s3Took >= 1_900 && s3Took < 10_000, `refused after the probe timeout, not later (${s3Took} ms)`);
    const httpsTook = await refusedWith(`${hanging}/ingest`, /POST http:\/\/127\.0\.0\.1:\d+\/ingest failed: no answer within 2000 ms/);
    assert.ok(httpsTook >= 1_900 && httpsTook < 10_000, `${httpsTook} ms`);
    await refusedWith(`s3://logs/http?region=auto&${key}&endpoint=http://127.0.0.1:${closedPort}`, /ECONNREFUSED/);
    await refusedWith(`http://127.0.0.1:${closedPort}/ingest`, /ECONNREFUSED/);
    // A real S3 endpoint with a wrong key answers 403: the S3 error is named.
    const endpoint = await startS3Endpoint(t);
    await refusedWith(
      `s3://${endpoint.bucket}/http?region=auto&access-key-id=${ENDPOINT_KEY_ID}&secret-access-key=wrong&endpoint=${endpoint.endpoint}`,
      /SignatureDoesNotMatch|InvalidAccessKeyId|AccessDenied/,
    );
    assert.deepEqual((await api.call(jobs)).body.result, [], 'no refused job was stored');

    // The honest destination: the test object lands below the job's path, and the job is made.
    const made = await api.call(jobs, {
      method: 'POST',
      json: { destination_conf: `s3://${endpoint.bucket}/edge/{DATE}?region=auto&${key}&endpoint=${endpoint.endpoint}` },
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.ok(
      await endpoint.engine.head(endpoint.bucket, 'edge/edgeport-destination-test.json.gz'),
      'the test object was written below the fixed part of the path',
    );
  },
);

test(
  'DELETE of a job removes its spool right after it answers (the pipeline hears the change), and a PUT to an unreachable destination is refused and changes nothing',
  { timeout: 20_000 },
  async (t) => {
    const api = await startApi(t);
    const zoneId = await zoneOf(api);
    const jobs = `/zones/${zoneId}/logshipping/jobs`;
    const dir = join(tempDir(t), 'logs');
    await api.call(`/zones/${zoneId}/logshipping/ownership`, { method: 'POST', json: { destination_conf: `file://${dir}` } });
    const created = await api.call(jobs, {
      method: 'POST',
      json: { destination_conf: `file://${dir}`, ownership_challenge: readFileSync(join(dir, 'ownership-challenge.txt'), 'utf8'), enabled: true },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const pipeline = new LogPipeline({
      dataDir: api.dataDir,
      jobs: api.control,
      engine: api.engine,
      clock: api.clock,
      logger: silentLogger,
      fileRoots: new FileRoots({ roots: [tmpdir()], dataDir: api.dataDir }),
      maxIntervalMs: 300_000,
    });
    t.after(() => pipeline.close());
    pipeline.start();
    const active = await pipeline.jobsFor(zoneId);
    for (let i = 0; i < 20; i++) {
      pipeline.emit(active, {
        RayID: `ray${i}`,
        ZoneName: 'example.com',
        EdgeStartTimestamp: api.clock.now(),
        EdgeEndTimestamp: api.clock.now(),
        ClientIP: '192.0.2.1',
        ClientRequestHost: 'example.com',
        ClientRequestMethod: 'GET',
        ClientRequestURI: '/',
        ClientRequestPath: '/',
        ClientRequestProtocol: 'HTTP/1.1',
        ClientRequestScheme: 'http',
        ClientRequestUserAgent: '',
        ClientRequestReferer: '',
        ClientRequestBytes: 0,
        EdgeResponseStatus: 200,
        EdgeResponseBytes: 0,
        EdgeResponseContentType: '',
        OriginResponseStatus: 200,
        OriginResponseTime: 0,
        WorkerSubrequest: false,
        RequestHeaders: {},
        ResponseHeaders: {},
        Cookies: { session: 'secret' },
      });
    }
    await new Promise((resolve) => setImmediate(resolve));
    const spool = join(api.dataDir, 'logs', 'jobs', String(created.body.result.id));
    assert.ok(
      readdirSync(spool).some((name) => name.endsWith('.spool')),
      'the lines wait in the spool',
    );

    const closed = `http://127.0.0.1:${await reservePort(t)}/ingest`;
    const moved = await api.call(`${jobs}/${created.body.result.id}`, { method: 'PUT', json: { destination_conf: closed } });
    assert.deepEqual([moved.status, moved.body.errors[0].code], [400, 1002]);
    assert.match(moved.body.errors[0].message, /error uploading: POST http:\/\/127\.0\.0\.1:\d+\/ingest failed: .*ECONNREFUSED/);
    assert.equal((await api.call(`${jobs}/${created.body.result.id}`)).body.result.destination_conf, `file://${dir}`);

    assert.equal((await api.call(`${jobs}/${created.body.result.id}`, { method: 'DELETE' })).status, 200);
    const answered = Date.now();
    while (existsSync(spool)) {
      assert.ok(Date.now() - answered < 1_000, 'the spool is gone within a second of the DELETE');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(pipeline.spooledBytes, 0);
  },
);
