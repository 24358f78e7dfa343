/**
 * The suite's own rules on time, checked on its source. Every test (and every top-level hook)
 * under test/ carries its own `{ timeout }`: Node 24's runner applies `--test-timeout` to each
 * test, but Node 22's applies it to each whole file (its process is SIGTERMed, every test of the
 * file counts as cancelled), so the per-test limit must be in the test. `--test-timeout` is only
 * a backstop against a file that hangs outside any test, longer than every test of the largest
 * file could take; `test:unit` and `test:postgres` run with the same runner flags.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TEST_DIR = join(ROOT, 'test');
/** Run by tests in subprocesses, under rules of their own (see each file). */
const FIXTURES = join(TEST_DIR, 'helpers', 'fixtures');
/** No single test may need more. */
const MAX_TEST_TIMEOUT_MS = 300_000;
const TESTS = new Set(['test', 'it', 'describe', 'suite']);
const HOOKS = new Set(['before', 'after', 'beforeEach', 'afterEach']);

interface Call {
  where: string;
  /** The `timeout` value when it is a number literal; null when missing; NaN when an expression. */
  timeout: number | null;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === FIXTURES ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The `timeout` of an options object literal: its number, NaN for any other expression, null when absent. */
function timeoutOf(options: ts.Expression | undefined): number | null {
  if (options === undefined || !ts.isObjectLiteralExpression(options)) return null;
  const property = options.properties.find((p) => p.name !== undefined && ts.isIdentifier(p.name) && p.name.text === 'timeout');
  if (property === undefined) return null;
  if (!ts.isPropertyAssignment(property)) return Number.NaN;
  return ts.isNumericLiteral(property.initializer) ? Number(property.initializer.text) : Number.NaN;
}

/** Every test, suite and top-level hook a file declares, with its timeout; and the .case.ts files it imports. */
function declared(file: string): { calls: Call[]; cases: string[] } {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const names = new Map<string, string>();
  const cases: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const from = statement.moduleSpecifier.text;
    if (from.endsWith('.case.ts')) cases.push(resolve(dirname(file), from));
    if (from !== 'node:test' || statement.importClause === undefined || statement.importClause.isTypeOnly) continue;
    if (statement.importClause.name) names.set(statement.importClause.name.text, 'test');
    const bindings = statement.importClause.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) names.set(element.name.text, (element.propertyName ?? element.name).text);
    }
  }
  const calls: Call[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const kind = ts.isIdentifier(callee)
        ? names.get(callee.text)
        : // t.test(name, [options,] fn): a subtest; `re.test(text)` has one argument.
          ts.isPropertyAccessExpression(callee) && callee.name.text === 'test' && node.arguments.length >= 2
          ? 'test'
          : undefined;
      const where = `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
      if (kind !== undefined && TESTS.has(kind)) calls.push({ where, timeout: timeoutOf(node.arguments[1]) });
      if (kind !== undefined && HOOKS.has(kind) && ts.isSourceFile(node.parent.parent)) calls.push({ where, timeout: timeoutOf(node.arguments[1]) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { calls, cases };
}

/** The runner's flags in an npm script: what comes between `--test` and the file list. */
function runnerFlags(script: string): string[] {
  const words = script.split(/\s+/);
  return words
    .slice(
      words.indexOf('--test'),
      words.findIndex((word) => word.startsWith('$(')),
    )
    .filter((word) => word.startsWith('--test'));
}

test('every test, suite and top-level hook under test/ has a timeout of its own, at most 5 minutes', { timeout: 30_000 }, () => {
  const problems: string[] = [];
  let count = 0;
  for (const file of sourceFiles(TEST_DIR)) {
    for (const call of declared(file).calls) {
      count++;
      if (call.timeout === null) problems.push(`${call.where}: no { timeout } (Node 22's --test-timeout would cancel the whole file instead)`);
      else if (!(call.timeout >= 1_000 && call.timeout <= MAX_TEST_TIMEOUT_MS))
        problems.push(`${call.where}: timeout must be a number from 1_000 to ${MAX_TEST_TIMEOUT_MS}`);
    }
  }
  assert.ok(count > 500, `found only ${count} tests: is the scan broken?`);
  assert.deepEqual(problems, []);
});

test("test:unit and test:postgres run with the same runner flags, and the file-level backstop outlasts every file's tests", { timeout: 30_000 }, (t) => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const flags = runnerFlags(scripts['test:unit']!);
  assert.deepEqual(runnerFlags(scripts['test:postgres']!), flags);
  // Not --test-force-exit: it would hide a test that leaves a handle open (a file that does not end is
  // a failure to fix), and it makes the runner exit before reporters writing to files have flushed.
  assert.ok(!flags.includes('--test-force-exit'));
  const backstop = Number(/^--test-timeout=(\d+)$/.exec(flags.find((flag) => flag.startsWith('--test-timeout=')) ?? '')?.[1]);
  assert.ok(backstop > 0, '--test-timeout is set (a backstop for a file that hangs outside its tests)');

  const perFile = sourceFiles(TEST_DIR)
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => {
      const { calls, cases } = declared(file);
      const all = [...calls, ...cases.flatMap((path) => declared(path).calls)];
      return { file: relative(ROOT, file), ms: all.reduce((sum, call) => sum + (call.timeout ?? 0), 0) };
    })
    .sort((a, b) => b.ms - a.ms);
  t.diagnostic(
    `largest sums of per-test timeouts: ${perFile
      .slice(0, 3)
      .map((f) => `${f.file} ${f.ms / 1000} s`)
      .join(', ')}; backstop ${backstop / 1000} s`,
  );
  assert.ok(perFile[0]!.ms < backstop, `${perFile[0]!.file}: its tests may take ${perFile[0]!.ms} ms, more than the backstop of ${backstop} ms`);
});
