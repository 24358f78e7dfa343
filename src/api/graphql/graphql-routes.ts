/**
 * `POST /graphql`: the platform's GraphQL analytics endpoint, for the one dataset this server
 * keeps: R2 storage (`r2StorageAdaptiveGroups`, what `wrangler r2 bucket info` asks for a
 * bucket's object count and size). Credentials are the API's (key, token, session; refused in the
 * API's envelope); a token needs Workers R2 Storage Read on the account.
 *
 * A query goes: admitted (graphql-admission.ts: the account's queries in progress and its budget)
 * -> body read and checked (graphql-request.ts) -> parsed (graphql-parser.ts: bounded length,
 * tokens, depth) -> its cost counted and checked (graphql-cost.ts) -> run in time slices
 * (r2-storage-query.ts). An answer is `{data, errors: null}`, 200; a refusal is GraphQL's
 * `{data: null, errors: [{message, path, extensions: {code, timestamp}}]}` with the status of
 * graphql-errors.ts (400 for a body, query or cost it refuses).
 */
import { mayAccess } from '../authorize.ts';
import { defineRoute, type ApiDeps, type ApiRoute } from '../route.ts';
import { accountStore } from '../../store/engine/account-store.ts';
import { StoreError } from '../../store/engine/errors.ts';
import { ApiError } from '../errors.ts';
import { GraphQLAdmission } from './graphql-admission.ts';
import { checkCost, measureCost } from './graphql-cost.ts';
import { graphqlErrorResponse, GraphQLRequestError } from './graphql-errors.ts';
import { parseGraphQL } from './graphql-parser.ts';
import { MAX_GRAPHQL_BODY_BYTES, readGraphQLBody } from './graphql-request.ts';
import { runR2StorageQuery } from './r2-storage-query.ts';

/** One admission per API app (the same deps serve all its requests). */
const admissions = new WeakMap<ApiDeps, GraphQLAdmission>();

function admissionOf(deps: ApiDeps): GraphQLAdmission {
  let admission = admissions.get(deps);
  if (admission === undefined) {
    admission = new GraphQLAdmission(deps.clock);
    admissions.set(deps, admission);
  }
  return admission;
}

export const GRAPHQL_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'POST',
    path: '/graphql',
    operationId: 'graphql',
    tag: 'GraphQL Analytics',
    permission: 'none',
    summary: "GraphQL analytics: viewer.accounts(filter: {accountTag}).r2StorageAdaptiveGroups (a bucket's object count and sizes, now)",
    rawBody: {
      contentType: 'application/json',
      description: `JSON {query, variables, operationName} (any Content-Type), at most ${MAX_GRAPHQL_BODY_BYTES} bytes`,
    },
    rawResult: { contentType: 'application/json', description: "GraphQL's answer: {data, errors}" },
    async handler(ctx) {
      if (!ctx.deps.store) throw new ApiError('API_STORE_INVALID', { message: 'The object store is not available on this server.' });
      const store = accountStore(ctx.deps.store, ctx.account.id);
      let release: (() => void) | undefined;
      try {
        release = admissionOf(ctx.deps).admit(ctx.account.id);
        const body = await readGraphQLBody(ctx.request);
        const operation = parseGraphQL(body.query, body.operationName);
        checkCost(measureCost(operation, body.variables));
        const data = await runR2StorageQuery(operation.selections, body.variables, {
          mayRead: (accountTag) => accountTag === ctx.account.id && mayAccess(ctx, 'store', 'read', { kind: 'account', accountId: accountTag }),
          listBuckets: () => store.listBuckets(),
          getBucket: (name) => store.getBucket(name),
          bucketUsage: (name) =>
            store.bucketUsage(name).catch((error: unknown) => {
              if (error instanceof StoreError && error.code === 'STORE_NO_SUCH_BUCKET') return null;
              throw error;
            }),
          now: () => ctx.deps.clock.now(),
        });
        return new Response(JSON.stringify({ data, errors: null }), { status: 200, headers: { 'content-type': 'application/json' } });
      } catch (error) {
        if (error instanceof GraphQLRequestError) return graphqlErrorResponse(error, ctx.deps.clock.now());
        throw error;
      } finally {
        release?.();
      }
    },
  }),
];
