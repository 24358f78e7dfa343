/**
 * Evaluates a parsed job filter (parse-filter.ts) against a record: numbers compare as numbers,
 * strings as strings (case-sensitive), timestamps in epoch ms; a field the record does not carry
 * never matches a positive operator (and so always matches its negation).
 */
import type { FilterCriterion, FilterExpression, FilterScalar } from './parse-filter.ts';

export type RecordFields = Readonly<Record<string, unknown>>;

export function evaluateFilter(expression: FilterExpression, record: RecordFields): boolean {
  switch (expression.kind) {
    case 'and':
      for (const clause of expression.clauses) if (!evaluateFilter(clause, record)) return false;
      return true;
    case 'or':
      for (const clause of expression.clauses) if (evaluateFilter(clause, record)) return true;
      return false;
    case 'criterion':
      return evaluateCriterion(expression, record[expression.key]);
  }
}

function evaluateCriterion(criterion: FilterCriterion, actual: unknown): boolean {
  const { operator, value } = criterion;
  if (operator.startsWith('!')) return !positive(operator.slice(1), value, actual);
  return positive(operator, value, actual);
}

function positive(operator: string, value: FilterScalar | readonly FilterScalar[], actual: unknown): boolean {
  if (actual === undefined || actual === null) return false;
  switch (operator) {
    case 'eq':
      return same(actual, value as FilterScalar);
    case 'in':
      return (value as readonly FilterScalar[]).some((v) => same(actual, v));
    case 'lt':
      return typeof actual === 'number' && actual < (value as number);
    case 'leq':
      return typeof actual === 'number' && actual <= (value as number);
    case 'gt':
      return typeof actual === 'number' && actual > (value as number);
    case 'geq':
      return typeof actual === 'number' && actual >= (value as number);
    case 'startsWith':
      return typeof actual === 'string' && actual.startsWith(value as string);
    case 'endsWith':
      return typeof actual === 'string' && actual.endsWith(value as string);
    case 'contains':
      if (Array.isArray(actual)) return actual.includes(value);
      return typeof actual === 'string' && actual.includes(value as string);
    default:
      return false;
  }
}

function same(actual: unknown, value: FilterScalar): boolean {
  if (typeof actual === typeof value) return actual === value;
  // A numeric field logged as a string (or the reverse) still compares by number.
  if (typeof value === 'number' && typeof actual === 'string') return actual.trim() !== '' && Number(actual) === value;
  if (typeof value === 'string' && typeof actual === 'number') return value.trim() !== '' && Number(value) === actual;
  return false;
}
