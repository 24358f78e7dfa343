/**
 * The body of `POST /graphql`: JSON `{query, variables, operationName}` (whatever its Content-Type
 * says: wrangler labels it `text/plain`), at most MAX_GRAPHQL_BODY_BYTES (refused by
 * Content-Length before it is read, else as soon as the bytes pass it), nested at most
 * MAX_JSON_DEPTH, checked before it is parsed. Each refusal is a GraphQLRequestError naming what is
 * wrong.
 */
import { MAX_JSON_DEPTH, scanJsonShape } from '../../core/json-shape.ts';
import { readLimited } from '../request-body.ts';
import { GraphQLRequestError } from './graphql-errors.ts';
import { MAX_QUERY_LENGTH } from './graphql-parser.ts';

/** A 64 KiB query as JSON (escapes included) with its variables fits several times over. */
export const MAX_GRAPHQL_BODY_BYTES = 256 * 1024;
const MAX_OPERATION_NAME = 256;

export interface GraphQLBody {
  query: string;
  variables: Record<string, unknown>;
  operationName: string | undefined;
}

export async function readGraphQLBody(request: Request, maxBytes = MAX_GRAPHQL_BODY_BYTES): Promise<GraphQLBody> {
  const tooLarge = () =>
    new GraphQLRequestError(
      'GRAPHQL_BODY_TOO_LARGE',
      `the body is too large: at most ${maxBytes} bytes are accepted (a query of at most ${MAX_QUERY_LENGTH} characters, and its variables)`,
    );
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge();
  const bytes = await readLimited(request.body, maxBytes, tooLarge);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw bad('the body is not UTF-8 text');
  }
  const shape = scanJsonShape(text, { maxDepth: MAX_JSON_DEPTH });
  if (shape.kind === 'too-deep') throw bad(`the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  if (shape.kind !== 'json') throw bad(`the body is not JSON${shape.kind === 'invalid' ? ` (at character ${shape.offset + 1})` : ''}`);
  const body = JSON.parse(text) as unknown;
  if (!isObject(body)) throw bad('the body is not a JSON object');
  const { query, variables, operationName } = body;
  if (typeof query !== 'string') throw bad(query === undefined ? 'the body has no query' : "the body's query is not a string");
  if (variables !== undefined && variables !== null && !isObject(variables)) throw bad("the body's variables are not a JSON object");
  if (operationName !== undefined && operationName !== null && (typeof operationName !== 'string' || operationName.length > MAX_OPERATION_NAME)) {
    throw bad(`the body's operationName is not a string of at most ${MAX_OPERATION_NAME} characters`);
  }
  return { query, variables: variables ?? {}, operationName: operationName ?? undefined };
}

function bad(what: string): GraphQLRequestError {
  return new GraphQLRequestError(
    'GRAPHQL_BAD_REQUEST',
    `${what}: send a JSON object {"query": "<the GraphQL query>", "variables": {...}, "operationName": "<name>"}`,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
