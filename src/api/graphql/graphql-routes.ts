/**
 * `POST /graphql`: the platform's GraphQL analytics endpoint, for the one dataset this server
 * keeps: R2 storage (`r2StorageAdaptiveGroups`, what `wrangler r2 bucket info` asks for a
 * bucket's object count and size). Answers are GraphQL's shape, `{data, errors}`, status 200, as
 * the platform answers; a query it cannot run gets `{data: null, errors: [{message, path}]}` with
 * a message naming what is supported. Credentials are the API's (key, token, session); a token
 * needs Workers R2 Storage Read on the account.
 */
import { z } from 'zod';
import { mayAccess } from '../authorize.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { accountStore } from '../../store/engine/account-store.ts';
import { ApiError } from '../errors.ts';
import { GraphQLSyntaxError, MAX_QUERY_LENGTH, parseGraphQL } from './graphql-parser.ts';
import { GraphQLQueryError, runR2StorageQuery } from './r2-storage-query.ts';

const graphqlBody = z.object({
  query: z.string().max(MAX_QUERY_LENGTH),
  variables: z.record(z.string(), z.unknown()).nullable().optional(),
  operationName: z.string().max(256).nullable().optional(),
});

type GraphQLBody = z.infer<typeof graphqlBody>;

function answer(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
}

export const GRAPHQL_ROUTES: ApiRoute[] = [
  defineRoute<GraphQLBody>({
    method: 'POST', path: '/graphql', operationId: 'graphql', tag: 'GraphQL Analytics', permission: 'none',
    summary: 'GraphQL analytics: viewer.accounts(filter: {accountTag}).r2StorageAdaptiveGroups (a bucket\'s object count and sizes, now)',
    body: { schema: graphqlBody, invalid: 'API_GRAPHQL_INVALID', anyMediaType: true },
    rawResult: { contentType: 'application/json', description: 'GraphQL\'s answer: {data, errors}' },
    async handler(ctx) {
      if (!ctx.deps.store) throw new ApiError('API_STORE_INVALID', { message: 'The object store is not available on this server.' });
      const store = accountStore(ctx.deps.store, ctx.account.id);
      try {
        const operation = parseGraphQL(ctx.body.query, ctx.body.operationName);
        const data = await runR2StorageQuery(operation.selections, ctx.body.variables ?? {}, {
          mayRead: (accountTag) => accountTag === ctx.account.id && mayAccess(ctx, 'store', 'read', { kind: 'account', accountId: accountTag }),
          listBuckets: () => store.listBuckets(),
          getBucket: (name) => store.getBucket(name),
          bucketUsage: (name) => store.bucketUsage(name),
          now: () => ctx.deps.clock.now(),
        });
        return answer({ data, errors: null });
      } catch (error) {
        if (error instanceof GraphQLSyntaxError) return answer({ data: null, errors: [{ message: error.message, path: [], extensions: { code: 'GRAPHQL_PARSE_FAILED' } }] });
        if (error instanceof GraphQLQueryError) return answer({ data: null, errors: [{ message: error.message, path: error.path, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] });
        throw error;
      }
    },
  }),
];
