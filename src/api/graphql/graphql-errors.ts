/**
 * What `POST /graphql` refuses, and how: every refusal is GraphQL's own shape,
 * `{"data": null, "errors": [{"message", "path", "extensions": {"code", "timestamp"}}]}`, as the
 * platform's analytics API answers, with the HTTP status of GRAPHQL_ERRORS (the platform answers
 * its limits with 400, its rate limit with 429 and "too many queries in progress" with 503).
 * Credentials are checked before the body is read: those refusals are the API's envelope.
 * docs/errors.md lists these codes.
 */

export type GraphQLErrorCode =
  | 'GRAPHQL_BAD_REQUEST'
  | 'GRAPHQL_BODY_TOO_LARGE'
  | 'GRAPHQL_PARSE_FAILED'
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'GRAPHQL_COST_EXCEEDED'
  | 'GRAPHQL_RATE_LIMITED'
  | 'GRAPHQL_BUSY';

export const GRAPHQL_ERRORS: Record<GraphQLErrorCode, { status: number; what: string }> = {
  GRAPHQL_BAD_REQUEST: { status: 400, what: 'the body is not a JSON object {query, variables, operationName}' },
  GRAPHQL_BODY_TOO_LARGE: { status: 413, what: 'the body is larger than MAX_GRAPHQL_BODY_BYTES' },
  GRAPHQL_PARSE_FAILED: { status: 400, what: 'the query is not GraphQL this server reads, or is longer, deeper or has more tokens than the parser takes' },
  GRAPHQL_VALIDATION_FAILED: { status: 400, what: 'the query asks for something the schema does not have, or with arguments it refuses' },
  GRAPHQL_COST_EXCEEDED: { status: 400, what: "the query's cost (depth, fields, aliases, nodes, rows) is over a limit" },
  GRAPHQL_RATE_LIMITED: { status: 429, what: 'the account has queries in progress or has spent its budget of queries' },
  GRAPHQL_BUSY: { status: 503, what: 'the server has its most queries in progress' },
};

export class GraphQLRequestError extends Error {
  readonly code: GraphQLErrorCode;
  readonly path: Array<string | number>;
  /** Seconds to wait before asking again (429, 503): the Retry-After header. */
  readonly retryAfter: number | undefined;
  /** More for `extensions` (the measured cost and the limits of a GRAPHQL_COST_EXCEEDED). */
  readonly details: Record<string, unknown>;

  constructor(
    code: GraphQLErrorCode,
    message: string,
    options: { path?: Array<string | number>; retryAfter?: number; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.code = code;
    this.path = options.path ?? [];
    this.retryAfter = options.retryAfter;
    this.details = options.details ?? {};
  }
}

/** The GraphQL answer of a refusal. */
export function graphqlErrorResponse(error: GraphQLRequestError, now: number): Response {
  const body = {
    data: null,
    errors: [{ message: error.message, path: error.path, extensions: { code: error.code, timestamp: new Date(now).toISOString(), ...error.details } }],
  };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter);
  return new Response(JSON.stringify(body), { status: GRAPHQL_ERRORS[error.code].status, headers });
}
