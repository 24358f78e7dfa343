/**
 * What a query costs, counted from its parsed text before any of it runs, and the limits it must
 * keep (QUERY_LIMITS). One walk of the operation, bounded by the parser's own limits:
 *
 * - depth: how deeply its selections nest (`viewer` is 1; wrangler's query is 5);
 * - fields: every field it selects, leaves and `__typename` included;
 * - aliases: fields renamed with `alias: field` (the same dataset asked again under another name);
 * - nodes: dataset nodes (fields with a `limit`, such as r2StorageAdaptiveGroups), each a query of
 *   its own: the platform's "number of queries in a request";
 * - rows: what the nodes may return: each node's `limit` times the limits of the lists it is nested
 *   in (an account scope is one account, as the platform's account-scoped queries are).
 *
 * A `limit` given by a variable is read from the variables; one that is not a positive number
 * counts 0 here (running the query refuses it with a message of its own).
 */
import type { GraphQLField, GraphQLOperation } from './graphql-parser.ts';
import { GraphQLRequestError } from './graphql-errors.ts';
import { resolve } from './graphql-values.ts';

export type CostMeasure = 'depth' | 'fields' | 'aliases' | 'nodes' | 'rows';

export type QueryCost = Record<CostMeasure, number>;

/**
 * The most a query may cost. The platform publishes `limit` at most 10,000 records per node and
 * one account per account-scoped query; the rest are edgeport's own, each far above what wrangler
 * (5 deep, 6 fields, 1 node, 1 row) and the dashboard (1 node of 100 rows) ask.
 */
export const QUERY_LIMITS: QueryCost = {
  depth: 10,
  fields: 500,
  aliases: 100,
  nodes: 20,
  rows: 100_000,
};

const NAMES: Record<CostMeasure, string> = {
  depth: 'levels deep',
  fields: 'fields',
  aliases: 'aliases',
  nodes: 'dataset nodes',
  rows: 'rows asked by limits',
};

/** The cost of `operation` with `variables` filled in. */
export function measureCost(operation: GraphQLOperation, variables: Record<string, unknown>): QueryCost {
  const cost: QueryCost = { depth: 0, fields: 0, aliases: 0, nodes: 0, rows: 0 };
  const walk = (fields: GraphQLField[], depth: number, fanOut: number): void => {
    cost.depth = Math.max(cost.depth, depth);
    for (const field of fields) {
      cost.fields++;
      if (field.alias !== undefined) cost.aliases++;
      const limitArg = field.arguments.find(([name]) => name === 'limit');
      let inner = fanOut;
      if (limitArg !== undefined) {
        const limit = resolve(limitArg[1], variables);
        const rows = typeof limit === 'number' && limit > 0 ? fanOut * limit : 0;
        cost.nodes++;
        cost.rows += rows;
        inner = rows;
      }
      if (field.selections.length > 0) walk(field.selections, depth + 1, inner);
    }
  };
  walk(operation.selections, 1, 1);
  return cost;
}

/** Throws GRAPHQL_COST_EXCEEDED naming every measure over its limit, with what was measured. */
export function checkCost(cost: QueryCost, limits: QueryCost = QUERY_LIMITS): void {
  const over = (Object.keys(limits) as CostMeasure[]).filter((measure) => cost[measure] > limits[measure]);
  if (over.length === 0) return;
  const parts = over.map((measure) => `${cost[measure].toLocaleString('en-US')} ${NAMES[measure]} (at most ${limits[measure].toLocaleString('en-US')})`);
  throw new GraphQLRequestError(
    'GRAPHQL_COST_EXCEEDED',
    `the query costs more than this server runs at once: ${parts.join(', ')}; ask for less, or split it into several queries`,
    {
      details: { cost, limits },
    },
  );
}
