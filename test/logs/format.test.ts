/** Output of a job: field selection and order, timestamp formats, ndjson/csv framing, template, CVE flag. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LogOutputOptions } from '../../src/db/control-store.ts';
import { createRecordFormatter } from '../../src/logs/format/record-formatter.ts';
import { ndjsonOutput } from '../helpers/log-fixtures.ts';

const NDJSON: LogOutputOptions = { ...ndjsonOutput(['RayID', 'EdgeStartTimestamp', 'ClientIP']), timestampFormat: 'unixnano' };
const record = {
  RayID: '7f1e0a2b3c4d5e6f',
  EdgeStartTimestamp: Date.parse('2026-11-23T02:05:07.123Z'),
  ClientIP: '127.0.0.1',
  RequestHeaders: { 'user-agent': 'curl ${jndi:ldap://x}' },
  EdgeResponseStatus: 200,
};

test('only field_names are written, in their order, one JSON object per line', { timeout: 10_000 }, () => {
  const line = createRecordFormatter({ ...NDJSON, fieldNames: ['ClientIP', 'RayID', 'RequestHeaders'] }).format(record);
  assert.equal(line, '{"ClientIP":"127.0.0.1","RayID":"7f1e0a2b3c4d5e6f","RequestHeaders":{"user-agent":"curl ${jndi:ldap://x}"}}\n');
  assert.deepEqual(Object.keys(JSON.parse(line)), ['ClientIP', 'RayID', 'RequestHeaders']);
});

test('timestamp formats: unixnano (default), unix, rfc3339 and its ms/ns variants', { timeout: 10_000 }, () => {
  const ts = (timestampFormat: LogOutputOptions['timestampFormat']) =>
    JSON.parse(createRecordFormatter({ ...NDJSON, timestampFormat }).format(record)).EdgeStartTimestamp;
  assert.equal(createRecordFormatter(NDJSON).format(record).includes('"EdgeStartTimestamp":1795399507123000000'), true);
  assert.equal(ts('unix'), 1795399507);
  assert.equal(ts('rfc3339'), '2026-11-23T02:05:07Z');
  assert.equal(ts('rfc3339ms'), '2026-11-23T02:05:07.123Z');
  assert.equal(ts('rfc3339ns'), '2026-11-23T02:05:07.123000000Z');
});

test('CVE-2021-44228 replaces every ${ with x{', { timeout: 10_000 }, () => {
  const line = createRecordFormatter({ ...NDJSON, fieldNames: ['RequestHeaders'], cve202144228: true }).format(record);
  assert.equal(line, '{"RequestHeaders":{"user-agent":"curl x{jndi:ldap://x}"}}\n');
});

test('csv quotes strings, leaves numbers bare; a missing field is empty', { timeout: 10_000 }, () => {
  const formatter = createRecordFormatter({
    ...NDJSON,
    outputType: 'csv',
    recordPrefix: '',
    recordSuffix: '\n',
    fieldNames: ['ClientIP', 'EdgeResponseStatus', 'ClientRequestReferer'],
    batchPrefix: 'ClientIP,EdgeResponseStatus,ClientRequestReferer\n',
  });
  assert.equal(formatter.format(record), '"127.0.0.1",200,\n');
  assert.equal(formatter.batchPrefix, 'ClientIP,EdgeResponseStatus,ClientRequestReferer\n');
});

test('record_template renders fields, literals and comments; unlisted fields render null', { timeout: 10_000 }, () => {
  const formatter = createRecordFormatter({
    ...NDJSON,
    recordPrefix: '',
    recordSuffix: '\n',
    recordTemplate: '{{/* a comment */}}ip={{ .ClientIP }} {{ "literal" }} status={{ .EdgeResponseStatus }}',
  });
  assert.equal(formatter.format(record), 'ip="127.0.0.1" literal status=null\n');
});

test('property: every ndjson line is valid JSON holding exactly the selected values', { timeout: 10_000 }, async () => {
  const fc = (await import('fast-check')).default;
  const formatter = createRecordFormatter({ ...NDJSON, fieldNames: ['RayID', 'ClientRequestUserAgent', 'EdgeResponseStatus', 'RequestHeaders'] });
  fc.assert(
    fc.property(
      fc.string({ unit: 'binary' }),
      fc.string(),
      fc.integer(),
      fc.dictionary(fc.string(), fc.string({ unit: 'grapheme' })),
      (ray, agent, status, headers) => {
        const line = formatter.format({ RayID: ray, ClientRequestUserAgent: agent, EdgeResponseStatus: status, RequestHeaders: headers });
        assert.ok(line.endsWith('}\n'));
        assert.deepEqual(JSON.parse(line), {
          RayID: ray,
          ClientRequestUserAgent: agent,
          EdgeResponseStatus: status,
          RequestHeaders: JSON.parse(JSON.stringify(headers)),
        });
      },
    ),
  );
});
