/**
 * Logs: records/s through the per-record path of a job (filter X AND (Y OR Z), sampling, field
 * selection, rfc3339 formatting) plus gzip level 1 of the batch, on one core; then the same into
 * a real spool (synchronous appends), as the edge does it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync, constants as zlib } from 'node:zlib';
import type { LogOutputOptions } from '../src/db/control-store.ts';
import { evaluateFilter } from '../src/logs/filter/evaluate-filter.ts';
import { parseFilter } from '../src/logs/filter/parse-filter.ts';
import { createRecordFormatter } from '../src/logs/format/record-formatter.ts';
import type { HttpRequestRecord } from '../src/logs/http-request-record.ts';
import { isSampled } from '../src/logs/sampling.ts';
import { JobSpool } from '../src/logs/spool/job-spool.ts';
import { newRayId } from '../src/edge/ray-id.ts';

const OUTPUT: LogOutputOptions = {
  fieldNames: [
    'RayID',
    'EdgeStartTimestamp',
    'EdgeEndTimestamp',
    'ClientIP',
    'ClientRequestHost',
    'ClientRequestMethod',
    'ClientRequestURI',
    'EdgeResponseStatus',
    'EdgeResponseBytes',
    'ClientRequestUserAgent',
    'RequestHeaders',
    'ResponseHeaders',
    'Cookies',
  ],
  outputType: 'ndjson',
  batchPrefix: '',
  batchSuffix: '',
  recordPrefix: '{',
  recordSuffix: '}\n',
  recordDelimiter: '',
  fieldDelimiter: ',',
  recordTemplate: null,
  timestampFormat: 'rfc3339',
  sampleRate: 1,
  cve202144228: true,
};

const FILTER = JSON.stringify({
  where: {
    and: [
      { key: 'ClientRequestHost', operator: 'eq', value: 'example.test' },
      {
        or: [
          { key: 'EdgeResponseStatus', operator: 'geq', value: 200 },
          { key: 'ClientRequestPath', operator: 'startsWith', value: '/api' },
        ],
      },
    ],
  },
});

function records(n: number): HttpRequestRecord[] {
  const start = Date.now();
  return Array.from({ length: n }, (_, i) => ({
    RayID: newRayId(),
    ZoneName: 'example.test',
    EdgeStartTimestamp: start + i,
    EdgeEndTimestamp: start + i + 1,
    ClientIP: '203.0.113.7',
    ClientRequestHost: 'example.test',
    ClientRequestMethod: 'GET',
    ClientRequestURI: `/api/items/${i}?page=2`,
    ClientRequestPath: `/api/items/${i}`,
    ClientRequestProtocol: 'HTTP/1.1',
    ClientRequestScheme: 'http',
    ClientRequestUserAgent: 'Mozilla/5.0 (X11; Linux x86_64)',
    ClientRequestReferer: '',
    ClientRequestBytes: 180,
    EdgeResponseStatus: 200,
    EdgeResponseBytes: 1024,
    EdgeResponseContentType: 'application/json',
    OriginResponseStatus: 200,
    OriginResponseTime: 2,
    WorkerSubrequest: false,
    RequestHeaders: { 'x-trace': `t-${i}` },
    ResponseHeaders: { 'cache-control': 'no-store' },
    Cookies: { session: 'abc123' },
  }));
}

export async function benchLogs(seconds: number): Promise<string[]> {
  const parsed = parseFilter(FILTER);
  if (!parsed.ok) throw new Error('bench filter does not parse');
  const filter = parsed.filter.where;
  const formatter = createRecordFormatter(OUTPUT);
  const batch = records(100_000);
  const lines: string[] = [];
  const report = (line: string) => {
    lines.push(line);
    console.log(line);
  };

  const measure = async (label: string, each: (record: HttpRequestRecord, out: string[]) => void, flush: (out: string[]) => number | Promise<number>) => {
    let done = 0;
    let bytes = 0;
    const started = performance.now();
    while (performance.now() - started < seconds * 1000) {
      const out: string[] = [];
      for (const record of batch) each(record, out);
      bytes += await flush(out);
      done += batch.length;
    }
    const elapsed = (performance.now() - started) / 1000;
    report(`${label.padEnd(52)} ${(done / elapsed).toFixed(0).padStart(9)} records/s  ${(bytes / elapsed / 1024 / 1024).toFixed(1).padStart(7)} MiB/s out`);
  };

  await measure(
    'filter + sample + fields + rfc3339 + gzip(1), 1 core',
    (record, out) => {
      if (!evaluateFilter(filter, record as unknown as Record<string, unknown>)) return;
      if (!isSampled(record.RayID, 1)) return;
      out.push(formatter.format(record as unknown as Record<string, unknown>));
    },
    (out) => gzipSync(out.join(''), { level: zlib.Z_BEST_SPEED }).length,
  );

  const dir = mkdtempSync(join(tmpdir(), 'edgeport-bench-logs-'));
  try {
    const spool = JobSpool.open(join(dir, 'job'));
    await measure(
      "... appended to a spool (the edge's request path)",
      (record) => {
        if (!evaluateFilter(filter, record as unknown as Record<string, unknown>)) return;
        if (!isSampled(record.RayID, 1)) return;
        spool.append(formatter.format(record as unknown as Record<string, unknown>), record.EdgeStartTimestamp);
      },
      async () => {
        let out = 0;
        for (let b = spool.readBatch(100_000, 100_000_000); b; b = spool.readBatch(100_000, 100_000_000)) {
          out += gzipSync(b.texts.join(''), { level: zlib.Z_BEST_SPEED }).length;
          // Each commit replaces the cursor file durably before the next batch is read, as a shipper does.
          await spool.commit(b);
        }
        return out;
      },
    );
    spool.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}
