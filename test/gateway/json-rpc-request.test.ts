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

test('property: any text at all parses to a classification without throwing', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.json(),
        fc.jsonValue().map((v) => JSON.stringify(v)),
      ),
      (body) => {
        const parsed = parseRequestBody(body, LIMITS);
        assert.ok(['single', 'batch', 'invalid'].includes(parsed.kind));
        for (const member of members(parsed)) {
          if (member.kind === 'rejected') assert.ok([-32600, -32602].includes(member.error.rpcCode));
        }
      },
    ),
    { numRuns: 500 },
  );
});

test('property: a valid request keeps its method and params, and its id round-trips (absent id = notification)', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(validRequestArb, (request) => {
      const parsed = parseRequestBody(JSON.stringify(request), LIMITS);
      assert.equal(parsed.kind, 'single');
      const member = (parsed as { member: RpcMember }).member;
      assert.equal(member.kind, 'call');
      if (member.kind !== 'call') return;
      assert.equal(member.method, request.method);
      assert.deepEqual(member.params, JSON.parse(JSON.stringify(request.params ?? [])), 'as JSON carries them (-0 becomes 0)');
      if (!('id' in request)) assert.equal(member.id, undefined);
      else assert.deepEqual(JSON.parse(member.id!), request.id === undefined ? null : JSON.parse(JSON.stringify(request.id)));
    }),
    { numRuns: 500 },
  );
});

test('property: a batch yields one member per element, in order, each validated on its own', { timeout: 10_000 }, () => {
  const elementArb = fc.oneof(validRequestArb, fc.jsonValue());
  fc.assert(
    fc.property(fc.array(elementArb, { minLength: 1, maxLength: 20 }), (batch) => {
      const parsed = parseRequestBody(JSON.stringify(batch), LIMITS);
      assert.equal(parsed.kind, 'batch');
      const parsedMembers = members(parsed);
      assert.equal(parsedMembers.length, batch.length);
      parsedMembers.forEach((member, i) => {
        const alone = parseRequestBody(JSON.stringify(batch[i]), LIMITS);
        // A lone non-object is a whole-body error (or a batch itself); inside a batch it is a member error with id null.
        if (alone.kind !== 'single')
          assert.deepEqual([member.kind, member.id, member.kind === 'rejected' && member.error.rpcCode], ['rejected', 'null', -32600]);
        else assert.deepEqual(member, (alone as { member: RpcMember }).member);
      });
    }),
    { numRuns: 300 },
  );
});

test('property: integer ids of any size are echoed digit for digit', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.boolean(), (id, inBatch) => {
      const request = `{"jsonrpc":"2.0","method":"eth_chainId","id":${id}}`;
      const parsed = parseRequestBody(inBatch ? `[${request},${request}]` : request, LIMITS);
      for (const member of members(parsed)) assert.equal(member.id, String(id));
    }),
    { numRuns: 300 },
  );
});

test('property: anything but jsonrpc "2.0" is -32600, echoing a readable id', { timeout: 10_000 }, () => {
  const notTwo = fc.jsonValue().filter((v) => v !== '2.0');
  fc.assert(
    fc.property(notTwo, fc.integer(), (jsonrpc, id) => {
      const parsed = parseRequestBody(JSON.stringify({ jsonrpc, id, method: 'eth_chainId' }), LIMITS);
      const member = (parsed as { member: RpcMember }).member;
      assert.equal(member.kind, 'rejected');
      assert.equal(member.kind === 'rejected' && member.error.rpcCode, -32600);
      assert.equal(member.id, String(id));
    }),
    { numRuns: 200 },
  );
});

test('the raw id scanner finds the last top-level "id" of each member, skipping nested ones and strings', { timeout: 10_000 }, () => {
  const body =
    '[ {"params":[{"id":1}],"x":"\\"id\\": 5","id" : 123456789012345678901234 ,"method":"m"} , {"\\u0069d":99999999999999999999,"id":18446744073709551616}]';
  assert.equal(rawIdText(body, 0), '123456789012345678901234');
  assert.equal(rawIdText(body, 1), '18446744073709551616');
  assert.equal(rawIdText('{"id":1e400}', 0), '1e400');
  assert.equal(rawIdText('{"method":"x"}', 0), undefined);
});

test('batches: empty is one error; over the limit one error, decided before the members are built', { timeout: 30_000 }, () => {
  assert.deepEqual(parseRequestBody('[]', LIMITS).kind, 'invalid');
  const tooMany = parseRequestBody(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'a' }, { jsonrpc: '2.0', method: 'b' }, 7]), { maxBatchItems: 2 });
  assert.equal(tooMany.kind, 'invalid');
  assert.equal(tooMany.kind === 'invalid' && tooMany.error.code, 'GATEWAY_BATCH_TOO_LARGE');
  assert.match(tooMany.kind === 'invalid' ? tooMany.error.message : '', /more than 2 members; this gateway accepts at most 2 per batch/);
  assert.equal(members(parseRequestBody('[1,2]', { maxBatchItems: 2 })).length, 2, 'exactly at the limit is a batch');
  // 2.6M members in 5.2 MB: refused as member 1001 begins, without building any of them.
  const body = `[${Array(2_600_000).fill('1').join(',')}]`;
  const started = performance.now();
  const huge = parseRequestBody(body, LIMITS);
  const ms = performance.now() - started;
  assert.equal(huge.kind === 'invalid' && huge.error.code, 'GATEWAY_BATCH_TOO_LARGE');
  assert.ok(ms < 250, `refusing took ${ms} ms`);
});

test('JSON deeper than 64 levels is refused whole with -32600 before it is parsed; 64 levels are fine', { timeout: 10_000 }, () => {
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  const deep = parseRequestBody(`{"jsonrpc":"2.0","id":1,"method":"m","params":[${nested(100_000)}]}`, LIMITS);
  assert.equal(deep.kind === 'invalid' && deep.error.code, 'GATEWAY_JSON_TOO_DEEP');
  assert.equal(deep.kind === 'invalid' && deep.error.rpcCode, -32600);
  assert.equal(parseRequestBody(`{"jsonrpc":"2.0","id":1,"method":"m","params":[${nested(63)}]}`, LIMITS).kind, 'invalid');
  assert.equal(parseRequestBody(`{"jsonrpc":"2.0","id":1,"method":"m","params":[${nested(62)}]}`, LIMITS).kind, 'single');
  assert.equal(parseRequestBody(`[{"jsonrpc":"2.0","id":1,"method":"m","params":[${nested(61)}]}]`, LIMITS).kind, 'batch');
  assert.equal(parseRequestBody(`[{"jsonrpc":"2.0","id":1,"method":"m","params":[${nested(62)}]}]`, LIMITS).kind, 'invalid');
});

test('property: a batch is one member per element up to max_batch_items and one GATEWAY_BATCH_TOO_LARGE past it', { timeout: 60_000 }, () => {
  const elementArb = fc.oneof(validRequestArb, fc.jsonValue({ maxDepth: 3 }));
  fc.assert(
    fc.property(fc.array(elementArb, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 25 }), (batch, maxBatchItems) => {
      const parsed = parseRequestBody(JSON.stringify(batch), { maxBatchItems });
      if (batch.length <= maxBatchItems) {
        assert.equal(parsed.kind, 'batch');
        assert.equal(members(parsed).length, batch.length);
      } else {
        assert.equal(parsed.kind === 'invalid' && parsed.error.code, 'GATEWAY_BATCH_TOO_LARGE');
      }
    }),
    { numRuns: 1000 },
  );
});

test('bodies of more than 100 JSON values per allowed member are refused before they are parsed', { timeout: 30_000 }, () => {
  const call = (values: number) => `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[${Array(values).fill('1').join(',')}]}`;
  // The request object and its jsonrpc, id, method and params are 5 values of the 200 allowed.
  assert.equal(parseRequestBody(call(195), { maxBatchItems: 2 }).kind, 'single');
  const over = parseRequestBody(call(196), { maxBatchItems: 2 });
  assert.equal(over.kind === 'invalid' && over.error.code, 'GATEWAY_JSON_TOO_MANY_VALUES');
  assert.equal(over.kind === 'invalid' && over.error.rpcCode, -32600);
  assert.match(over.kind === 'invalid' ? over.error.message : '', /the body holds more than 200 JSON values .*at most 200 per body/);
  // 2.6M values in one call's params (5 MB, which took the embedded chain over a second): refused at once.
  // Timed in CPU, not wall time, so a busy machine does not fail it (the refusal is synchronous).
  const body = call(2_590_000);
  const cpu = process.cpuUsage();
  const huge = parseRequestBody(body, LIMITS);
  const used = process.cpuUsage(cpu);
  const ms = (used.user + used.system) / 1_000;
  assert.equal(huge.kind === 'invalid' && huge.error.code, 'GATEWAY_JSON_TOO_MANY_VALUES');
  assert.ok(ms < 250, `refusing took ${ms} ms of CPU`);
});
