/**
 * A request sent to the wrong one of edgeport's four ports is told which port serves it, through
 * the real `edgeport start`: a management API call at the edge (a host that is no zone), JSON-RPC
 * at the edge (viem, as a dapp would send it) and at the API, a gateway path at the API, and a
 * browser opening the S3 address. What belongs where is answered as before.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPublicClient, http } from 'viem';
import { sepolia } from 'viem/chains';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'ports@example.test', EDGEPORT_ADMIN_KEY: 'wrong-port-key-0123456789abcdef' };
const CHAIN_ID = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';

test('each listener names the right port to a request meant for another one', { timeout: 120_000 }, async (t) => {
  const server = await startEdgeport({ dataDir: tempDir(t), env: ADMIN, owner: t });
  const edge = server.urls.edge!;
  const api = new URL(server.urls['management API']!).origin;
  const gateway = new URL(server.urls.gateway!).origin;
  const s3 = server.urls['S3-compatible API']!;
  const portOf = (url: string) => new URL(url).port;

  // The management API's path at the edge: the edge's plain-text error, naming the API's port and the same path there.
  const apiAtEdge = await fetch(`${edge}/client/v4/zones?name=example.test`, {
    headers: { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY },
  });
  assert.equal(apiAtEdge.status, 530);
  const apiAtEdgeText = await apiAtEdge.text();
  assert.match(
    apiAtEdgeText,
    /^error 1001: no zone on this edgeport serves the host "127\.0\.0\.1"\. This port is edgeport's edge, which serves zones' traffic: /,
  );
  assert.ok(
    apiAtEdgeText.includes(`the management API listens on port ${portOf(api)}. Send the request to ${api}/client/v4/zones?name=example.test.`),
    apiAtEdgeText,
  );

  // JSON-RPC at the edge, from viem: its error carries the edge's answer, which names the gateway.
  const client = createPublicClient({ chain: sepolia, transport: http(`${edge}/v1/sepolia`, { retryCount: 0 }) });
  const rejected = await client.getChainId().then(
    () => undefined,
    (error: unknown) => error as Error,
  );
  assert.ok(rejected, 'the edge serves no JSON-RPC');
  assert.ok(
    rejected.message.includes(
      `JSON-RPC goes to the gateway, which listens on port ${portOf(gateway)}. POST it to ${gateway}/v1/<network>, such as ${gateway}/v1/sepolia.`,
    ),
    rejected.message,
  );

  // JSON-RPC at the API, at its root and at the gateway's path: the envelope's 400 / 7000, naming the gateway.
  const named = `No route for that URI: this port is edgeport's management API; JSON-RPC goes to the gateway, which listens on port ${portOf(gateway)}: POST it to ${gateway}/v1/<network>, such as ${gateway}/v1/sepolia`;
  for (const path of ['/', '/v1/sepolia', '/client/v4']) {
    const answer = await fetch(`${api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: CHAIN_ID });
    assert.equal(answer.status, 400, path);
    assert.deepEqual(((await answer.json()) as { errors: unknown }).errors, [{ code: 7000, message: named }], path);
  }
  const gatewayPathAtApi = await fetch(`${api}/v1/sepolia`);
  assert.deepEqual(
    ((await gatewayPathAtApi.json()) as { errors: unknown }).errors,
    [{ code: 7000, message: named }],
    'a gateway path, whatever its method or body',
  );

  // A browser opening the S3 address: S3's XML AccessDenied, naming the dashboard.
  const browser = await fetch(`${s3}/`, { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
  assert.equal(browser.status, 403);
  assert.match(
    await browser.text(),
    new RegExp(
      `<Code>AccessDenied</Code><Message>This port is the S3-compatible API of edgeport, for S3 clients, which sign every request \\(AWS Signature Version 4\\)\\. To browse buckets in a browser, open the dashboard: ${api}/\\.</Message>`,
    ),
  );

  // What is not meant for another port keeps its answer.
  const noZone = await fetch(`${edge}/hello`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"hello":"world"}' });
  assert.match(
    await noZone.text(),
    /^error 1001: no zone on this edgeport serves the host "127\.0\.0\.1"\. Create the zone \(POST \/client\/v4\/zones\) or fix the Host header\.\n/,
  );
  const unknownApiPath = await fetch(`${api}/client/v4/nothing-here`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name":"x"}',
  });
  assert.deepEqual(((await unknownApiPath.json()) as { errors: unknown }).errors, [{ code: 7000, message: 'No route for that URI' }]);
  const unsigned = await fetch(`${s3}/`);
  assert.equal(unsigned.status, 403);
  assert.match(await unsigned.text(), /<Message>Missing authentication: sign the request with AWS Signature Version 4/);
  const rpc = await fetch(`${gateway}/v1/sepolia`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: CHAIN_ID });
  assert.deepEqual(await rpc.json(), { jsonrpc: '2.0', id: 1, result: '0xaa36a7' });
});
