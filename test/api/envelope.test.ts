import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { API_ROUTES } from '../../src/api/index.ts';
import { MAX_BODY_BYTES, startApi, type Json } from './helpers.ts';

const envelope = (code: number, message: string) => ({ result: null, success: false, errors: [{ code, message }], messages: [] });

test('unknown routes, wrong methods, bad JSON and wrong content types get the real codes', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const noRoute = envelope(7000, 'No route for that URI');
  for (const path of ['/nope', '/zones/x/y/z', '/zones/']) assert.deepEqual((await api.call(path)).body, noRoute, path);
  const outside = await fetch(`${api.origin}/client/v3/zones`);
  assert.deepEqual([outside.status, await outside.json()], [400, noRoute]);
  const wrongMethod = await api.call('/zones', { method: 'PUT' });
  assert.deepEqual(
    [wrongMethod.status, wrongMethod.headers.get('allow'), wrongMethod.body],
    [405, 'GET, POST', envelope(7001, 'Method PUT not allowed for this URI: use GET, POST')],
  );

  const post = (body: string, contentType?: string) =>
    api.call('/zones', { method: 'POST', body, headers: contentType ? { 'content-type': contentType } : {} });
  const malformed = await post('{"name": ', 'application/json');
  assert.deepEqual([malformed.status, malformed.body], [400, envelope(6007, 'Malformed JSON in request body')]);
  assert.deepEqual((await post('', 'application/json')).body, envelope(6007, 'Malformed JSON in request body'));
  const invalidUtf8 = await api.call('/zones', { method: 'POST', body: Buffer.from([0x7b, 0xff, 0x7d]), headers: { 'content-type': 'application/json' } });
  assert.equal(invalidUtf8.body.errors[0].code, 6007);
  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
    const response = await post('{"name":"example.com"}', contentType);
    assert.deepEqual(
      [response.status, response.body.errors],
      [
        400,
        [
          {
            code: 6003,
            message: 'Invalid request headers',
            error_chain: [{ code: 6105, message: 'Invalid Content-Type header, valid values are application/json' }],
          },
        ],
      ],
      String(contentType),
    );
  }
  assert.equal((await post('{"name":"example.com"}', 'application/json; charset=utf-8')).status, 200, 'parameters are fine');
  assert.equal((await api.call('/zones')).body.result.length, 1, 'only the accepted request wrote');
});

test('JSON nested more than 64 levels deep is 400 / 6007 before it is parsed, on every route, signed in or not', { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  const tooDeep = envelope(6007, 'Malformed JSON in request body: arrays and objects nest more than 64 levels deep');
  const zones = await api.call('/zones');
  const post = (path: string, body: string, as?: null) =>
    api.call(path, { method: 'POST', body, headers: { 'content-type': 'application/json' }, ...(as === null ? { as } : {}) });
  // 10,000 levels (once a stack overflow and 500 / 10001), in a field, as the whole body, and without credentials.
  for (const body of [`{"name":${nested(10_000)}}`, nested(10_000), `{"name":"deep.example","x":${nested(10_000)}}`, `{"name":${nested(64)}}`]) {
    const answer = await post('/zones', body);
    assert.deepEqual([answer.status, answer.body], [400, tooDeep], body.slice(0, 30));
  }
  assert.deepEqual((await post('/sessions', `{"email":${nested(10_000)},"key":"x"}`, null)).body, tooDeep);
  // 64 levels are JSON like any other: validation answers, with its own code.
  const within = await post('/zones', `{"name":${nested(63)}}`);
  assert.deepEqual([within.status, within.body.errors[0].code], [400, 1002]);
  // Not JSON stays 6007 with its own message, whatever its depth.
  assert.deepEqual((await post('/zones', `${nested(100)}x`)).body, tooDeep, 'too deep before the syntax error');
  assert.deepEqual((await post('/zones', `[[x${nested(100)}`)).body, envelope(6007, 'Malformed JSON in request body'));
  assert.deepEqual((await api.call('/zones')).body.result, zones.body.result, 'nothing was written');
});

test('a body over the limit is refused with 413 before it is read whole', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const url = new URL(`${api.base}/zones`);
  // Declared too large: answered at once, while the client has sent no byte of the body.
  const declared = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(100 * 1024 * 1024),
          'x-auth-email': api.admin.email,
          'x-auth-key': api.admin.key,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => {
          resolve({ status: res.statusCode!, body });
          req.destroy();
        });
      },
    );
    req.on('error', reject);
    req.flushHeaders();
  });
  assert.equal(declared.status, 413);
  assert.deepEqual(JSON.parse(declared.body), envelope(6004, `Request body is too large: at most ${MAX_BODY_BYTES} bytes are accepted`));
  // Streamed without a length and never finished: refused once the limit is passed.
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent > MAX_BODY_BYTES) return new Promise(() => undefined);
      sent += 16 * 1024;
      controller.enqueue(new Uint8Array(16 * 1024).fill(32));
      return undefined;
    },
  });
  const streamed = await fetch(url, {
    method: 'POST',
    body: stream,
    duplex: 'half',
    headers: { 'content-type': 'application/json', 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key },
  } as RequestInit);
  assert.equal(streamed.status, 413);
  assert.equal((await streamed.json()).errors[0].code, 6004);
  const exactly = ' '.repeat(MAX_BODY_BYTES - '{"name":"example.com"}'.length) + '{"name":"example.com"}';
  assert.equal(
    (await api.call('/zones', { method: 'POST', body: exactly, headers: { 'content-type': 'application/json' } })).status,
    200,
    'exactly at the limit',
  );
});

test('/client/v4/openapi.json documents every route from the validating schemas', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const response = await fetch(`${api.base}/openapi.json`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'application/json');
  const doc = (await response.json()) as Json;
  assert.equal(doc.openapi, '3.1.0');
  for (const route of API_ROUTES) {
    const path = `/client/v4${route.path.replace(/:(\w+)(\{\.\+\})?/g, '{$1}')}`;
    const operation = doc.paths[path]?.[route.method.toLowerCase()];
    assert.ok(operation, `${route.method} ${path}`);
    assert.equal(operation.operationId, route.operationId);
    assert.equal(Boolean(operation.requestBody), Boolean(route.body ?? route.rawBody), `${route.operationId} body`);
  }
  const createZone = doc.paths['/client/v4/zones'].post.requestBody.content['application/json'].schema;
  assert.deepEqual([createZone.required, createZone.additionalProperties], [['name'], false]);
  const rule =
    doc.paths['/client/v4/zones/{zone_id}/rulesets/phases/{phase}/entrypoint'].put.requestBody.content['application/json'].schema.properties.rules.items;
  assert.ok(rule.properties.action_parameters.properties.request_fields);
  const job = doc.paths['/client/v4/zones/{zone_id}/logshipping/jobs'].post.requestBody.content['application/json'].schema;
  assert.deepEqual(job.required, ['destination_conf']);
  assert.ok(job.properties.output_options.anyOf.some((s: Json) => s.properties?.['CVE-2021-44228']));
  assert.deepEqual(doc.paths['/client/v4/zones'].get.parameters.find((p: Json) => p.name === 'per_page').schema.maximum, 50);
});

test('a Host header that names no host is 400 / 6003 naming it, on every path, never a 500', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const url = new URL(api.base);
  const send = (path: string, host: string) =>
    new Promise<{ status: number; body: Json }>((resolve, reject) => {
      const req = httpRequest(
        { host: url.hostname, port: url.port, path, headers: { host, 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(body) as Json }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  for (const host of ['127.t.0.1', 'a b', '[::1', 'a/b', 'é', '1.2.3.4.5']) {
    for (const path of ['/client/v4/zones', '/client/v4/nothing-here', '/']) {
      const answer = await send(path, host);
      assert.deepEqual(
        [answer.status, answer.body],
        [
          400,
          envelope(
            6003,
            `Invalid request headers: the Host header ${JSON.stringify(host)} is not a host name with an optional port, such as "example.com" or "example.com:8080".`,
          ),
        ],
        `${host} ${path}`,
      );
    }
  }
  for (const host of [`${url.hostname}:${url.port}`, 'localhost', 'Edgeport.Example.test:8081', '[::1]:8081', '10.0.0.1']) {
    assert.equal((await send('/client/v4/zones', host)).status, 200, host);
  }
});
