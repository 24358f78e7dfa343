/**
 * The query cost model (graphql-cost.ts): depth, fields, aliases, dataset nodes and rows counted
 * from the parsed query before it runs (wrangler's and the dashboard's queries, limits given by
 * variables, nested limits), and the refusal naming every measure over its limit with what was
 * measured; a property: n aliases of a node with limit L cost exactly n aliases, n nodes, n × L rows,
 * and are refused exactly when one of those passes its limit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkCost, measureCost, QUERY_LIMITS } from '../../../src/api/graphql/graphql-cost.ts';
import { GraphQLRequestError } from '../../../src/api/graphql/graphql-errors.ts';
import { parseGraphQL } from '../../../src/api/graphql/graphql-parser.ts';

const cost = (query: string, variables: Record<string, unknown> = {}) => measureCost(parseGraphQL(query), variables);

test('what wrangler and the dashboard ask costs what it reads', { timeout: 10_000 }, () => {
  const wrangler = `query getR2StorageMetrics($accountTag: string, $filter: AccountR2StorageAdaptiveGroupsFilter_InputObject) {
    viewer { accounts(filter: { accountTag: $accountTag }) {
      r2StorageAdaptiveGroups(limit: 1, filter: $filter, orderBy: [datetime_DESC]) { max { objectCount, payloadSize } dimensions { datetime } }
    } }
  }`;
  assert.deepEqual(cost(wrangler), { depth: 5, fields: 8, aliases: 0, nodes: 1, rows: 1 });
  const dashboard = `query BucketUsage($account: String!, $names: [String!], $limit: Int) {
    viewer { accounts(filter: {accountTag: $account}) {
      r2StorageAdaptiveGroups(limit: $limit, filter: {bucketName_in: $names}) { max { objectCount payloadSize } dimensions { bucketName } }
    } }
  }`;
  assert.deepEqual(cost(dashboard, { limit: 100 }), { depth: 5, fields: 8, aliases: 0, nodes: 1, rows: 100 });
  // A limit that is missing or not a positive number counts nothing here (running the query refuses it).
  assert.equal(cost(dashboard).rows, 0);
  assert.equal(cost(dashboard, { limit: 'many' }).rows, 0);
  assert.equal(cost(dashboard, { limit: -5 }).rows, 0);
  // A limit inside a list of limited rows multiplies; __typename and aliases count as fields.
  assert.deepEqual(cost('{ a: outer(limit: 10) { __typename b: inner(limit: 7) { x } c: inner(limit: 3) { y } } }'), {
    depth: 3,
    fields: 6,
    aliases: 3,
    nodes: 3,
    rows: 10 + 70 + 30,
  });
  assert.doesNotThrow(() => checkCost(cost(wrangler)));
});

test('over a limit: refused naming each measure over it, with the measured cost and the limits', { timeout: 10_000 }, () => {
  let aliases = '';
  for (let i = 0; i < 493; i++) aliases += `a${i}: r2StorageAdaptiveGroups(limit: 10000) { max { objectCount } dimensions { bucketName } }\n`;
  const measured = cost(`{ viewer { accounts(filter: {accountTag: "x"}) { ${aliases} } } }`);
  assert.deepEqual(measured, { depth: 5, fields: 2 + 493 * 5, aliases: 493, nodes: 493, rows: 4_930_000 });
  assert.throws(
    () => checkCost(measured),
    (error: unknown) => {
      assert.ok(error instanceof GraphQLRequestError);
      assert.equal(error.code, 'GRAPHQL_COST_EXCEEDED');
      assert.equal(
        error.message,
        'the query costs more than this server runs at once: 2,467 fields (at most 500), 493 aliases (at most 100), ' +
          '493 dataset nodes (at most 20), 4,930,000 rows asked by limits (at most 100,000); ask for less, or split it into several queries',
      );
      assert.deepEqual(error.details, { cost: measured, limits: QUERY_LIMITS });
      return true;
    },
  );
  const deep = cost(`{ a ${'{ b '.repeat(10)}${'}'.repeat(10)} }`);
  assert.equal(deep.depth, 11);
  assert.throws(() => checkCost(deep), /^Error: the query costs more than this server runs at once: 11 levels deep \(at most 10\);/);
});

test('n aliases of a node with limit L: n aliases, n nodes, n × L rows, refused exactly past a limit', { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 150 }), fc.integer({ min: 1, max: 10_000 }), (n, limit) => {
      const nodes = Array.from({ length: n }, (_, i) => `n${i}: r2StorageAdaptiveGroups(limit: $limit) { max { objectCount } }`).join(' ');
      const measured = cost(`query($limit: Int) { viewer { accounts(filter: {accountTag: "x"}) { ${nodes} } } }`, { limit });
      assert.deepEqual(measured, { depth: 5, fields: 2 + 3 * n, aliases: n, nodes: n, rows: n * limit });
      const over = measured.fields > QUERY_LIMITS.fields || n > QUERY_LIMITS.aliases || n > QUERY_LIMITS.nodes || n * limit > QUERY_LIMITS.rows;
      let refused = false;
      try {
        checkCost(measured);
      } catch (error) {
        refused = error instanceof GraphQLRequestError && error.code === 'GRAPHQL_COST_EXCEEDED';
      }
      assert.equal(refused, over);
    }),
    { numRuns: 300 },
  );
});
