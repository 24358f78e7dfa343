/**
 * Log job filters (docs/management-api.md "Routes", docs/choices.md "Management API"): parses the JSON text of a
 * job's `filter` into a typed expression the log pipeline evaluates. Pure: no I/O, no clock.
 *
 * By design: keys are `http_requests` fields, operators are checked against the field's type,
 * values are normalised (numbers for numeric fields, booleans for bool fields, epoch milliseconds
 * for timestamps). The limits count comparison operators (criteria) and UTF-8 bytes of the text,
 * and bound its nesting. Bytes are checked before anything else and depth before the text is parsed,
 * so an over-long or deep text costs no parse and no recursion (10,000 levels overflowed the stack).
 */
import { MAX_JSON_DEPTH, scanJsonShape } from '../../core/json-shape.ts';
import { HTTP_REQUESTS_FIELDS, isHttpRequestsField, type HttpRequestsFieldName, type HttpRequestsFieldType } from '../http-requests-fields.ts';

/** The real service's comparison operators (camelCase, `!` negates). */
export const FILTER_OPERATORS = [
  'eq',
  '!eq',
  'lt',
  'leq',
  'gt',
  'geq',
  'startsWith',
  'endsWith',
  '!startsWith',
  '!endsWith',
  'contains',
  '!contains',
  'in',
  '!in',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** Spellings of older documentation, accepted and normalised to the current operator. */
const OPERATOR_ALIASES: Readonly<Record<string, FilterOperator>> = {
  '==': 'eq',
  '!=': '!eq',
  neq: '!eq',
  '<': 'lt',
  '<=': 'leq',
  lte: 'leq',
  '>': 'gt',
  '>=': 'geq',
  gte: 'geq',
};

/**
 * The real service's limits, "about 30 operators and 1000 bytes"; exactly at each limit is accepted. Depth counts
 * JSON arrays and objects (every surface's MAX_JSON_DEPTH): each and/or group takes two levels.
 */
export const FILTER_LIMITS = { maxOperators: 30, maxBytes: 1000, maxDepth: MAX_JSON_DEPTH } as const;

export interface FilterLimits {
  maxOperators: number;
  maxBytes: number;
  /** Default: MAX_JSON_DEPTH. */
  maxDepth?: number;
}

export type FilterScalar = string | number | boolean;

export interface FilterCriterion {
  kind: 'criterion';
  key: HttpRequestsFieldName;
  operator: FilterOperator;
  /** An array for `in` / `!in`, a scalar otherwise; typed by the field (see file header). */
  value: FilterScalar | readonly FilterScalar[];
}

export interface FilterGroup {
  kind: 'and' | 'or';
  clauses: readonly FilterExpression[];
}

export type FilterExpression = FilterCriterion | FilterGroup;

export interface ParsedFilter {
  where: FilterExpression;
  /** Number of comparison operators (criteria). */
  operatorCount: number;
  /** UTF-8 length of the filter text. */
  bytes: number;
}

export interface FilterProblem {
  /** JSON Pointer into the filter document, e.g. `/where/and/1/operator`; empty for the whole text. */
  pointer: string;
  message: string;
  /** Set when the problem is a limit rather than a mistake in the document. */
  limit?: 'operators' | 'bytes' | 'depth';
}

export type FilterParseResult = { ok: true; filter: ParsedFilter } | { ok: false; problems: FilterProblem[] };

type ValueKind = 'string' | 'number' | 'bool' | 'timestamp';

/** Which operators each field type accepts, and the kind its values take (as the real service's filters). */
const OPERATORS_BY_TYPE: Record<HttpRequestsFieldType, { operators: readonly FilterOperator[]; value: ValueKind } | null> = {
  string: { operators: ['eq', '!eq', 'startsWith', 'endsWith', '!startsWith', '!endsWith', 'contains', '!contains', 'in', '!in'], value: 'string' },
  int: { operators: ['eq', '!eq', 'lt', 'leq', 'gt', 'geq', 'in', '!in'], value: 'number' },
  float: { operators: ['eq', '!eq', 'lt', 'leq', 'gt', 'geq', 'in', '!in'], value: 'number' },
  timestamp: { operators: ['eq', '!eq', 'lt', 'leq', 'gt', 'geq', 'in', '!in'], value: 'timestamp' },
  bool: { operators: ['eq', '!eq'], value: 'bool' },
  'string[]': { operators: ['contains', '!contains'], value: 'string' },
  'int[]': null,
  object: null,
};

const CRITERION_KEYS = new Set(['key', 'operator', 'value']);

/**
 * Parses filter text; every problem found is reported, each with a pointer into the document.
 * `limits` defaults to FILTER_LIMITS (note: 30 criteria never fit in 1000 bytes of JSON, about 24 do,
 * so the byte limit binds first unless raised). A text over the byte limit or nested too deeply is
 * not parsed: that one problem is all it gets.
 */
export function parseFilter(text: string, limits: FilterLimits = FILTER_LIMITS): FilterParseResult {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxBytes) {
    return {
      ok: false,
      problems: [{ pointer: '', limit: 'bytes', message: `the filter is ${bytes} bytes long; at most ${limits.maxBytes} bytes are allowed` }],
    };
  }
  const maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH;
  if (scanJsonShape(text, { maxDepth }).kind === 'too-deep') {
    return {
      ok: false,
      problems: [
        {
          pointer: '',
          limit: 'depth',
          message: `the filter nests arrays and objects more than ${maxDepth} levels deep (each "and"/"or" group takes two); at most ${maxDepth} are allowed`,
        },
      ],
    };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [{ pointer: '', message: `the filter is not valid JSON (${(error as Error).message})` }] };
  }
  const problems: FilterProblem[] = [];
  const state = { operators: 0 };
  let where: FilterExpression | null = null;
  if (!isObject(document)) {
    problems.push({ pointer: '', message: 'the filter must be a JSON object with the key "where"' });
  } else {
    for (const extra of Object.keys(document).filter((key) => key !== 'where')) {
      problems.push({ pointer: `/${escapePointer(extra)}`, message: `unknown key ${JSON.stringify(extra)}: the filter object holds only "where"` });
    }
    if (!('where' in document)) problems.push({ pointer: '', message: 'the filter must contain the key "where"' });
    else where = parseExpression(document.where, '/where', problems, state);
  }
  if (state.operators > limits.maxOperators) {
    problems.push({ pointer: '', limit: 'operators', message: `the filter has ${state.operators} operators; at most ${limits.maxOperators} are allowed` });
  }
  if (problems.length > 0 || where === null) return { ok: false, problems };
  return { ok: true, filter: { where, operatorCount: state.operators, bytes } };
}

function parseExpression(node: unknown, pointer: string, problems: FilterProblem[], state: { operators: number }): FilterExpression | null {
  if (!isObject(node)) {
    problems.push({ pointer, message: 'an expression must be an object: {"key","operator","value"}, {"and": [...]} or {"or": [...]}' });
    return null;
  }
  const keys = Object.keys(node);
  const group = keys.find((key) => key === 'and' || key === 'or') as 'and' | 'or' | undefined;
  if (group !== undefined) {
    if (keys.length !== 1) {
      problems.push({
        pointer,
        message: `an "${group}" expression may not have other keys (found ${keys
          .filter((k) => k !== group)
          .map((k) => JSON.stringify(k))
          .join(', ')})`,
      });
      return null;
    }
    const list = node[group];
    if (!Array.isArray(list) || list.length === 0) {
      problems.push({ pointer: `${pointer}/${group}`, message: `"${group}" must be a non-empty array of expressions` });
      return null;
    }
    const clauses = list.map((item, i) => parseExpression(item, `${pointer}/${group}/${i}`, problems, state));
    return clauses.every((clause) => clause !== null) ? { kind: group, clauses: clauses as FilterExpression[] } : null;
  }
  return parseCriterion(node, keys, pointer, problems, state);
}

function parseCriterion(
  node: Record<string, unknown>,
  keys: string[],
  pointer: string,
  problems: FilterProblem[],
  state: { operators: number },
): FilterCriterion | null {
  state.operators += 1;
  const before = problems.length;
  for (const extra of keys.filter((key) => !CRITERION_KEYS.has(key))) {
    problems.push({
      pointer: `${pointer}/${escapePointer(extra)}`,
      message: `unknown key ${JSON.stringify(extra)}: a criterion has "key", "operator" and "value"`,
    });
  }
  for (const required of CRITERION_KEYS) {
    if (!(required in node)) problems.push({ pointer, message: `a criterion needs "${required}" (it has "key", "operator" and "value")` });
  }
  if (problems.length > before) return null;

  const { key, operator: rawOperator, value } = node;
  if (typeof key !== 'string' || !isHttpRequestsField(key)) {
    problems.push({ pointer: `${pointer}/key`, message: `${JSON.stringify(key)} is not a field of the http_requests dataset` });
    return null;
  }
  const operator = typeof rawOperator === 'string' ? (OPERATOR_ALIASES[rawOperator] ?? rawOperator) : rawOperator;
  if (typeof operator !== 'string' || !(FILTER_OPERATORS as readonly string[]).includes(operator)) {
    problems.push({ pointer: `${pointer}/operator`, message: `${JSON.stringify(rawOperator)} is not an operator; use one of ${FILTER_OPERATORS.join(', ')}` });
    return null;
  }
  const fieldType = HTTP_REQUESTS_FIELDS[key].type;
  const rule = OPERATORS_BY_TYPE[fieldType];
  if (rule === null) {
    problems.push({ pointer: `${pointer}/key`, message: `${key} (${fieldType}) cannot be filtered on` });
    return null;
  }
  if (!rule.operators.includes(operator as FilterOperator)) {
    problems.push({ pointer: `${pointer}/operator`, message: `${operator} does not apply to ${key} (${fieldType}); use one of ${rule.operators.join(', ')}` });
    return null;
  }
  const isSet = operator === 'in' || operator === '!in';
  if (isSet) {
    if (!Array.isArray(value) || value.length === 0) {
      problems.push({ pointer: `${pointer}/value`, message: `${operator} needs a non-empty array value, e.g. ["a","b"] or [200,201]` });
      return null;
    }
    const items = value.map((item) => toScalar(item, rule.value));
    const bad = items.findIndex((item) => item === null);
    if (bad >= 0) {
      problems.push({ pointer: `${pointer}/value/${bad}`, message: `${JSON.stringify(value[bad])} is not a valid ${describe(rule.value)} for ${key}` });
      return null;
    }
    return { kind: 'criterion', key, operator: operator as FilterOperator, value: items as FilterScalar[] };
  }
  const scalar = toScalar(value, rule.value);
  if (scalar === null) {
    problems.push({ pointer: `${pointer}/value`, message: `${JSON.stringify(value)} is not a valid ${describe(rule.value)} for ${key}` });
    return null;
  }
  return { kind: 'criterion', key, operator: operator as FilterOperator, value: scalar };
}

/** A value in its field's kind, or null. Numbers may come as numeric strings (the docs' own examples do). */
function toScalar(value: unknown, kind: ValueKind): FilterScalar | null {
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? value : null;
    case 'number':
      return toNumber(value);
    case 'bool':
      if (typeof value === 'boolean') return value;
      return value === 'true' ? true : value === 'false' ? false : null;
    case 'timestamp':
      return toEpochMs(value);
  }
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return null;
}

/**
 * Timestamps compare in epoch milliseconds: an RFC 3339 string, or an integer whose magnitude says
 * its unit (seconds below 1e11, milliseconds below 1e14, microseconds below 1e17, else nanoseconds).
 */
function toEpochMs(value: unknown): number | null {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms;
  }
  const number = toNumber(value);
  if (number === null || !Number.isInteger(number) || number < 0) return null;
  if (number < 1e11) return number * 1000;
  if (number < 1e14) return number;
  if (number < 1e17) return Math.floor(number / 1e3);
  return Math.floor(number / 1e6);
}

function describe(kind: ValueKind): string {
  return { string: 'string', number: 'number', bool: 'boolean (true or false)', timestamp: 'timestamp (RFC 3339 or a Unix time integer)' }[kind];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
