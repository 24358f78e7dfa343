import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApiService } from '../../src/api/index.ts';
import { zoneResult } from '../../src/api/zones/zone-schema.ts';
import { silentLogger } from '../../src/core/log.ts';
import { OriginPolicy } from '../../src/edge/index.ts';
import { ENDPOINT_KEY_ID, ENDPOINT_SECRET, startS3Endpoint } from '../helpers/s3-endpoint.ts';
import { startApi, type ErrorEntry, type Json } from './helpers.ts';

test('accounts and zones through the official SDK', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const cf = api.sdk();
  const accounts = await cf.accounts.list();
  assert.deepEqual(
    accounts.result.map((a) => [a.id, a.name]),
    [[api.admin.accountId, "admin@example.com's Account"]],
  );
  assert.equal((await cf.accounts.get({ account_id: api.admin.accountId })).id, api.admin.accountId);
  const zone = await cf.zones.create({ account: { id: api.admin.accountId }, name: 'Example.COM', type: 'full' });
  assert.equal(zone.name, 'example.com');
  zoneResult.parse(zone);
  assert.deepEqual([zone.status, zone.account.id, (zone as unknown as { origin: string | null }).origin], ['active', api.admin.accountId, null]);
  const patched = await api.call(`/zones/${zone.id}`, { method: 'PATCH', json: { origin: 'http://127.0.0.1:3000' } });
  assert.equal(patched.body.result.origin, 'http://127.0.0.1:3000');
  assert.equal((await api.control.findZoneByName('example.com'))?.origin, 'http://127.0.0.1:3000', 'the edge sees the origin at once');
  assert.equal((await cf.zones.get({ zone_id: zone.id })).name, 'example.com');
  const names: string[] = [];
  for (const name of ['b.test', 'c.test', 'd.test', 'e.test', 'f.test', 'g.test']) await cf.zones.create({ account: { id: api.admin.accountId }, name });
  for await (const z of cf.zones.list({ per_page: 5 })) names.push(z.name);
  assert.deepEqual(names, ['b.test', 'c.test', 'd.test', 'e.test', 'example.com', 'f.test', 'g.test'], 'the SDK pages through all');
  const page2 = await api.call('/zones?per_page=5&page=2&direction=desc');
  assert.deepEqual(page2.body.result_info, { page: 2, per_page: 5, count: 2, total_count: 7, total_pages: 2 });
  assert.deepEqual(
    page2.body.result.map((z: { name: string }) => z.name),
    ['c.test', 'b.test'],
  );
  assert.deepEqual(
    (await api.call('/zones?name=ends_with:.com')).body.result.map((z: { name: string }) => z.name),
    ['example.com'],
  );
  assert.equal((await api.call('/zones?status=pending')).body.result.length, 0);
  assert.equal((await api.call(`/zones?account.id=${'0'.repeat(32)}&name=example.com&match=any`)).body.result.length, 1);
  assert.deepEqual(await cf.zones.delete({ zone_id: zone.id }), { id: zone.id });
  await assert.rejects(cf.zones.get({ zone_id: zone.id }), (error: Json) => error.status === 404 && error.errors[0].code === 7003);
});

test('zone validation: every refusal has its code and pointer, and changes nothing', { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  await api.call('/zones', { method: 'POST', json: { name: 'taken.test' } });
  const cases: Array<[unknown, number, number, string, RegExp]> = [
    [{}, 400, 1002, '/name', /name is required/],
    [{ name: 'localhost' }, 400, 1002, '/name', /'localhost' is not a valid value for name because it is not a valid domain name/],
    [{ name: 'bad_label.test' }, 400, 1002, '/name', /not a valid domain name/],
    [{ name: `${'a'.repeat(64)}.test` }, 400, 1002, '/name', /not a valid domain name/],
    [{ name: 'example.123' }, 400, 1002, '/name', /not a valid domain name/],
    [{ name: 42 }, 400, 1002, '/name', /'42' is not a valid value for name because it must be a string/],
    [{ name: 'TAKEN.test' }, 400, 1061, '/name', /^taken\.test already exists$/],
    [
      { name: 'co.uk' },
      400,
      1099,
      '/name',
      /^We were unable to identify co\.uk as a registered domain: co\.uk is a public suffix, so a zone must be a domain registered under it, such as example\.co\.uk$/,
    ],
    [{ name: 'GitHub.IO' }, 400, 1099, '/name', /^We were unable to identify github\.io as a registered domain: github\.io is a public suffix/],
    [{ name: 'co.uk', origin: 'ftp://x' }, 400, 1002, '/origin', /http:\/\/ or https:\/\//],
    [{ name: 'new.test', account: { id: 'f'.repeat(32) } }, 400, 1002, '/account/id', /is not one of your accounts/],
    [{ name: 'new.test', type: 'partial' }, 400, 1002, '/type', /must be one of "full"/],
    [{ name: 'new.test', origin: 'ftp://x' }, 400, 1002, '/origin', /http:\/\/ or https:\/\//],
    [{ name: 'new.test', origin: 'http://u:p@x' }, 400, 1002, '/origin', /credentials/],
    [{ name: 'new.test', origin: 'not a url' }, 400, 1002, '/origin', /not a URL/],
    [{ name: 'new.test', plan: { id: 'x' } }, 400, 1002, '/plan', /'plan' is not a valid field/],
  ];
  for (const [body, status, code, pointer, message] of cases) {
    const response = await api.call('/zones', { method: 'POST', json: body });
    assert.equal(response.status, status, JSON.stringify(body));
    assert.equal(response.body.success, false);
    assert.ok(
      response.body.errors.some((e: ErrorEntry) => e.code === code && e.source?.pointer === pointer && message.test(e.message)),
      `${JSON.stringify(body)}: ${JSON.stringify(response.body.errors)}`,
    );
  }
  const other = await api.newAccount('other@example.com');
  assert.deepEqual(
    (await api.call('/zones', { method: 'POST', json: { name: 'taken.test' }, as: other })).body.errors,
    [
      {
        code: 1061,
        message: 'taken.test is not available: it, a domain above it or a subdomain of it is a zone of another account; choose another name',
        source: { pointer: '/name' },
      },
    ],
    'names are unique across accounts; the refusal does not say whose, or that it is this very name',
  );
  assert.deepEqual(
    (await api.call('/zones')).body.result.map((z: { name: string }) => z.name),
    ['taken.test'],
  );
  const zoneId = (await api.call('/zones')).body.result[0].id;
  const badPatch = await api.call(`/zones/${zoneId}`, { method: 'PATCH', json: { origin: 'gopher://x', paused: 'yes' } });
  assert.deepEqual(badPatch.body.errors.map((e: ErrorEntry) => e.source?.pointer).sort(), ['/origin', '/paused']);
  assert.equal((await api.control.getZone(api.admin.accountId, zoneId))?.origin, null);
  for (const query of ['per_page=51', 'per_page=4', 'page=0', 'direction=up', 'order=size']) {
    const response = await api.call(`/zones?${query}`);
    assert.deepEqual([response.status, response.body.errors[0].code], [400, 1002], query);
  }
});

test("another account's zone answers exactly like an unknown zone, on every route", { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const mallory = await api.newAccount('mallory@example.com');
  const zoneId = (await api.call('/zones', { method: 'POST', json: { name: 'victim.test' } })).body.result.id;
  await api.call(`/zones/${zoneId}/rulesets/phases/http_log_custom_fields/entrypoint`, { method: 'PUT', json: { rules: [] } });
  const unknown = 'e'.repeat(32);
  const routes: Array<[string, string, unknown?]> = [
    ['GET', ''],
    ['PATCH', '', { paused: true }],
    ['DELETE', ''],
    ['GET', '/rulesets'],
    ['POST', '/rulesets', { name: 'x', kind: 'zone', phase: 'http_log_custom_fields' }],
    ['GET', '/rulesets/phases/http_log_custom_fields/entrypoint'],
    ['PUT', '/rulesets/phases/http_log_custom_fields/entrypoint', { rules: [] }],
    ['GET', '/logshipping/jobs'],
    ['POST', '/logshipping/jobs', { destination_conf: 'https://example.invalid/' }],
    ['POST', '/logshipping/ownership', { destination_conf: 'file:///tmp/x' }],
    ['GET', '/logshipping/datasets/http_requests/fields'],
  ];
  for (const [method, suffix, json] of routes) {
    const theirs = await api.call(`/zones/${zoneId}${suffix}`, { method, as: mallory, ...(json ? { json } : {}) });
    const none = await api.call(`/zones/${unknown}${suffix}`, { method, as: mallory, ...(json ? { json } : {}) });
    assert.equal(theirs.status, 404, `${method} ${suffix}`);
    assert.deepEqual(theirs.body, JSON.parse(JSON.stringify(none.body).replaceAll(unknown, zoneId)), `${method} ${suffix}`);
    assert.deepEqual(theirs.body.errors, [
      { code: 7003, message: `Could not route to /zones/${zoneId}${suffix}, perhaps your object identifier is invalid?` },
      { code: 7000, message: 'No route for that URI' },
    ]);
  }
  assert.equal((await api.call('/zones', { as: mallory })).body.result.length, 0);
  assert.equal((await api.call(`/zones/${zoneId}`)).body.result.paused, false, 'nothing changed');
  assert.equal((await api.call(`/zones/${zoneId}/rulesets`)).body.result.length, 1);
  const malformed = await api.call('/zones/not-an-id');
  assert.deepEqual([malformed.status, malformed.body.errors[0].code], [400, 7003]);
  assert.equal((await api.call(`/accounts/${api.admin.accountId}`, { as: mallory })).status, 404);
});

test('deleting a zone takes its rulesets and jobs with it', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const zoneId = (await api.call('/zones', { method: 'POST', json: { name: 'gone.test' } })).body.result.id;
  await api.call(`/zones/${zoneId}/rulesets/phases/http_log_custom_fields/entrypoint`, {
    method: 'PUT',
    json: { rules: [{ action: 'log_custom_field', expression: 'true', action_parameters: { request_fields: [{ name: 'x-a' }] } }] },
  });
  // A job's s3:// destination is tried when the job is made: a real endpoint.
  const endpoint = await startS3Endpoint(t);
  const job = await api.call(`/zones/${zoneId}/logshipping/jobs`, {
    method: 'POST',
    json: {
      destination_conf: `s3://${endpoint.bucket}/x?region=auto&access-key-id=${ENDPOINT_KEY_ID}&secret-access-key=${encodeURIComponent(ENDPOINT_SECRET)}&endpoint=${endpoint.endpoint}`,
      enabled: true,
    },
  });
  assert.equal(job.status, 200, JSON.stringify(job.body));
  assert.equal((await api.control.listEnabledJobs(zoneId)).length, 1);
  assert.ok(await api.control.getCustomFieldsRule(zoneId));
  assert.equal((await api.call(`/zones/${zoneId}`, { method: 'DELETE' })).status, 200);
  assert.deepEqual([await api.control.getCustomFieldsRule(zoneId), await api.control.listEnabledJobs(zoneId)], [null, []]);
  assert.equal((await api.call('/zones', { method: 'POST', json: { name: 'gone.test' } })).status, 200, 'the name is free again');
});

test('another account cannot create the equal, a subdomain or a parent of a zone; the same account can (official SDK)', { timeout: 60_000 }, async (t) => {
  const api = await startApi(t);
  const bob = await api.newAccount('bob@example.com');
  const [alice, mallory] = [api.sdk(), api.sdk(bob)];
  const create = (cf: typeof alice, name: string) => cf.zones.create({ account: { id: cf === alice ? api.admin.accountId : bob.accountId }, name });
  const refused = async (name: string, code: number, message: string) => {
    await assert.rejects(create(mallory, name), (error: Json) => {
      assert.equal(error.status, 400, name);
      assert.deepEqual(error.errors, [{ code, message, source: { pointer: '/name' } }], name);
      return true;
    });
  };
  const unavailable = (name: string) =>
    `${name} is not available: it, a domain above it or a subdomain of it is a zone of another account; choose another name`;
  await create(alice, 'shop.test');
  await assert.rejects(
    create(alice, 'shop.test'),
    (error: Json) => error.errors[0].message === 'shop.test already exists',
    "the real API's 1061 for the caller's own zone",
  );
  await refused('shop.test', 1061, unavailable('shop.test'));
  await refused('SHOP.test', 1061, unavailable('shop.test'));
  await refused('www.shop.test', 1061, unavailable('www.shop.test'));
  await refused('api.www.shop.test', 1061, unavailable('api.www.shop.test'));
  await create(alice, 'a.b.parent.test');
  await refused('parent.test', 1061, unavailable('parent.test'));
  await refused('b.parent.test', 1061, unavailable('b.parent.test'));
  assert.equal((await mallory.zones.list()).result.length, 0, 'nothing was written for the refused names');

  assert.equal((await create(alice, 'www.shop.test')).name, 'www.shop.test', 'the same account may add a subdomain of its own zone');
  assert.equal((await create(alice, 'parent.test')).name, 'parent.test', '...and a parent of its own zone');
  assert.equal((await create(mallory, 'myshop.test')).name, 'myshop.test', 'a name that merely ends the same way is not a subdomain');
  for (const host of ['www.shop.test', 'api.www.shop.test', 'x.b.parent.test']) {
    let name = host;
    let zone = await api.control.findZoneByName(name);
    while (!zone) {
      name = name.slice(name.indexOf('.') + 1);
      zone = await api.control.findZoneByName(name);
    }
    assert.equal(zone.accountId, api.admin.accountId, `${host} is still served by the account that holds its domain`);
  }
});

test(
  'origins: another account cannot point a zone at an internal address, on create or PATCH; the operator can; allow_private_origins lets everyone',
  { timeout: 60_000 },
  async (t) => {
    const api = await startApi(t);
    const bob = await api.newAccount('bob@example.com');
    const refusedOrigins: Array<[string, RegExp]> = [
      [
        'http://127.0.0.1:3000',
        /because 127\.0\.0\.1 is a loopback address, which only the operator's zones may use as an origin \(the operator can allow private origins for every account with \[edge\] allow_private_origins = true\); point it at a public address or host name$/,
      ],
      ['http://169.254.169.254', /because 169\.254\.169\.254 is a link-local address/],
      ['http://[::ffff:a9fe:a9fe]/latest/meta-data', /because 169\.254\.169\.254 is a link-local address/],
      ['http://10.0.0.7:8080', /private network address/],
      ['http://0.0.0.0:8081', /unspecified/],
      ['http://localhost:8081', /loopback/],
    ];
    for (const [origin, message] of refusedOrigins) {
      const response = await api.call('/zones', { method: 'POST', json: { name: 'bob.test', origin }, as: bob });
      assert.equal(response.status, 400, origin);
      assert.equal(response.body.errors.length, 1);
      assert.deepEqual([response.body.errors[0].code, response.body.errors[0].source], [1002, { pointer: '/origin' }], origin);
      assert.ok(response.body.errors[0].message.startsWith(`'${origin}' is not a valid value for origin because `), response.body.errors[0].message);
      assert.match(response.body.errors[0].message, message, origin);
    }
    assert.equal(await api.control.findZoneByName('bob.test'), null, 'nothing was created');

    const zone = (await api.call('/zones', { method: 'POST', json: { name: 'bob.test', origin: 'http://origin.bob.test:3000' }, as: bob })).body.result;
    assert.equal(zone.origin, 'http://origin.bob.test:3000', 'a host name is checked where the edge connects');
    for (const [origin] of refusedOrigins) {
      const response = await api.call(`/zones/${zone.id}`, { method: 'PATCH', json: { origin }, as: bob });
      assert.deepEqual([response.status, response.body.errors[0].code, response.body.errors[0].source.pointer], [400, 1002, '/origin'], origin);
    }
    assert.equal((await api.control.getZone(bob.accountId, zone.id))?.origin, 'http://origin.bob.test:3000', 'a refused PATCH changes nothing');
    assert.equal((await api.call(`/zones/${zone.id}`, { method: 'PATCH', json: { origin: 'https://203.0.114.9' }, as: bob })).status, 200);
    assert.equal((await api.call(`/zones/${zone.id}`, { method: 'PATCH', json: { origin: null }, as: bob })).status, 200);

    // The operator (the first account) keeps the README's walkthrough: a local origin.
    const own = await api.sdk().zones.create({ account: { id: api.admin.accountId }, name: 'example.test', origin: 'http://127.0.0.1:3000' } as never);
    assert.equal((own as unknown as { origin: string }).origin, 'http://127.0.0.1:3000');
    assert.equal((await api.call(`/zones/${own.id}`, { method: 'PATCH', json: { origin: 'http://169.254.169.254' } })).status, 200);

    // An operator who allows private origins: every account may use them (not edgeport's own listeners).
    const open = await createApiService({
      control: api.control,
      accessKeys: api.accessKeys,
      clock: api.clock,
      logger: silentLogger,
      originPolicy: new OriginPolicy({
        allowPrivateOrigins: true,
        operatorAccountId: async () => api.admin.accountId,
        ownListeners: () => [{ host: '127.0.0.1', port: 8081 }],
      }),
    });
    const patch = (origin: string) =>
      open.fetch(
        new Request(`${api.base}/zones/${zone.id}`, {
          method: 'PATCH',
          headers: { 'x-auth-email': bob.email, 'x-auth-key': bob.key, 'content-type': 'application/json' },
          body: JSON.stringify({ origin }),
        }),
      );
    assert.equal((await patch('http://127.0.0.1:3000')).status, 200);
    const self = await patch('http://127.0.0.1:8081');
    assert.equal(self.status, 400);
    assert.match(((await self.json()) as Json).errors[0].message, /127\.0\.0\.1:8081 may not be used as an origin by this account's zones/);
  },
);

test("a public suffix is no one's zone: co.uk and github.io are refused, names registered under them are not", { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  const bob = await api.newAccount('bob@example.com');
  const post = (name: string, as = api.admin) => api.call('/zones', { method: 'POST', json: { name }, as });
  const suffixRefusal = (suffix: string) => [
    {
      code: 1099,
      message: `We were unable to identify ${suffix} as a registered domain: ${suffix} is a public suffix, so a zone must be a domain registered under it, such as example.${suffix}`,
      source: { pointer: '/name' },
    },
  ];

  // The report's case: Bob's co.uk would have held Alice's shop.co.uk.
  const squat = await post('co.uk', bob);
  assert.deepEqual([squat.status, squat.body.errors], [400, suffixRefusal('co.uk')]);
  assert.equal((await post('shop.co.uk')).status, 200, 'the registrable domain under it is accepted');
  assert.deepEqual((await post('github.io', bob)).body.errors, suffixRefusal('github.io'), "the list's private section counts too");

  // name -> the first error's code, or 200: the Public Suffix List's ICANN and private rules, its
  // wildcards and exceptions, its default rule for unlisted top-level labels (test, localhost,
  // internal: `example.test` is registrable), and subdomains at any depth.
  const cases: Array<[string, number]> = [
    ['example.co.uk', 200],
    ['www.example.co.uk', 200],
    ['alice.github.io', 200],
    ['a.b.example.com', 200],
    ['example.test', 200],
    ['x.localhost', 200],
    ['svc.internal', 200],
    ['example.example', 200],
    ['a.b', 200],
    ['www.ck', 200],
    ['city.kawasaki.jp', 200],
    ['foo.x.compute.amazonaws.com', 200],
    ['org.uk', 1099],
    ['blogspot.com', 1099],
    ['s3.amazonaws.com', 1099],
    ['x.compute.amazonaws.com', 1099],
    ['foo.ck', 1099],
    ['kawasaki.jp', 1099],
    ['any.kawasaki.jp', 1099],
    ['com.au', 1099],
    ['test', 1002],
    ['uk', 1002],
    ['com', 1002],
    ['localhost', 1002],
  ];
  for (const [name, expected] of cases) {
    const response = await post(name, bob);
    assert.equal(response.status === 200 ? 200 : response.body.errors[0].code, expected, `${name}: ${JSON.stringify(response.body.errors)}`);
  }
  const listed = (await api.call('/zones?per_page=50', { as: bob })).body.result.map((z: { name: string }) => z.name).sort();
  assert.deepEqual(
    listed,
    cases
      .filter(([, code]) => code === 200)
      .map(([name]) => name)
      .sort(),
    'nothing was written for a refused name',
  );
});

test('a public-suffix zone made before they were refused holds none of the names under it', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const bob = await api.newAccount('bob@example.com');
  const now = api.clock.now();
  // Written to the store directly, as an older edgeport accepted it.
  assert.equal(
    await api.control.createZone({ id: 'b'.repeat(32), accountId: bob.accountId, name: 'co.uk', origin: null, paused: false, created: now, modified: now }),
    'created',
  );
  const shop = await api.call('/zones', { method: 'POST', json: { name: 'shop.co.uk' } });
  assert.equal(shop.status, 200, JSON.stringify(shop.body.errors));
  assert.equal((await api.control.findZoneByName('shop.co.uk'))?.accountId, api.admin.accountId, 'the edge serves shop.co.uk from its own zone');
  const under = await api.call('/zones', { method: 'POST', json: { name: 'www.shop.co.uk' }, as: bob });
  assert.equal(under.body.errors[0].code, 1061, 'the registrable domain still holds its subdomains');
});

test('a refusal for a name another account holds names none of its zones, nor which of them is in the way', { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  const bob = await api.newAccount('bob@example.com');
  const held = ['private-shop.test', 'hidden.internal-tools.example.com', 'x.y.secret-project.test'];
  for (const name of held) assert.equal((await api.call('/zones', { method: 'POST', json: { name } })).status, 200);
  // The equal name, names under each zone, and names above each zone (down to the registrable domain).
  const attempts = [
    'private-shop.test',
    'www.private-shop.test',
    'a.b.hidden.internal-tools.example.com',
    'internal-tools.example.com',
    'secret-project.test',
    'y.secret-project.test',
  ];
  const templates = new Set<string>();
  for (const name of attempts) {
    const response = await api.call('/zones', { method: 'POST', json: { name }, as: bob });
    assert.equal(response.status, 400, name);
    const [error, ...rest] = response.body.errors as Array<{ code: number; message: string }>;
    assert.deepEqual([error!.code, rest.length], [1061, 0], name);
    const others = error!.message.replaceAll(name, '<name>');
    for (const zone of held) assert.ok(!others.includes(zone), `${name}: ${error!.message} names ${zone}`);
    assert.doesNotMatch(others, /hidden|internal-tools|secret|private|\by\./, `${name}: ${error!.message}`);
    templates.add(others);
  }
  assert.deepEqual(
    [...templates],
    ['<name> is not available: it, a domain above it or a subdomain of it is a zone of another account; choose another name'],
    'one answer whichever of the three it is',
  );
  assert.equal((await api.call('/zones', { as: bob })).body.result.length, 0);
});
