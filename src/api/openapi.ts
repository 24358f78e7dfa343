/**
 * The OpenAPI 3.1 document of every route, served at `/client/v4/openapi.json`: built from the
 * route table and the zod schemas that validate requests, so it cannot drift from what the server
 * accepts.
 */
import { z } from 'zod';
import { API_ERRORS } from './errors.ts';
import type { ApiRoute } from './route.ts';

type JsonSchema = Record<string, unknown>;

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

const RESULT_INFO: Record<'page' | 'cursor', JsonSchema> = {
  page: {
    type: 'object',
    properties: {
      page: { type: 'integer' },
      per_page: { type: 'integer' },
      count: { type: 'integer' },
      total_count: { type: 'integer' },
      total_pages: { type: 'integer' },
    },
  },
  cursor: {
    type: 'object',
    properties: { count: { type: 'integer' }, per_page: { type: 'integer' }, cursor: { type: 'string', description: 'Present only when more results remain' } },
  },
};

export function buildOpenApiDocument(routes: readonly ApiRoute[], prefix: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = prefix + route.path.replace(/:(\w+)(\{\.\+\})?/g, '{$1}');
    const parameters = [
      ...[...route.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })),
      ...Object.entries(route.query?.shape ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: false,
        schema: toSchema(schema as z.ZodType, 'input'),
      })),
    ];
    const success: JsonSchema = route.noContent
      ? { description: 'Deleted; no body' }
      : route.rawResult
        ? { description: route.rawResult.description, content: { [route.rawResult.contentType]: { schema: { type: 'string', format: 'binary' } } } }
        : {
            description: 'Success',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['result', 'success', 'errors', 'messages'],
                  properties: {
                    result: route.result ? toSchema(route.result, 'output') : {},
                    ...(route.resultInfo ? { result_info: RESULT_INFO[route.resultInfo] } : {}),
                    success: { const: true },
                    errors: { type: 'array', maxItems: 0 },
                    messages: { type: 'array' },
                  },
                },
              },
            },
          };
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      parameters,
      ...(route.auth === 'none' ? { security: [] } : route.auth === 'session' ? { security: [{ session: [], csrfToken: [] }] } : {}),
      ...(route.body
        ? { requestBody: { required: !route.body.optional, content: { 'application/json': { schema: toSchema(route.body.schema, 'input') } } } }
        : {}),
      ...(route.rawBody
        ? {
            requestBody: {
              required: true,
              description: route.rawBody.description,
              content: { [route.rawBody.contentType]: { schema: { type: 'string', format: 'binary' } } },
            },
          }
        : {}),
      responses: {
        [route.noContent ? '204' : '200']: success,
        '4XX': { $ref: '#/components/responses/Failure' },
        '5XX': { $ref: '#/components/responses/Failure' },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'edgeport management API',
      version: 'v4',
      description:
        'Accounts, zones, custom-fields rulesets and log jobs, compatible with the real /client/v4 API; plus edgeport extensions for the web dashboard (sessions, object store buckets and objects, gateway networks). Every answer is the envelope {result, success, errors, messages}, except an object download (its bytes).',
    },
    servers: [{ url: 'http://127.0.0.1:8081' }],
    // The account's e-mail + key, an API token, or a dashboard session (its cookie, plus X-CSRF-Token on every method but GET).
    security: [{ apiEmail: [], apiKey: [] }, { apiToken: [] }, { session: [], csrfToken: [] }],
    paths,
    components: {
      securitySchemes: {
        apiEmail: { type: 'apiKey', in: 'header', name: 'X-Auth-Email' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Auth-Key' },
        apiToken: { type: 'http', scheme: 'bearer', description: 'An API token made under /user/tokens; its policies limit what it may do' },
        session: { type: 'apiKey', in: 'cookie', name: 'edgeport_session', description: 'Set by POST /client/v4/sessions (dashboard sign-in)' },
        csrfToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRF-Token',
          description: 'The csrf_token of the session; required with the cookie on every method but GET and HEAD',
        },
      },
      responses: {
        Failure: {
          description: `Refused: errors[].code is one of ${[...new Set(Object.values(API_ERRORS).map((e) => e.code))].sort((a, b) => a - b).join(', ')} (docs/errors.md)`,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['result', 'success', 'errors', 'messages'],
                properties: {
                  result: { type: 'null' },
                  success: { const: false },
                  errors: {
                    type: 'array',
                    minItems: 1,
                    items: {
                      type: 'object',
                      required: ['code', 'message'],
                      properties: {
                        code: { type: 'integer' },
                        message: { type: 'string' },
                        source: { type: 'object', properties: { pointer: { type: 'string' } } },
                        error_chain: { type: 'array', items: { type: 'object', properties: { code: { type: 'integer' }, message: { type: 'string' } } } },
                      },
                    },
                  },
                  messages: { type: 'array' },
                },
              },
            },
          },
        },
      },
    },
  };
}
