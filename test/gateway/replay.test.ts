/** Repeated bodies of cached calls are answered from the replay index: same answer, same headers, still rate limited. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { rpc, startGateway, type HttpAnswer } from './helpers.ts';

test('the same body of a final call is replayed byte for byte; the same call with another id is replayed with that id', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t, { section: { rate_limit: { requests_per_second: 0 } } });
  const body = rpc('eth_getBlockByNumber', ['0x0', false], 7);
  // The answer is cached once the chain's finalized head is known (after the first call), then
  // its whole response is kept for this body.
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await gateway.post('/v1/sepolia', body));
  const [first, , third, fourth] = answers as [(typeof answers)[0], unknown, (typeof answers)[0], (typeof answers)[0]];
  assert.equal(first.headers.get('x-edgeport-cache'), 'MISS');
  assert.deepEqual(
    [third, fourth].map((answer) => answer.headers.get('x-edgeport-cache')),
    ['HIT', 'HIT'],
  );
  for (const answer of answers) assert.equal(answer.text, first.text, 'the replayed answer is the same text');
  assert.equal(fourth.headers.get('content-length'), String(Buffer.byteLength(first.text)));
  assert.equal(fourth.json.id, 7);

  const otherId = await gateway.post('/v1/sepolia', rpc('eth_getBlockByNumber', ['0x0', false], 'eight'));
  assert.equal(otherId.headers.get('x-edgeport-cache'), 'HIT');
  assert.equal(otherId.text, first.text.replace('"id":7', '"id":"eight"'));
  assert.equal(otherId.headers.get('content-length'), String(Buffer.byteLength(otherId.text)));

  // Answers that are never cached are never replayed.
  const gasPrice = rpc('eth_gasPrice', [], 1);
  await gateway.post('/v1/sepolia', gasPrice);
  assert.equal((await gateway.post('/v1/sepolia', gasPrice)).headers.get('x-edgeport-cache'), 'BYPASS');

  const metrics = await (await fetch(`${gateway.origin}/metrics`)).text();
  assert.match(metrics, /edgeport_gateway_calls_total\{network="sepolia",method="eth_getBlockByNumber",outcome="cache_hit"\} [34]/);
});

test('replayed answers still take rate-limit tokens', { timeout: 10_000 }, async (t) => {
  const clock = new FakeClock();
  const gateway = await startGateway(t, { clock, section: { rate_limit: { requests_per_second: 1, burst: 3 } } });
  const body = rpc('eth_chainId', [], 1);
  for (let i = 0; i < 3; i++) assert.equal((await gateway.post('/v1/sepolia', body)).status, 200);
  const limited = await gateway.post('/v1/sepolia', body);
  assert.equal(limited.status, 429);
  assert.equal(limited.json.error.code, -32005);
  clock.advance(1000);
  const again = await gateway.post('/v1/sepolia', body);
  assert.equal(again.status, 200);
  assert.equal(again.headers.get('x-edgeport-cache'), 'HIT');
});

test('a client numbering its calls gets replays with its own ids; ids the key cannot hold are answered as sent', { timeout: 10_000 }, async (t) => {
  const gateway = await startGateway(t, { section: { rate_limit: { requests_per_second: 0 } } });
  const answers: HttpAnswer[] = [];
  for (let id = 1; id <= 6; id++) answers.push(await gateway.post('/v1/sepolia', rpc('eth_getBlockByNumber', ['0x0', false], id * 99_999)));
  assert.deepEqual(
    answers.map((answer) => answer.headers.get('x-edgeport-cache')),
    ['MISS', 'MISS', 'HIT', 'HIT', 'HIT', 'HIT'],
    'cached once the finalized head is known, as above',
  );
  answers.forEach((answer, i) => {
    assert.equal(answer.text, answers[0]!.text.replace('"id":99999', `"id":${(i + 1) * 99_999}`));
    assert.equal(answer.headers.get('content-length'), String(answer.text.length));
  });
  // Ids echoed from the body's own text (a big integer), an escaped string id, an id after the params, a duplicate id (the last counts).
  const cases: Array<[string, string]> = [
    ['{"jsonrpc":"2.0","id":123456789012345678901,"method":"eth_getBlockByNumber","params":["0x0",false]}', '123456789012345678901'],
    ['{"jsonrpc":"2.0","id":"\\u0041","method":"eth_getBlockByNumber","params":["0x0",false]}', '"A"'],
    ['{"jsonrpc":"2.0","method":"eth_getBlockByNumber","params":["0x0",false],"id":-4}', '-4'],
    ['{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x0",false],"id":2}', '2'],
  ];
  for (const [body, id] of cases) {
    for (let i = 0; i < 3; i++) {
      const answer = await gateway.post('/v1/sepolia', body);
      assert.equal(answer.text, answers[0]!.text.replace('"id":99999', `"id":${id}`), body);
    }
  }
});
