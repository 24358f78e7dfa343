/** Input values of a parsed query as JavaScript values, its variables filled in. */
import type { GraphQLValue } from './graphql-parser.ts';

/** A value with its variables filled in (a variable that was not given is undefined, as if left out). */
export function resolve(value: GraphQLValue | undefined, variables: Record<string, unknown>): unknown {
  if (value === undefined) return undefined;
  switch (value.kind) {
    case 'variable':
      return Object.hasOwn(variables, value.name) ? variables[value.name] : undefined;
    case 'int':
    case 'float':
    case 'string':
    case 'boolean':
    case 'enum':
      return value.value;
    case 'null':
      return null;
    case 'list':
      return value.values.map((v) => resolve(v, variables));
    case 'object':
      return Object.fromEntries(value.fields.map(([k, v]) => [k, resolve(v, variables)]));
  }
}
