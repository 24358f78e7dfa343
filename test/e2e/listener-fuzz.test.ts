/**
 * No request ends the process, and none is answered as a server failure: random, malformed,
 * truncated and cut-off requests thrown at every listener of the real `edgeport start` for a few
 * seconds each, through a configured script on the edge (its body echoed, read, stored in a bucket,
 * a range read, an exception), signed S3 calls with mangled XML bodies and headers, the management
 * API's every operation with random JSON, and random JSON-RPC. Afterwards the process runs,
 * /readyz is 200, and the server logged nothing at error level but the script's own exceptions;
 * the API, S3 and the gateway answered no 500. The run is seeded (EDGEPORT_FUZZ_SEED repeats one):
 * the seed is printed, with the answers' statuses.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasExited } from '../helpers/child-processes.ts';
import { openRaw, statusOf } from '../helpers/raw-connections.ts';
import { startEdgeport, writeScriptConfig } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { ACCESS_KEY_ID, SECRET } from '../store/s3/helpers.ts';
import { signRaw } from '../store/s3/raw-signing.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'fuzz@example.test', EDGEPORT_ADMIN_KEY: 'listener-fuzz-operator-key-0123' };
const SCRIPT = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname.startsWith('/echo')) return new Response(request.body, { headers: { 'x-type': String(request.headers.get('content-type')) } });
    if (url.pathname.startsWith('/text')) return new Response(String((await request.text()).length));
    if (url.pathname.startsWith('/store')) {
      await env.BUCKET.put('k' + (request.headers.get('x-n') ?? ''), request.body ?? 'x');
      return new Response('stored');
    }
    if (url.pathname.startsWith('/get')) {
      const object = await env.BUCKET.get(url.searchParams.get('k') ?? 'k', { range: request.headers, onlyIf: request.headers });
      return new Response(object && 'body' in object ? object.body : null, { status: object ? 200 : 404 });
    }
    if (url.pathname.startsWith('/throw')) throw new Error('thrown on purpose');
    return new Response('hello ' + request.method);
  },
};`;

/** mulberry32: a small seeded generator, so a failing run can be repeated. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Fuzzer {
  pick<T>(items: readonly T[]): T;
  below(n: number): number;
  chance(p: number): boolean;
  mangle(text: string): Buffer;
}

function fuzzer(random: () => number): Fuzzer {
  const below = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[below(items.length)]!;
  const inserts = [
    '<',
    '>',
    '</a>',
    '<![CDATA[',
    '&amp;',
    '&#0;',
    '&#x110000;',
    '<?xml?>',
    '\u0000',
    'é',
    '"',
    '<Part>',
    '</Part>',
    '99999999999999999999',
    '-1',
    '{',
    '[',
    ']',
  ];
  return {
    pick,
    below,
    chance: (p) => random() < p,
    mangle(text) {
      let bytes = Buffer.from(text, 'utf8');
      for (let i = below(4); i > 0 && bytes.length > 0; i--) {
        const at = below(bytes.length);
        const how = below(4);
        if (how === 0) bytes[at] = below(256);
        else if (how === 1) bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + below(20))]);
        else if (how === 2) bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(pick(inserts)), bytes.subarray(at)]);
        else bytes = Buffer.concat([bytes, bytes.subarray(0, below(bytes.length))]);
      }
      return bytes;
    },
  };
}

/**
 * Writes `bytes` on a new connection, perhaps cut short, half-closed at once (`end`) or abandoned
 * after `abandonMs`; resolves with the status line's code ('' for none) once the connection closes.
 */
async function sendRawBytes(port: number, bytes: Buffer, how: { cut: boolean; end: boolean; abandonMs: number | undefined }): Promise<string> {
  const connection = await openRaw(port, { send: how.cut ? bytes.subarray(0, Math.floor(bytes.length / 2)) : bytes });
  const { socket } = connection;
  socket.setTimeout(1_000, () => socket.destroy());
  if (how.end) socket.end();
  if (how.abandonMs !== undefined) setTimeout(() => socket.destroy(), how.abandonMs);
  const status = statusOf((await connection.closed).text);
  return status === 0 ? '' : String(status);
}

/** Runs `one` from `workers` loops until `ms` pass; tallies what each returned. */
async function during(ms: number, workers: number, one: () => Promise<string>): Promise<Record<string, number>> {
  const tally: Record<string, number> = {};
  const until = Date.now() + ms;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < until) {
        const status = await one();
        tally[status] = (tally[status] ?? 0) + 1;
      }
    }),
  );
  return tally;
}

test(
  'malformed, truncated and abandoned requests at every listener: the process runs, /readyz is 200, no error but the script’s own, no 500',
  { timeout: 150_000 },
  async (t) => {
    const seed = Number(process.env.EDGEPORT_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
    t.diagnostic(`seed ${seed} (EDGEPORT_FUZZ_SEED=${seed} repeats this run)`);
    const f = fuzzer(generator(seed));
    const dir = tempDir(t);
    const server = await startEdgeport({
      owner: t,
      dataDir: join(dir, 'data'),
      shedding: false,
      env: { ...ADMIN, EDGEPORT_S3_ACCESS_KEY_ID: ACCESS_KEY_ID, EDGEPORT_S3_SECRET_ACCESS_KEY: SECRET },
      args: writeScriptConfig(dir, { name: 'fuzz', source: SCRIPT, route: 'fuzz.test/*', bucket: 'fuzz-bucket' }),
    });
    const portOf = (label: string) => Number(new URL(server.urls[label]!).port);
    const ports = { edge: portOf('edge'), api: portOf('management API'), gateway: portOf('gateway'), s3: portOf('S3-compatible API') };
    const s3 = server.urls['S3-compatible API']!;
    const api = `${new URL(server.urls['management API']!).origin}/client/v4`;
    const auth = { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY };
    const serverFailures: string[] = [];

    // 1. Raw bytes at every port: methods, targets, headers and bodies that are wrong, cut, or left hanging.
    const methods = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'CONNECT', 'TRACE', 'G\u0000T', ''];
    const targets = [
      '/echo',
      '/text',
      '/store',
      '/get?k=k',
      '/throw',
      '/',
      '/client/v4/zones',
      '/v1/sepolia',
      '/v1/rinkeby',
      '/bucket/key',
      '/bucket?uploads',
      '/%',
      '/%00',
      `/${'a'.repeat(70_000)}`,
      '/readyz',
      '*',
      'http://x/',
      '/bucket?list-type=2&max-keys=-1',
    ];
    const headers = [
      'Content-Length: 5',
      'Content-Length: -1',
      'Content-Length: 99999999999999',
      'Transfer-Encoding: chunked',
      'Transfer-Encoding: gzip, chunked',
      'Expect: 100-continue',
      'Authorization: AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host, Signature=00',
      'x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
      'Content-Type: application/json',
      'Content-Type: multipart/form-data; boundary=x',
      'Range: bytes=5-1',
      'Range: bytes=-0',
      'If-Match: *',
      'Upgrade: websocket',
      'Connection: Upgrade, Keep-Alive',
      'Upgrade: h2c',
      'HTTP2-Settings: AAMAAABkAAQAAP__',
      `Cookie: ${'a'.repeat(9000)}`,
      'x-amz-copy-source: /%ff',
      'Sec-WebSocket-Version: 13',
      `X-Auth-Email: ${ADMIN.EDGEPORT_ADMIN_EMAIL}`,
      `X-Auth-Key: ${ADMIN.EDGEPORT_ADMIN_KEY}`,
    ];
    const hosts = [
      'Host: fuzz.test',
      'Host: 127.0.0.1',
      'Host: 127.t.0.1',
      'Host: a b',
      'Host: x.workers.localhost',
      'Host: pub-00000000000000000000000000000000.r2.localhost',
      'Host: fuzz.test',
      'Host: fuzz.test\r\nHost: other.test',
    ];
    const bodies = [
      '',
      '{',
      '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
      `[${'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},'.repeat(300)}1]`,
      '0\r\n\r\n',
      'zz\r\nabc\r\n',
      `5;${'x'.repeat(5000)}\r\nhello\r\n0\r\n\r\n`,
      `<CompleteMultipartUpload>${'<Part><PartNumber>1</PartNumber></Part>'.repeat(500)}`,
      '<!DOCTYPE a [<!ENTITY b "c">]><a>&b;</a>',
      '\u0000\u0001\u0002'.repeat(1000),
      '['.repeat(10_000),
    ];
    const framing = /^(Content-Length|Transfer-Encoding|Expect|Host):/;
    const raw = await during(8_000, 12, () => {
      if (f.chance(0.4)) {
        // Well framed, to the script: its odd headers and bodies reach workerd and the bucket binding.
        const body = Buffer.from(f.pick(bodies), 'utf8');
        let head = `${f.pick(['GET', 'POST', 'PUT', 'DELETE'])} ${f.pick(['/echo', '/text', '/store', '/get?k=k', '/get?k=k1', '/throw'])} HTTP/1.1\r\nHost: fuzz.test\r\n`;
        for (let i = f.below(5); i > 0; i--) {
          const header = f.pick(headers);
          if (!framing.test(header)) head += `${header}\r\n`;
        }
        head += `x-n: ${f.below(3)}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
        return sendRawBytes(ports.edge, Buffer.concat([Buffer.from(head, 'latin1'), body]), {
          cut: f.chance(0.1),
          end: false,
          abandonMs: f.chance(0.1) ? f.below(100) : undefined,
        });
      }
      let head = `${f.pick(methods)} ${f.pick(targets)} HTTP/1.${f.chance(0.9) ? 1 : 0}\r\n`;
      for (let i = f.below(6); i > 0; i--) head += `${f.pick(headers)}\r\n`;
      if (f.chance(0.9)) head += `${f.pick(hosts)}\r\n`;
      let bytes: Buffer = Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), Buffer.from(f.pick(bodies), 'utf8')]);
      if (f.chance(0.1)) bytes = f.mangle(bytes.toString('latin1'));
      return sendRawBytes(f.chance(0.5) ? ports.edge : f.pick(Object.values(ports)), bytes, {
        cut: f.chance(0.3),
        end: f.chance(0.5),
        abandonMs: f.chance(0.5) ? f.below(300) : undefined,
      });
    });

    // 2. Signed S3 calls: every subresource with a mangled body, odd headers and parameters.
    const xml: Record<string, string> = {
      cors: '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>*</AllowedHeader><MaxAgeSeconds>3000</MaxAgeSeconds></CORSRule></CORSConfiguration>',
      lifecycle:
        '<LifecycleConfiguration><Rule><ID>r</ID><Filter><Prefix>a/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration><Transition><Days>1</Days><StorageClass>STANDARD_IA</StorageClass></Transition></Rule></LifecycleConfiguration>',
      delete: '<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object><Object><Key>b</Key><VersionId>null</VersionId></Object></Delete>',
      tagging: '<Tagging><TagSet><Tag><Key>a</Key><Value>b</Value></Tag></TagSet></Tagging>',
      ownershipControls: '<OwnershipControls><Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule></OwnershipControls>',
      uploadId:
        '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"5d41402abc4b2a76b9719d911017c592"</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part></CompleteMultipartUpload>',
    };
    const s3Headers: Array<[string, string]> = [
      ['x-amz-checksum-crc32', 'AAAAAA=='],
      ['x-amz-checksum-sha256', 'zz'],
      ['x-amz-sdk-checksum-algorithm', 'CRC64NVME'],
      ['content-md5', 'xx'],
      ['if-match', '"abc"'],
      ['if-none-match', '*'],
      ['if-modified-since', 'garbage'],
      ['range', 'bytes=99999999999999999999-'],
      ['x-amz-server-side-encryption-customer-algorithm', 'AES256'],
      ['x-amz-server-side-encryption-customer-key', 'AAAA'],
      ['x-amz-copy-source', '/fuzz-s3/a'],
      ['x-amz-copy-source-range', 'bytes=5-1'],
      ['x-amz-metadata-directive', 'X'],
      ['x-amz-meta-a', '=?UTF-8?B?@@@?='],
      ['x-amz-storage-class', 'GLACIER'],
      ['x-amz-tagging', 'a=b&c'],
      ['x-amz-write-offset-bytes', '5'],
      ['x-amz-checksum-type', 'COMPOSITE'],
    ];
    const queries = [
      '',
      'list-type=2&max-keys=-1',
      'continuation-token=garbage&list-type=2',
      'delimiter=%C3%A9&prefix=a',
      'encoding-type=x',
      'max-uploads=x&uploads=',
      'max-parts=-5&uploadId=zz',
      'partNumber=10001&uploadId=zz',
      'versionId=x',
      'response-content-type=a%01',
      'attributes=',
      'versions=',
      'location=',
    ];
    const keys = ['', 'a', 'b/c', '%C3%A9', 'a'.repeat(1100)];
    const signedStatus = async (method: string, path: string, query: string, extra: Record<string, string>, body?: Buffer): Promise<string> => {
      const signed = signRaw(s3, { method, path, query, headers: extra, at: new Date() });
      const head = `${method} ${path}${query ? `?${query}` : ''} HTTP/1.1\r\n${Object.entries({
        ...signed,
        'content-length': String(body?.length ?? 0),
        connection: 'close',
      })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')}\r\n`;
      return sendRawBytes(ports.s3, Buffer.concat([Buffer.from(head, 'latin1'), body ?? Buffer.alloc(0)]), { cut: false, end: false, abandonMs: undefined });
    };
    assert.equal(await signedStatus('PUT', '/fuzz-s3', '', {}), '200');
    const signed = await during(5_000, 8, async () => {
      const method = f.pick(['GET', 'PUT', 'POST', 'DELETE', 'HEAD']);
      const extra: Record<string, string> = {};
      for (let i = f.below(4); i > 0; i--) {
        const [name, value] = f.pick(s3Headers);
        extra[name] = value;
      }
      let path = f.pick(['/fuzz-s3', `/fuzz-s3/${f.pick(keys)}`, '/', '/nobucket/a']);
      let query = f.pick(queries);
      let body: Buffer | undefined;
      if (method === 'PUT' || method === 'POST') {
        const resource = f.pick(Object.keys(xml));
        if (f.chance(0.6)) {
          query = resource === 'uploadId' ? 'uploadId=zz' : `${resource}=`;
          if (resource === 'uploadId' || resource === 'tagging') path = '/fuzz-s3/a';
          body = f.mangle(xml[resource]!);
        } else body = Buffer.alloc(f.below(200_000), 97);
      }
      const status = await signedStatus(method, path, query, extra, body);
      if (status.startsWith('5') && status !== '501' && status !== '503')
        serverFailures.push(`S3 ${status}: ${method} ${path}?${query} ${JSON.stringify(extra)}`);
      return status;
    });

    // 3. Every API operation with random JSON (and some cut short), as the operator.
    const openapi = (await (await fetch(`${api}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(openapi.paths).flatMap(([path, item]) => Object.keys(item).map((method) => [method.toUpperCase(), path] as const));
    const account = ((await (await fetch(`${api}/accounts`, { headers: auth })).json()) as { result: Array<{ id: string }> }).result[0]!.id;
    const values: unknown[] = [
      null,
      true,
      0,
      -1,
      1e308,
      1.5,
      '',
      'x',
      'a'.repeat(5000),
      '\u0000',
      'é',
      [],
      {},
      'http://127.0.0.1:1/',
      's3://b/p?region=x',
      'file:///tmp/x',
      'ClientIP',
      'http.request.headers["x"]',
      '*',
    ];
    const names = [
      'name',
      'enabled',
      'dataset',
      'destination_conf',
      'output_options',
      'field_names',
      'sample_rate',
      'filter',
      'rules',
      'action',
      'action_parameters',
      'expression',
      'origin',
      'account',
      'pattern',
      'script',
      'type',
      'domain',
      'hostname',
      'max_upload_records',
    ];
    const json = (depth: number): unknown => {
      if (depth > 3 || f.chance(0.4)) return f.pick(values);
      if (f.chance(0.3)) return Array.from({ length: f.below(4) }, () => json(depth + 1));
      return Object.fromEntries(Array.from({ length: f.below(6) }, () => [f.pick(names), json(depth + 1)]));
    };
    const fill = (path: string) =>
      path
        .replace(/^\/client\/v4/, '')
        .replace(/\{([^}]+)\}/g, (_, name: string) => (/account/.test(name) ? account : f.pick(['x', '0'.repeat(32), 'a'.repeat(300), '%25', 'fuzz'])));
    const management = await during(5_000, 6, async () => {
      const [method, path] = f.pick(operations);
      let body: string | undefined;
      if (method !== 'GET' && method !== 'DELETE' && method !== 'HEAD') {
        body = JSON.stringify(json(0));
        if (f.chance(0.1)) body = body.slice(0, f.below(body.length));
      }
      const answer = await fetch(`${api}${fill(path)}`, {
        method,
        headers: { ...auth, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body }),
      });
      const text = await answer.text();
      if (answer.status >= 500 && answer.status !== 503)
        serverFailures.push(`API ${answer.status}: ${method} ${path} ${body?.slice(0, 200)} -> ${text.slice(0, 300)}`);
      return String(answer.status);
    });

    // 4. Random JSON-RPC, single and batched, some cut short.
    const rpcMethods = [
      'eth_chainId',
      'eth_blockNumber',
      'eth_getBalance',
      'eth_call',
      'eth_estimateGas',
      'eth_getLogs',
      'eth_getBlockByNumber',
      'eth_sendRawTransaction',
      'eth_getCode',
      'eth_feeHistory',
      'net_version',
      'eth_subscribe',
      'debug_traceTransaction',
      'x',
    ];
    const rpcParams: unknown[] = [
      'latest',
      'pending',
      '0x0',
      '0x',
      `0x${'f'.repeat(64)}`,
      `0x${'ab'.repeat(20)}`,
      '0xzz',
      -1,
      null,
      {},
      [],
      { to: `0x${'ab'.repeat(20)}`, data: `0x${'5b600056'.repeat(20)}`, gas: '0xffffffffffffffff' },
      { fromBlock: '0x0', toBlock: 'latest', topics: [[null, `0x${'f'.repeat(64)}`]] },
      `0x${'02f8'.repeat(50)}`,
    ];
    const rpcCall = () => ({
      jsonrpc: f.pick(['2.0', '2.0', '1.0', 2]),
      id: f.pick([1, 'a', null, {}]),
      method: f.pick(rpcMethods),
      params: Array.from({ length: f.below(4) }, () => f.pick(rpcParams)),
    });
    const gateway = await during(3_000, 6, async () => {
      let body = f.chance(0.8) ? JSON.stringify(rpcCall()) : JSON.stringify(Array.from({ length: f.below(50) }, rpcCall));
      if (f.chance(0.1)) body = body.slice(0, f.below(body.length));
      const answer = await fetch(`http://127.0.0.1:${ports.gateway}${f.pick(['/v1/sepolia', '/v1/sepolia', '/v1/rinkeby', '/v1/x', '/'])}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await answer.text();
      if (answer.status >= 500 && answer.status !== 503) serverFailures.push(`gateway ${answer.status}: ${body.slice(0, 200)} -> ${text.slice(0, 300)}`);
      return String(answer.status);
    });

    t.diagnostic(`raw bytes at every port: ${JSON.stringify(raw)}`);
    t.diagnostic(`signed S3 calls: ${JSON.stringify(signed)}`);
    t.diagnostic(`management API operations: ${JSON.stringify(management)}`);
    t.diagnostic(`JSON-RPC: ${JSON.stringify(gateway)}`);
    assert.equal(hasExited(server.child), false, 'the server still runs');
    const ready = await fetch(`${new URL(server.urls['management API']!).origin}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    assert.deepEqual(serverFailures, [], `seed ${seed}`);
    const errors = server
      .output()
      .split('\n')
      .filter((line) => /"level":(50|60)/.test(line) && !line.includes('"msg":"Script threw an exception."'));
    assert.deepEqual(errors.slice(0, 10), [], `seed ${seed}: error lines in the server's log`);
  },
);
