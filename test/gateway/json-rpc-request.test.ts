/** The request parser and validator, by example and by property (fast-check). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseRequestBody, type ParsedBody, type RpcMember } from '../../src/gateway/json-rpc/request.ts';
import { rawIdText } from '../../src/gateway/json-rpc/raw-id.ts';

const LIMITS = { maxBatchItems: 1000 };

function members(parsed: ParsedBody): readonly RpcMember[] {
  if (parsed.kind === 'invalid') return [];
  return parsed.kind === 'single' ? [parsed.member] : parsed.members;
}

const idArb = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }));
const methodArb = fc.string({ minLength: 1, maxLength: 30 });
const paramsArb = fc.array(fc.jsonValue(), { maxLength: 4 });
const validRequestArb = fc.record({ jsonrpc: fc.constant('2.0'), id: idArb, method: methodArb, params: paramsArb }, { requiredKeys: ['jsonrpc', 'method'] });

test('property: any text at all parses to a classification without throwing', () => {
  fc.assert(fc.property(fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify(v))), (body) => {
    const parsed = parseRequestBody(body, LIMITS);
    assert.ok(['single', 'batch', 'invalid'].includes(parsed.kind));
    for (const member of members(parsed)) {
      if (member.kind === 'rejected') assert.ok([-32600, -32602].includes(member.error.rpcCode));
    }
  }), { numRuns: 500 });
});

test('property: a valid request keeps its method and params, and its id round-trips (absent id = notification)', () => {
  fc.assert(fc.property(validRequestArb, (request) => {
    const parsed = parseRequestBody(JSON.stringify(request), LIMITS);
    assert.equal(parsed.kind, 'single');
    const member = (parsed as { member: RpcMember }).member;
    assert.equal(member.kind, 'call');
    if (member.kind !== 'call') return;
    assert.equal(member.method, request.method);
    assert.deepEqual(member.params, JSON.parse(JSON.stringify(request.params ?? [])), 'as JSON carries them (-0 becomes 0)');
    if (!('id' in request)) assert.equal(member.id, undefined);
    else assert.deepEqual(JSON.parse(member.id!), request.id === undefined ? null : JSON.parse(JSON.stringify(request.id)));
  }), { numRuns: 500 });
});

test('property: a batch yields one member per element, in order, each validated on its own', () => {
  const elementArb = fc.oneof(validRequestArb, fc.jsonValue());
  fc.assert(fc.property(fc.array(elementArb, { minLength: 1, maxLength: 20 }), (batch) => {
    const parsed = parseRequestBody(JSON.stringify(batch), LIMITS);
    assert.equal(parsed.kind, 'batch');
    const parsedMembers = members(parsed);
    assert.equal(parsedMembers.length, batch.length);
    parsedMembers.forEach((member, i) => {
      const alone = parseRequestBody(JSON.stringify(batch[i]), LIMITS);
      // A lone non-object is a whole-body error (or a batch itself); inside a batch it is a member error with id null.
      if (alone.kind !== 'single') assert.deepEqual([member.kind, member.id, member.kind === 'rejected' && member.error.rpcCode], ['rejected', 'null', -32600]);
      else assert.deepEqual(member, (alone as { member: RpcMember }).member);
    });
  }), { numRuns: 300 });
});

test('property: integer ids of any size are echoed digit for digit', () => {
  fc.assert(fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.boolean(), (id, inBatch) => {
    const request = `{"jsonrpc":"2.0","method":"eth_chainId","id":${id}}`;
    const parsed = parseRequestBody(inBatch ? `[${request},${request}]` : request, LIMITS);
    for (const member of members(parsed)) assert.equal(member.id, String(id));
  }), { numRuns: 300 });
});

test('property: anything but jsonrpc "2.0" is -32600, echoing a readable id', () => {
  const notTwo = fc.jsonValue().filter((v) => v !== '2.0');
  fc.assert(fc.property(notTwo, fc.integer(), (jsonrpc, id) => {
    const parsed = parseRequestBody(JSON.stringify({ jsonrpc, id, method: 'eth_chainId' }), LIMITS);
    const member = (parsed as { member: RpcMember }).member;
    assert.equal(member.kind, 'rejected');
    assert.equal(member.kind === 'rejected' && member.error.rpcCode, -32600);
    assert.equal(member.id, String(id));
  }), { numRuns: 200 });
});

test('the raw id scanner finds the last top-level "id" of each member, skipping nested ones and strings', () => {
  const body = '[ {"params":[{"id":1}],"x":"\\"id\\": 5","id" : 123456789012345678901234 ,"method":"m"} , {"\\u0069d":99999999999999999999,"id":18446744073709551616}]';
  assert.equal(rawIdText(body, 0), '123456789012345678901234');
  assert.equal(rawIdText(body, 1), '18446744073709551616');
  assert.equal(rawIdText('{"id":1e400}', 0), '1e400');
  assert.equal(rawIdText('{"method":"x"}', 0), undefined);
});

test('batches: empty is one error; over the limit every member with an id gets the limit error', () => {
  assert.deepEqual(parseRequestBody('[]', LIMITS).kind, 'invalid');
  const tooMany = parseRequestBody(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'a' }, { jsonrpc: '2.0', method: 'b' }, 7]), { maxBatchItems: 2 });
  assert.deepEqual(members(tooMany).map((m) => [m.kind, m.id, m.kind === 'rejected' ? m.error.code : undefined]), [
    ['rejected', '1', 'GATEWAY_BATCH_TOO_LARGE'],
    ['rejected', undefined, 'GATEWAY_BATCH_TOO_LARGE'],
    ['rejected', 'null', 'GATEWAY_INVALID_REQUEST'],
  ]);
});
