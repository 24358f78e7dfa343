/** The JSON-RPC 2.0 envelope over HTTP: every error of the spec, ids, batches, notifications, limits. */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { before, test } from 'node:test';
import { rpc, startGateway, type RunningGateway } from './helpers.ts';

let gateway: RunningGateway;
before(
  async (t) => {
    gateway = await startGateway(t as never, { section: { max_body_bytes: 4096, max_batch_items: 5 } });
  },
  { timeout: 30_000 },
);

const SEPOLIA = '/v1/sepolia';

test('a single call answers one object with HTTP 200 and application/json', { timeout: 10_000 }, async () => {
  const answer = await gateway.post(SEPOLIA, rpc('eth_chainId', [], 7));
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get('content-type'), 'application/json');
  assert.deepEqual(answer.json, { jsonrpc: '2.0', id: 7, result: '0xaa36a7' });
});

test('ids are echoed exactly: strings, numbers, null, fractions and integers beyond 2^53', { timeout: 10_000 }, async () => {
  for (const id of ['"abc"', '"1"', '0', '-5', '1.5', 'null', '"ü\\u00e9"', '123456789012345678901234567890', '9007199254740993']) {
    const answer = await gateway.post(SEPOLIA, `{"jsonrpc":"2.0","method":"eth_chainId","id":${id}}`);
    assert.equal(answer.text, `{"jsonrpc":"2.0","id":${id === '"ü\\u00e9"' ? '"üé"' : id},"result":"0xaa36a7"}`, `id ${id}`);
  }
});

test('params may be omitted (treated as []), and named params are refused with -32602', { timeout: 10_000 }, async () => {
  assert.equal((await gateway.post(SEPOLIA, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' })).json.result, '0x0');
  const named = await gateway.post(SEPOLIA, { jsonrpc: '2.0', id: 2, method: 'eth_getBalance', params: { address: '0x00' } });
  assert.equal(named.status, 200);
  assert.equal(named.json.error.code, -32602);
  assert.match(named.json.error.message, /positional params; send "params" as an array/);
});

test('-32700: a body that is not JSON gets one error object with id null', { timeout: 10_000 }, async () => {
  for (const body of ['{', '{"jsonrpc":"2.0",', 'nope', '']) {
    const answer = await gateway.post(SEPOLIA, body);
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the request body is not valid JSON.' } });
  }
});

test('-32600: malformed requests, each with a message naming the problem', { timeout: 10_000 }, async () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['a number', 1, /body must be a request object or a batch/],
    ['a string', '"x"', /body must be a request object or a batch/],
    ['no jsonrpc', { id: 1, method: 'eth_chainId' }, /"jsonrpc" must be the string "2.0", got nothing/],
    ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'eth_chainId' }, /"jsonrpc" must be the string "2.0", got "1.0"/],
    ['jsonrpc as a number', { jsonrpc: 2.0, id: 1, method: 'eth_chainId' }, /got 2/],
    ['no method', { jsonrpc: '2.0', id: 1 }, /"method" must be a string, got nothing/],
    ['method as a number', { jsonrpc: '2.0', id: 1, method: 5 }, /"method" must be a string, got the number 5/],
    ['params as a string', { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: 'x' }, /"params" must be an array/],
    ['id as an object', { jsonrpc: '2.0', id: { a: 1 }, method: 'eth_chainId' }, /"id" must be a string, a number or null/],
  ];
  for (const [name, body, message] of cases) {
    const answer = await gateway.post(SEPOLIA, typeof body === 'string' ? body : JSON.stringify(body));
    assert.equal(answer.status, 200, name);
    assert.equal(answer.json.error.code, -32600, name);
    assert.match(answer.json.error.message, message, name);
    // The id is echoed when it could be read, else null.
    const expectedId = typeof body === 'object' && body !== null && 'id' in body && typeof (body as { id: unknown }).id === 'number' ? 1 : null;
    assert.equal(answer.json.id, expectedId, name);
  }
});

test('-32600: an empty batch is one error object, not an array', { timeout: 10_000 }, async () => {
  const answer = await gateway.post(SEPOLIA, '[]');
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.json, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: 'Invalid request: empty batch. A batch is a non-empty array of request objects.' },
  });
});

test('-32601: unknown methods, and refused ones with the reason and the way out', { timeout: 10_000 }, async () => {
  const unknown = await gateway.post(SEPOLIA, rpc('eth_frobnicate'));
  assert.deepEqual(unknown.json.error, { code: -32601, message: 'The method eth_frobnicate does not exist/is not available.' });
  for (const [method, reason] of [
    ['eth_sendTransaction', /sign the transaction in the client and send it with eth_sendRawTransaction/i],
    ['eth_sign', /accounts held by the node/],
    ['personal_unlockAccount', /accounts held by the node/],
    ['admin_peers', /administers or inspects the node/],
    ['debug_traceTransaction', /administers/],
    ['miner_start', /administers/],
    ['hardhat_setBalance', /controls a development node/],
    ['evm_mine', /controls a development node/],
    ['evm_snapshot', /development node/],
    ['eth_newFilter', /Poll eth_getLogs/],
    ['eth_subscribe', /filters and subscriptions/],
  ] as const) {
    const answer = await gateway.post(SEPOLIA, rpc(method));
    assert.equal(answer.status, 200);
    assert.equal(answer.json.error.code, -32601, method);
    assert.match(answer.json.error.message, new RegExp(`^The method ${method} is refused by this gateway: `), method);
    assert.match(answer.json.error.message, reason, method);
  }
});

test("-32602: the real gateway's parameter limits, and the chain's own params errors", { timeout: 10_000 }, async () => {
  const logs = await gateway.post(SEPOLIA, rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x320' }]));
  assert.equal(logs.json.error.code, -32602);
  assert.match(logs.json.error.message, /eth_getLogs is limited to 800 blocks per query; blocks 0 to 800 are 801/);
  assert.deepEqual((await gateway.post(SEPOLIA, rpc('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x320' }]))).json.result, []);
  // A range ending at `latest` is measured against the chain's head (0 here): within the limit.
  assert.deepEqual((await gateway.post(SEPOLIA, rpc('eth_getLogs', [{ fromBlock: 'earliest' }]))).json.result, []);
  const fees = await gateway.post(SEPOLIA, rpc('eth_feeHistory', ['0xb', 'latest', [50]]));
  assert.equal(fees.json.error.code, -32602);
  assert.match(fees.json.error.message, /eth_feeHistory covers at most 10 blocks per call; asked for 11/);
  assert.ok((await gateway.post(SEPOLIA, rpc('eth_feeHistory', [10, 'latest', [50]]))).json.result.baseFeePerGas);
  const badAddress = await gateway.post(SEPOLIA, rpc('eth_getBalance', ['0x12', 'latest']));
  assert.equal(badAddress.json.error.code, -32602);
  assert.equal(badAddress.json.error.data, undefined, "the chain's echo of the request is not passed on");
});

test('a revert comes back in geth\'s shape: code 3, "execution reverted: <reason>", revert bytes in data', { timeout: 10_000 }, async () => {
  const reason = '08c379a0' + '20'.padStart(64, '0') + '4'.padStart(64, '0') + '6e6f7065'.padEnd(64, '0');
  const answer = await gateway.post(SEPOLIA, rpc('eth_call', [{ data: `0x6064600c6000396064${'6000fd'}${reason}` }, 'latest']));
  assert.deepEqual(answer.json.error, { code: 3, message: 'execution reverted: nope', data: `0x${reason}` });
  const bare = await gateway.post(SEPOLIA, rpc('eth_call', [{ data: '0x60006000fd' }, 'latest']));
  assert.deepEqual(bare.json.error, { code: -32000, message: 'execution reverted' });
});

test('a batch answers every member in order, each with its own id; invalid members do not spoil the others', { timeout: 10_000 }, async () => {
  const answer = await gateway.post(
    SEPOLIA,
    JSON.stringify([
      rpc('eth_chainId', [], 'a'),
      { jsonrpc: '2.0', method: 'eth_blockNumber' },
      1,
      rpc('evm_mine', [], 'b'),
      { jsonrpc: '1.0', id: 'c', method: 'eth_chainId' },
    ]),
  );
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.json, [
    { jsonrpc: '2.0', id: 'a', result: '0xaa36a7' },
    { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request: a batch member must be a request object, got the number 1.' } },
    { jsonrpc: '2.0', id: 'b', error: { code: -32601, message: 'The method evm_mine is refused by this gateway: it controls a development node.' } },
    { jsonrpc: '2.0', id: 'c', error: { code: -32600, message: 'Invalid request: "jsonrpc" must be the string "2.0", got "1.0".' } },
  ]);
  assert.deepEqual(await gateway.post(SEPOLIA, '[1]').then((a) => a.json.length), 1);
});

test('notifications get no answer: a lone one or a batch of them gets 204 and no body', { timeout: 10_000 }, async () => {
  const single = await gateway.post(SEPOLIA, { jsonrpc: '2.0', method: 'eth_chainId' });
  assert.equal(single.status, 204);
  assert.equal(single.text, '');
  const batch = await gateway.post(SEPOLIA, [
    { jsonrpc: '2.0', method: 'eth_chainId' },
    { jsonrpc: '2.0', method: 'no_such_method' },
  ]);
  assert.equal(batch.status, 204);
  assert.equal(batch.text, '');
  // `"id": null` is not a notification.
  assert.deepEqual((await gateway.post(SEPOLIA, rpc('eth_chainId', [], null))).json, { jsonrpc: '2.0', id: null, result: '0xaa36a7' });
});

test('a batch over max_batch_items gets one error object with id null, naming the limit; no member runs', { timeout: 10_000 }, async () => {
  const before = gateway.service.networks().find((n) => n.name === 'sepolia')!.requests;
  const members = Array.from({ length: 6 }, (_, i) => rpc('eth_chainId', [], i));
  const answer = await gateway.post(SEPOLIA, members);
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.json, {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'Invalid request: the batch has more than 5 members; this gateway accepts at most 5 per batch. Split it into batches of at most 5.',
    },
  });
  // Refused as member 6 begins: what follows it is not looked at, valid JSON or not.
  assert.deepEqual((await gateway.post(SEPOLIA, '[1,2,3,4,5,6 this is not JSON')).json.error.code, -32600);
  assert.equal(gateway.service.networks().find((n) => n.name === 'sepolia')!.requests, before, 'nothing was counted or run');
  assert.equal((await gateway.post(SEPOLIA, members.slice(0, 5))).json.length, 5);
});

test('JSON nested deeper than 64 levels is one -32600 error object, never an internal error', { timeout: 30_000 }, async (t) => {
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  // A request object (1 level) and its params array (1) leave 62 levels for what params hold:
  // that reaches the chain, which says what it thinks of such params.
  const within = await gateway.post(SEPOLIA, `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":[${nested(62)}]}`);
  assert.equal(within.json.error.code, -32602, JSON.stringify(within.json));
  const expected = {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message:
        'Invalid request: the body nests arrays and objects more than 64 levels deep; this gateway accepts at most 64 (Ethereum requests need fewer than 10). Send params without the extra nesting.',
    },
  };
  for (const levels of [63, 2000]) {
    const answer = await gateway.post(SEPOLIA, `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":[${nested(levels)}]}`);
    assert.deepEqual([answer.status, answer.json], [200, expected], `${levels} levels`);
  }
  const inBatch = await gateway.post(SEPOLIA, `[${JSON.stringify(rpc('eth_chainId'))},{"jsonrpc":"2.0","id":2,"method":"eth_call","params":[${nested(62)}]}]`);
  assert.deepEqual(inBatch.json, expected, 'a batch with a member too deep is refused whole: the batch level counts too');
  // 100,000 levels under the default body limit (once -32603 from a stack overflow).
  const defaults = await startGateway(t as never);
  for (const method of ['eth_getBalance', 'eth_call', 'eth_getLogs']) {
    const answer = await defaults.post(SEPOLIA, `{"jsonrpc":"2.0","id":1,"method":"${method}","params":[${nested(100_000)}]}`);
    assert.deepEqual([answer.status, answer.json], [200, expected], method);
  }
  for (const origin of [gateway.origin, defaults.origin]) {
    assert.doesNotMatch(await (await fetch(`${origin}/metrics`)).text(), /edgeport_unmapped_errors_total\{[^}]*\} [1-9]/);
  }
});

test('a body of more than 100 JSON values per allowed batch member is one -32600 error object', { timeout: 10_000 }, async () => {
  // max_batch_items 5: 500 values; the request object and its jsonrpc, id, method and params are 5.
  const call = (values: number) => `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":[${Array(values).fill('1').join(',')}]}`;
  assert.equal((await gateway.post(SEPOLIA, call(495))).json.error.code, -32602, 'within the limit, the chain judges the params');
  const answer = await gateway.post(SEPOLIA, call(496));
  assert.deepEqual(
    [answer.status, answer.json],
    [
      200,
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message:
            'Invalid request: the body holds more than 500 JSON values (numbers, strings, arrays, objects, ...); this gateway accepts at most 500 per body. Send fewer or smaller params, or split the batch.',
        },
      },
    ],
  );
});

test('a body over max_body_bytes gets 413 with a JSON-RPC error, declared or chunked', { timeout: 10_000 }, async () => {
  const big = JSON.stringify(rpc('eth_call', [{ data: `0x${'00'.repeat(3000)}` }, 'latest']));
  const declared = await gateway.post(SEPOLIA, big);
  assert.equal(declared.status, 413);
  assert.equal(declared.json.error.code, -32600);
  assert.match(declared.json.error.message, /larger than 4096 bytes/);
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      `${gateway.origin}${SEPOLIA}`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.write(big.slice(0, 3000));
    req.end(big.slice(3000));
  });
  assert.equal(chunked.status, 413);
  assert.match(JSON.parse(chunked.body).error.message, /larger than 4096 bytes/);
});

test('wrong paths, HTTP methods and content types get 404/405/415 with a JSON-RPC error body', { timeout: 10_000 }, async () => {
  for (const path of ['/', '/v1', '/v1/', '/v2/sepolia', '/v1/sepolia/extra']) {
    const answer = await gateway.post(path, rpc('eth_chainId'));
    assert.equal(answer.status, 404, path);
    assert.equal(answer.json.error.code, -32600, path);
    assert.match(answer.json.error.message, /Send JSON-RPC requests to POST \/v1\/<network>/, path);
  }
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const response = await fetch(`${gateway.origin}${SEPOLIA}`, { method });
    assert.equal(response.status, 405, method);
    assert.equal(response.headers.get('allow'), 'POST, OPTIONS');
    assert.match((await response.json()).error.message, new RegExp(`HTTP method ${method} is not allowed on /v1/sepolia: send JSON-RPC requests with POST`));
  }
  const form = await gateway.post(SEPOLIA, rpc('eth_chainId'), { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(form.status, 415);
  assert.match(form.json.error.message, /Unsupported content type "application\/x-www-form-urlencoded"/);
  for (const type of ['application/json; charset=utf-8', 'text/plain', 'application/json-rpc']) {
    assert.equal((await gateway.post(SEPOLIA, rpc('eth_chainId'), { 'content-type': type })).json.result, '0xaa36a7', type);
  }
  const noType = await fetch(`${gateway.origin}${SEPOLIA}`, { method: 'POST', body: new Blob([JSON.stringify(rpc('eth_chainId'))]) });
  assert.equal((await noType.json()).result, '0xaa36a7');
  assert.equal((await gateway.post(`${SEPOLIA}/?key=x`, rpc('eth_chainId'))).json.result, '0xaa36a7');
});

test('CORS: answers allow any origin, and preflights are answered', { timeout: 10_000 }, async () => {
  const preflight = await fetch(`${gateway.origin}${SEPOLIA}`, { method: 'OPTIONS', headers: { 'access-control-request-headers': 'content-type, x-custom' } });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-methods'), 'POST, OPTIONS');
  assert.equal(preflight.headers.get('access-control-allow-headers'), 'content-type, x-custom');
  assert.equal((await gateway.post(SEPOLIA, rpc('eth_chainId'))).headers.get('access-control-allow-origin'), '*');
});

test('/metrics exposes call, cache and HTTP counters in Prometheus text', { timeout: 10_000 }, async () => {
  await gateway.post(SEPOLIA, rpc('net_version'));
  await gateway.post(SEPOLIA, rpc('net_version'));
  const response = await fetch(`${gateway.origin}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await response.text();
  assert.match(text, /edgeport_gateway_calls_total\{network="sepolia",method="net_version",outcome="cache_hit"\} [1-9]/);
  assert.match(text, /edgeport_gateway_http_responses_total\{status="200"\} \d+/);
  assert.match(text, /edgeport_gateway_cache_entries [1-9]/);
  assert.match(text, /edgeport_gateway_calls_total\{network="sepolia",method="other",outcome="rejected"\}/, 'unknown method names are not labels');
  assert.doesNotMatch(text, /eth_frobnicate/);
  assert.doesNotMatch(text, /edgeport_unmapped_errors_total\{[^}]*\} [1-9]/);
  assert.equal((await fetch(`${gateway.origin}/metrics`, { method: 'POST' })).status, 405);
});
