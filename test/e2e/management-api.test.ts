/**
 * The management API through `edgeport start`, driven by the official `cloudflare` SDK exactly as
 * a user would: the custom-fields walkthrough of docs/management-api.md (list rulesets, create the entry point only when
 * missing, put rules, read back), then a log job with a nested filter created, listed, updated and
 * deleted through the SDK's own `/logpush/` paths (no custom fetch); errors reach the SDK with
 * edgeport's codes and messages.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Cloudflare from 'cloudflare';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('the cloudflare SDK against edgeport start: walkthrough, log job lifecycle, errors', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const server = await startEdgeport({ owner: t, dataDir: join(dir, 'data'), env: { EDGEPORT_ADMIN_EMAIL: '', EDGEPORT_ADMIN_KEY: '' } });
  const email = /X-Auth-Email: (\S+)/.exec(server.banner)?.[1];
  const key = /X-Auth-Key: +(\S+)/.exec(server.banner)?.[1];
  assert.ok(email && key, `the first account is printed once:\n${server.banner}`);
  const cf = new Cloudflare({
    baseURL: server.urls['management API'],
    apiEmail: email,
    apiKey: key,
    apiToken: null,
    userServiceKey: null,
    maxRetries: 0,
  });

  const accounts = await cf.accounts.list();
  const accountId = accounts.result[0]!.id;
  const zone = await cf.zones.create({ account: { id: accountId }, name: 'sdk.example.test' });

  // The walkthrough: 1. list; 2. create only if missing; 3. put rules; read back.
  const rulesets = await cf.rulesets.list({ zone_id: zone.id });
  let rulesetId = rulesets.result.find((r) => r.kind === 'zone' && r.phase === 'http_log_custom_fields')?.id;
  assert.equal(rulesetId, undefined);
  const created = (await cf.rulesets.create({
    zone_id: zone.id,
    name: 'Zone-level phase entry point',
    kind: 'zone',
    phase: 'http_log_custom_fields',
    description: 'custom fields',
    rules: [],
  })) as { id: string };
  rulesetId = created.id;
  const updated = (await cf.rulesets.update(rulesetId, {
    zone_id: zone.id,
    rules: [
      {
        action: 'log_custom_field',
        expression: 'true',
        description: 'fields',
        action_parameters: { request_fields: [{ name: 'content-type' }], response_fields: [{ name: 'server' }], cookie_fields: [{ name: '__ga' }] },
      },
    ],
  } as Parameters<typeof cf.rulesets.update>[1])) as { version: string; rules: Array<{ action: string }> };
  assert.equal(updated.rules.length, 1);
  assert.equal(updated.rules[0]!.action, 'log_custom_field');
  const entrypoint = await cf.rulesets.phases.get('http_log_custom_fields', { zone_id: zone.id });
  assert.equal(entrypoint.id, rulesetId);
  assert.equal(entrypoint.version, updated.version);

  // A second zone ruleset in the phase is refused, with our code and message.
  await assert.rejects(
    cf.rulesets.create({ zone_id: zone.id, name: 'again', kind: 'zone', phase: 'http_log_custom_fields', rules: [] }),
    (error: unknown) => error instanceof Cloudflare.APIError && error.status === 400 && /20217/.test(JSON.stringify(error.errors)),
  );

  // A log job with X AND (Y OR Z), to an http destination (no ownership challenge; probed).
  const filter = JSON.stringify({
    where: {
      and: [
        { key: 'ClientRequestHost', operator: 'eq', value: 'sdk.example.test' },
        {
          or: [
            { key: 'EdgeResponseStatus', operator: 'geq', value: 500 },
            { key: 'ClientRequestPath', operator: 'startsWith', value: '/api' },
          ],
        },
      ],
    },
  });
  const receiver = (await import('node:http')).createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const destination = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/logs`;
  const job = await cf.logpush.jobs.create({
    zone_id: zone.id,
    name: 'sdk-job',
    destination_conf: destination,
    dataset: 'http_requests',
    filter,
    output_options: { field_names: ['RayID', 'EdgeStartTimestamp', 'ClientIP'], timestamp_format: 'rfc3339', sample_rate: 0.5 },
  });
  assert.ok(job && job.id);
  assert.equal((job as { filter?: string }).filter, filter);
  const listed = [];
  for await (const each of cf.logpush.jobs.list({ zone_id: zone.id })) listed.push(each);
  assert.deepEqual(
    listed.map((j) => j?.id),
    [job.id],
  );
  assert.deepEqual(await cf.logpush.jobs.get(job.id!, { zone_id: zone.id }), job);
  const enabled = await cf.logpush.jobs.update(job.id!, { zone_id: zone.id, enabled: true });
  assert.equal(enabled?.enabled, true);
  await cf.logpush.jobs.delete(job.id!, { zone_id: zone.id });
  const after = [];
  for await (const each of cf.logpush.jobs.list({ zone_id: zone.id })) after.push(each);
  assert.equal(after.length, 0);
  // The SDK's calls went to `/logpush/` as they are (no custom fetch); `logshipping` answers the same.
  const auth = { 'x-auth-email': email, 'x-auth-key': key };
  const both = await Promise.all(
    ['logpush', 'logshipping'].map(async (segment) =>
      (await fetch(`${server.urls['management API']}/zones/${zone.id}/${segment}/jobs`, { headers: auth })).json(),
    ),
  );
  assert.deepEqual(both[0], both[1]);
  // Account-level jobs are not edgeport's: refused by name, saying where the zone's are.
  await assert.rejects(
    cf.logpush.jobs.list({ account_id: accountId }),
    (error: unknown) =>
      error instanceof Cloudflare.APIError &&
      error.status === 403 &&
      /10015.*account-level log jobs; log jobs belong to zones here.*\/zones\/<zone_id>\/logpush\/jobs/.test(JSON.stringify(error.errors)),
  );

  // Wrong credentials: the SDK surfaces our 4xx with its code.
  const stranger = new Cloudflare({
    baseURL: server.urls['management API'],
    apiEmail: email,
    apiKey: 'wrong-key',
    apiToken: null,
    userServiceKey: null,
    maxRetries: 0,
  });
  await assert.rejects(stranger.zones.list(), (error: unknown) => error instanceof Cloudflare.APIError && (error.status === 403 || error.status === 401));
});
