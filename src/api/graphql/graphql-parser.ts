/**
 * A parser for the part of GraphQL (spec, October 2021: §2 Language) that analytics clients send:
 * one query operation (optionally named, with variable definitions), fields with aliases,
 * arguments and selection sets, and every input value form (variables, numbers, strings, booleans,
 * null, enums, lists, objects). Fragments, directives, mutations and subscriptions are refused with
 * a GraphQLSyntaxError naming them. Bounded before anything is built past them: the text's length
 * (MAX_QUERY_LENGTH), its tokens (MAX_TOKENS) and how deeply selections, values and types nest
 * (MAX_DEPTH); one pass, no backtracking (a 64 KiB query parses in a few milliseconds).
 */
import { GraphQLRequestError } from './graphql-errors.ts';

export type GraphQLValue =
  | { kind: 'variable'; name: string }
  | { kind: 'int' | 'float'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
  | { kind: 'enum'; value: string }
  | { kind: 'list'; values: GraphQLValue[] }
  | { kind: 'object'; fields: Array<[string, GraphQLValue]> };

export interface GraphQLField {
  alias: string | undefined;
  name: string;
  arguments: Array<[string, GraphQLValue]>;
  selections: GraphQLField[];
}

export interface GraphQLOperation {
  name: string | undefined;
  /** Declared variables (their types are not checked: values are read where they are used). */
  variables: string[];
  selections: GraphQLField[];
}

export class GraphQLSyntaxError extends GraphQLRequestError {
  constructor(message: string) {
    super('GRAPHQL_PARSE_FAILED', message);
  }
}

export const MAX_QUERY_LENGTH = 64 * 1024;
export const MAX_DEPTH = 32;
/** Names, punctuators, numbers and strings (ignored tokens do not count); a dense 64 KiB text has about 32,000. */
export const MAX_TOKENS = 20_000;

const NAME = /[_A-Za-z][_0-9A-Za-z]*/y;
const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const PUNCTUATION = new Set(['{', '}', '(', ')', '[', ']', ':', '$', '!', '=', '@', '|', '&']);

/** Parses `text` and picks its operation (`operationName`, or the only one). */
export function parseGraphQL(text: string, operationName?: string | null): GraphQLOperation {
  if (text.length > MAX_QUERY_LENGTH) throw new GraphQLSyntaxError(`the query is ${text.length} characters long; at most ${MAX_QUERY_LENGTH} are accepted`);
  const parser = new Parser(text);
  const operations = parser.document();
  if (operationName !== undefined && operationName !== null) {
    const named = operations.find((op) => op.name === operationName);
    if (!named) throw new GraphQLSyntaxError(`the query has no operation named "${operationName}"`);
    return named;
  }
  if (operations.length > 1) throw new GraphQLSyntaxError('the query has several operations: name the one to run in operationName');
  return operations[0]!;
}

class Parser {
  readonly #text: string;
  #at = 0;
  #tokens = 0;

  constructor(text: string) {
    this.#text = text;
  }

  document(): GraphQLOperation[] {
    const operations: GraphQLOperation[] = [];
    this.#skip();
    while (this.#at < this.#text.length) {
      operations.push(this.#operation());
      this.#skip();
    }
    if (operations.length === 0) throw new GraphQLSyntaxError('the query is empty');
    return operations;
  }

  #operation(): GraphQLOperation {
    if (this.#peek() === '{') return { name: undefined, variables: [], selections: this.#selectionSet(0) };
    const keyword = this.#name();
    if (keyword === 'fragment') throw new GraphQLSyntaxError('fragments are not supported: write the fields out');
    if (keyword !== 'query') throw new GraphQLSyntaxError(`${keyword} operations are not supported: only queries are`);
    const name = this.#peekName() ? this.#name() : undefined;
    const variables: string[] = [];
    if (this.#peek() === '(') {
      this.#expect('(');
      while (this.#peek() !== ')') {
        this.#expect('$');
        variables.push(this.#name());
        this.#expect(':');
        this.#type();
        if (this.#peek() === '=') {
          this.#expect('=');
          this.#value(0, true);
        }
      }
      this.#expect(')');
    }
    this.#noDirective();
    return { name, variables, selections: this.#selectionSet(0) };
  }

  #type(depth = 0): void {
    if (depth > MAX_DEPTH) throw new GraphQLSyntaxError(`a variable's type nests more than ${MAX_DEPTH} lists deep`);
    if (this.#peek() === '[') {
      this.#expect('[');
      this.#type(depth + 1);
      this.#expect(']');
    } else {
      this.#name();
    }
    if (this.#peek() === '!') this.#expect('!');
  }

  #selectionSet(depth: number): GraphQLField[] {
    if (depth > MAX_DEPTH) throw new GraphQLSyntaxError(`the query nests more than ${MAX_DEPTH} levels deep`);
    this.#expect('{');
    const fields: GraphQLField[] = [];
    while (this.#peek() !== '}') {
      if (this.#text.startsWith('...', this.#at)) throw new GraphQLSyntaxError('fragments are not supported: write the fields out');
      fields.push(this.#field(depth));
    }
    this.#expect('}');
    if (fields.length === 0) throw new GraphQLSyntaxError('a selection set must select at least one field');
    return fields;
  }

  #field(depth: number): GraphQLField {
    let alias: string | undefined;
    let name = this.#name();
    if (this.#peek() === ':') {
      this.#expect(':');
      alias = name;
      name = this.#name();
    }
    const args: Array<[string, GraphQLValue]> = [];
    if (this.#peek() === '(') {
      this.#expect('(');
      while (this.#peek() !== ')') {
        const arg = this.#name();
        this.#expect(':');
        args.push([arg, this.#value(depth + 1, false)]);
      }
      this.#expect(')');
    }
    this.#noDirective();
    const selections = this.#peek() === '{' ? this.#selectionSet(depth + 1) : [];
    return { alias, name, arguments: args, selections };
  }

  #value(depth: number, constant: boolean): GraphQLValue {
    if (depth > MAX_DEPTH) throw new GraphQLSyntaxError(`the query nests more than ${MAX_DEPTH} levels deep`);
    const c = this.#peek();
    if (c === '$') {
      if (constant) throw this.#unexpected('a variable in a default value');
      this.#expect('$');
      return { kind: 'variable', name: this.#name() };
    }
    if (c === '"') return { kind: 'string', value: this.#string() };
    if (c === '[') {
      this.#expect('[');
      const values: GraphQLValue[] = [];
      while (this.#peek() !== ']') values.push(this.#value(depth + 1, constant));
      this.#expect(']');
      return { kind: 'list', values };
    }
    if (c === '{') {
      this.#expect('{');
      const fields: Array<[string, GraphQLValue]> = [];
      while (this.#peek() !== '}') {
        const name = this.#name();
        this.#expect(':');
        fields.push([name, this.#value(depth + 1, constant)]);
      }
      this.#expect('}');
      return { kind: 'object', fields };
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      NUMBER.lastIndex = this.#at;
      const match = NUMBER.exec(this.#text);
      if (!match) throw this.#unexpected(c);
      this.#counted();
      this.#at += match[0].length;
      this.#skip();
      return { kind: match[2] || match[3] ? 'float' : 'int', value: Number(match[0]) };
    }
    const name = this.#name();
    if (name === 'true' || name === 'false') return { kind: 'boolean', value: name === 'true' };
    if (name === 'null') return { kind: 'null' };
    return { kind: 'enum', value: name };
  }

  #string(): string {
    if (this.#text.startsWith('"""', this.#at)) throw new GraphQLSyntaxError('block strings ("""...""") are not supported: use "..." or a variable');
    this.#counted();
    this.#at++;
    let value = '';
    for (;;) {
      const c = this.#text[this.#at++];
      if (c === undefined || c === '\n' || c === '\r') throw new GraphQLSyntaxError('a string is not closed before the end of its line');
      if (c === '"') break;
      if (c !== '\\') {
        value += c;
        continue;
      }
      const escaped = this.#text[this.#at++];
      const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      if (escaped !== undefined && escaped in simple) value += simple[escaped];
      else if (escaped === 'u' && /^[0-9A-Fa-f]{4}$/.test(this.#text.slice(this.#at, this.#at + 4))) {
        value += String.fromCharCode(parseInt(this.#text.slice(this.#at, this.#at + 4), 16));
        this.#at += 4;
      } else throw new GraphQLSyntaxError(`\\${escaped ?? ''} is not a valid escape in a string`);
    }
    this.#skip();
    return value;
  }

  #noDirective(): void {
    if (this.#peek() === '@') throw new GraphQLSyntaxError('directives are not supported');
  }

  #peekName(): boolean {
    NAME.lastIndex = this.#at;
    return NAME.test(this.#text);
  }

  #name(): string {
    NAME.lastIndex = this.#at;
    const match = NAME.exec(this.#text);
    if (!match) throw this.#unexpected(this.#peek() ?? 'the end of the query', 'a name');
    this.#counted();
    this.#at += match[0].length;
    this.#skip();
    return match[0];
  }

  #peek(): string | undefined {
    return this.#text[this.#at];
  }

  #expect(token: string): void {
    if (this.#text[this.#at] !== token) throw this.#unexpected(this.#peek() ?? 'the end of the query', `"${token}"`);
    this.#counted();
    this.#at++;
    this.#skip();
  }

  /** Counts the token about to be read: past MAX_TOKENS the query is refused, before anything more is built. */
  #counted(): void {
    if (++this.#tokens > MAX_TOKENS)
      throw new GraphQLSyntaxError(`the query has more than ${MAX_TOKENS} tokens (names, punctuation, values); at most ${MAX_TOKENS} are accepted`);
  }

  #unexpected(found: string, wanted?: string): GraphQLSyntaxError {
    const shown = PUNCTUATION.has(found) || found.length > 1 ? found : JSON.stringify(found);
    return new GraphQLSyntaxError(`syntax error at character ${this.#at + 1}: unexpected ${shown}${wanted ? `, expected ${wanted}` : ''}`);
  }

  /** Skips ignored tokens: white space, line terminators, commas, comments and a byte-order mark. */
  #skip(): void {
    const text = this.#text;
    while (this.#at < text.length) {
      const c = text[this.#at]!;
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === ',' || c === '\uFEFF') this.#at++;
      else if (c === '#') while (this.#at < text.length && text[this.#at] !== '\n' && text[this.#at] !== '\r') this.#at++;
      else break;
    }
  }
}
