/** A body's replay key leaves out its id only when any plain id put back gives the same call with that id. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { replayKey } from '../../src/gateway/http/replays.ts';

const idArb = fc.oneof(
  fc.nat({ max: 10 ** 16 }),
  fc.string({ maxLength: 70 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.double(),
  fc.integer({ min: -5, max: 5 }),
  fc.constant(null),
);
const paramArb = fc.oneof(fc.string({ maxLength: 12 }), fc.boolean(), fc.nat(), fc.record({ id: fc.nat() }), fc.constant('"id":1'));
const requestArb = fc.record({
  id: idArb,
  order: fc.shuffledSubarray(['jsonrpc', 'id', 'method', 'params', 'extra'], { minLength: 5, maxLength: 5 }),
  params: fc.array(paramArb, { maxLength: 3 }),
  method: fc.constantFrom('eth_blockNumber', 'eth_getBalance', 'x"id":2'),
  indent: fc.constantFrom(undefined, 1),
});

test('property: a key without the id gives back the body, and any plain id put back gives the same call with that id', { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(requestArb, fc.oneof(fc.nat({ max: 10 ** 15 }), fc.stringMatching(/^[a-z0-9-]{0,20}$/)), (request, other) => {
      const fields: Record<string, unknown> = { jsonrpc: '2.0', id: request.id, method: request.method, params: request.params, extra: { id: 9 } };
      const object = Object.fromEntries(request.order.map((name) => [name, fields[name]]));
      const body = JSON.stringify(object, null, request.indent);
      const { key, id } = replayKey(body);
      if (id === '') {
        assert.equal(key, body);
        return;
      }
      assert.equal(key.replace('\u0000', id), body);
      assert.equal(JSON.stringify((JSON.parse(body) as { id: unknown }).id), id, 'the response echoes the id as the body has it');
      const refilled = JSON.parse(key.replace('\u0000', JSON.stringify(other))) as Record<string, unknown>;
      assert.deepEqual(refilled, { ...object, id: other });
    }),
    { numRuns: 1000 },
  );
});

test('the ids clients send are cut out; ids whose echo is not their text, nesting first, and duplicates keep the whole body', { timeout: 10_000 }, () => {
  assert.deepEqual(replayKey('{"jsonrpc":"2.0","id":42,"method":"eth_blockNumber","params":[]}'), {
    key: '{"jsonrpc":"2.0","id":\u0000,"method":"eth_blockNumber","params":[]}',
    id: '42',
  });
  assert.deepEqual(replayKey('{"method":"eth_chainId","params":[],"id":"a-1","jsonrpc":"2.0"}').id, '', 'after params: nesting comes first');
  assert.deepEqual(replayKey('{"id":"a-1","method":"eth_chainId"}').id, '"a-1"');
  for (const body of [
    '{"id":01,"method":"m"}',
    '{"id":-1,"method":"m"}',
    '{"id":1.5,"method":"m"}',
    '{"id":1e3,"method":"m"}',
    '{"id":1234567890123456,"method":"m"}',
    '{"id":"\\u0041","method":"m"}',
    '{"id":"é","method":"m"}',
    '{"id":null,"method":"m"}',
    '{"id":1,"method":"m","id":2}',
    '{"id" :1,"method":"m"}',
    '[{"id":1,"method":"m"}]',
    '{"a":"b\\"","id":1}',
  ]) {
    assert.deepEqual(replayKey(body), { key: body, id: '' }, body);
  }
});
