/**
 * Every route the official SDK (7.3, the devDependency) declares for the groups edgeport implements
 * (test/helpers/sdk-routes.ts reads them from the SDK's resource files, so a new SDK release shows
 * what it added) is either served or answered by name with `403 / 10015 not entitled: edgeport
 * does not provide ...`; none gets the generic 7000 (no route) or 7001 (method not allowed). Each
 * is called on a live API with the admin's credentials; the test prints the counts and the
 * features refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { API_ROUTES, LOGPUSH_ALIASES } from '../../src/api/app.ts';
import { fillTemplate, sdkRoutes } from '../helpers/sdk-routes.ts';
import { startApi } from './helpers.ts';

const SERVED = [...API_ROUTES, ...LOGPUSH_ALIASES].map((route) => ({
  method: route.method,
  pattern: new RegExp(`^${route.path.replace(/:\w+\{\.\+\}/g, '.+').replace(/:\w+/g, '[^/]+')}$`),
}));

test('every SDK route of the implemented groups is served or refused by name', { timeout: 120_000 }, async (t) => {
  const api = await startApi(t);
  const zone = (await api.call('/zones', { method: 'POST', json: { name: 'route-table.test' } })).body.result.id as string;
  const routes = sdkRoutes();
  assert.ok(routes.length > 200, `the SDK's resource files were read (${routes.length} routes)`);
  const served: string[] = [];
  const refused = new Map<string, string[]>();
  const generic: string[] = [];
  for (const route of routes) {
    const path = fillTemplate(route.template, { account: api.admin.accountId, zone }, { bucketName: 'test-bucket', bucket_name: 'test-bucket' });
    const inTable = SERVED.some((candidate) => candidate.method === route.method && candidate.pattern.test(path));
    const answer = await api.call(path, { method: route.method, ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { json: {} }) });
    const code = answer.body?.errors?.[0]?.code as number | undefined;
    if (code === 7000 || code === 7001 || answer.status === 405) {
      generic.push(`${route.name}: ${route.method} ${route.template} -> ${answer.status} / ${code}`);
    } else if (code === 10015 && answer.status === 403) {
      assert.ok(!inTable, `${route.name} is served, yet refused`);
      const feature = /edgeport does not provide (.+?)(;|$)/.exec(answer.body.errors[0].message)?.[1] ?? '?';
      refused.set(feature, [...(refused.get(feature) ?? []), route.name]);
    } else {
      assert.ok(inTable, `${route.name}: ${route.method} ${path} answered ${answer.status} without a route of the table`);
      served.push(route.name);
    }
  }
  const refusedCount = [...refused.values()].reduce((sum, names) => sum + names.length, 0);
  console.log(
    `SDK routes of the implemented groups: ${routes.length}; served ${served.length}; refused by name ${refusedCount}; generic 7000/7001 ${generic.length}`,
  );
  for (const [feature, names] of [...refused].sort((a, b) => b[1].length - a[1].length))
    console.log(`  refused (${names.length}): ${feature}: ${names.join(', ')}`);
  assert.deepEqual(generic, [], 'no SDK route gets the generic 7000 / 7001');
});

test('a path the platform does not have either still answers 7000; a known path with another method 405', { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const unknown = await api.call('/no/such/thing');
  assert.deepEqual([unknown.status, unknown.body.errors[0].code], [400, 7000]);
  const wrongMethod = await api.call('/zones', { method: 'DELETE' });
  assert.deepEqual([wrongMethod.status, wrongMethod.body.errors[0].code], [405, 7001]);
  const kv = await api.call(`/accounts/${api.admin.accountId}/storage/kv/namespaces`, { method: 'POST', json: { title: 'x' } });
  assert.equal(kv.status, 403);
  assert.deepEqual(kv.body.errors, [{ code: 10015, message: 'not entitled: edgeport does not provide Workers KV' }]);
  const listed = await api.call(`/accounts/${api.admin.accountId}/storage/kv/namespaces`);
  assert.deepEqual([listed.status, listed.body.result], [200, []], 'the list an account here has none of answers empty');
  const accountJobs = await api.call(`/accounts/${api.admin.accountId}/logpush/jobs`);
  assert.equal(accountJobs.status, 403);
  assert.match(accountJobs.body.errors[0].message, /account-level log jobs; log jobs belong to zones here: use \/client\/v4\/zones\/<zone_id>\/logpush\/jobs/);
});
