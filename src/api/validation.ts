/**
 * Request validation: zod schemas (the same ones the OpenAPI document is generated from) checked
 * against bodies and queries, their issues turned into envelope errors in the real API's style:
 * `'<value>' is not a valid value for <field> because <reason>`, with `source.pointer` naming the
 * field. Refinements attach their catalog code as `params.apiCode`.
 */
import type { z } from 'zod';
import { API_ERRORS, ApiError, type ApiErrorCode, type ErrorItem } from './errors.ts';

type Issue = z.core.$ZodIssue;

/** The parsed value, or an ApiError listing every problem (raised before anything is written). */
export function validateBody<T>(schema: z.ZodType<T>, input: unknown, fallback: ApiErrorCode): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw issuesToError(result.error.issues, input, fallback);
}

/** The same for query parameters (no pointers: they are not in the body). */
export function validateQuery<T>(schema: z.ZodType<T>, query: URLSearchParams): T {
  const input = Object.fromEntries(query);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const items = result.error.issues.map((issue) => {
    const name = issue.path.map(String).join('.') || 'query';
    const value = valueAt(input, issue.path);
    const because = issue.code === 'custom' ? issue.message : describeExpectation(issue);
    return { code: API_ERRORS.API_INVALID_QUERY.code, message: `'${show(value)}' is not a valid value for ${name} because ${because}` };
  });
  throw new ApiError('API_INVALID_QUERY', { message: items[0]!.message, items });
}

export function issuesToError(issues: readonly Issue[], input: unknown, fallback: ApiErrorCode): ApiError {
  const codes: ApiErrorCode[] = [];
  const items: ErrorItem[] = [];
  for (const issue of issues) {
    const apiCode = (issue.code === 'custom' ? (issue.params?.apiCode as ApiErrorCode | undefined) : undefined) ?? fallback;
    for (const { message, pointer } of describeIssue(issue, input)) {
      codes.push(apiCode);
      items.push({ code: API_ERRORS[apiCode].code, message, source: { pointer } });
    }
  }
  return new ApiError(codes[0] ?? fallback, { message: items[0]?.message ?? API_ERRORS[fallback].message, items });
}

function describeIssue(issue: Issue, input: unknown): Array<{ message: string; pointer: string }> {
  const pointer = toPointer(issue.path);
  const field = fieldName(issue.path);
  const value = valueAt(input, issue.path);
  switch (issue.code) {
    case 'custom':
      if (issue.params?.because !== undefined) {
        return [{ message: `'${show(issue.params.value)}' is not a valid value for ${field} because ${issue.params.because as string}`, pointer }];
      }
      return [{ message: issue.message, pointer }];
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({
        message: `'${key}' is not a valid field${field === 'body' ? '' : ` of ${field}`}: remove it`,
        pointer: toPointer([...issue.path, key]),
      }));
    case 'invalid_type':
      if (value === undefined) return [{ message: `${field} is required`, pointer }];
      return [{ message: `'${show(value)}' is not a valid value for ${field} because ${describeExpectation(issue)}`, pointer }];
    default:
      return [{ message: `'${show(value)}' is not a valid value for ${field} because ${describeExpectation(issue)}`, pointer }];
  }
}

/** Why a value was refused, in words; schemas give their own messages where zod's would be vague. */
function describeExpectation(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `it must be ${issue.expected === 'array' || issue.expected === 'object' || issue.expected === 'int' ? 'an' : 'a'} ${issue.expected === 'int' ? 'integer' : issue.expected}`;
    case 'invalid_value':
      return `it must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      return issue.origin === 'string'
        ? `it must be at least ${issue.minimum} characters long`
        : issue.origin === 'array'
          ? `it must have at least ${issue.minimum} items`
          : `it must be at least ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'string'
        ? `it must be at most ${issue.maximum} characters long`
        : issue.origin === 'array'
          ? `it must have at most ${issue.maximum} items`
          : `it must be at most ${issue.maximum}`;
    case 'invalid_format':
      return issue.message;
    default:
      return issue.message;
  }
}

export function toPointer(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '' : `/${path.map((p) => String(p).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
}

function fieldName(path: readonly PropertyKey[]): string {
  for (let i = path.length - 1; i >= 0; i--) if (typeof path[i] === 'string') return path[i] as string;
  return 'body';
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** A value as the real API quotes it: strings bare, the rest as JSON, long ones cut. */
export function show(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}
