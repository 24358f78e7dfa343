/**
 * The examples of a Markdown document, as the docs-examples tests run them. Every fenced block is
 * one of:
 *
 * - `sh` (`bash`, `shell`): run, in order, in one shell session per document;
 * - `js` / `mjs` / `ts`: a program, run with node (ts through tsx) in the document's directory;
 * - written to a file first when an HTML comment `<!-- file: NAME -->` stands right before it
 *   (any language: a script, a script config, an edgeport.toml), and then not run by itself;
 * - `toml` after `<!-- config -->`: an edgeport.toml, loaded by the real config loader;
 * - `text` (or no language) after `<!-- output -->`: what the previous run block printed, each
 *   line matched with `…` standing for any run of characters;
 * - any block after `<!-- not run: <why> -->`: not run, for the reason given (installing packages);
 * - other `text` / `console` blocks: illustrations, not run.
 *
 * A `sh`, `js`, `ts`, `toml` or `json` block with no directive that says what it is fails the test,
 * so a new example cannot slip in untested.
 */

export type ExampleKind =
  | { kind: 'shell' }
  | { kind: 'program'; language: 'js' | 'ts' }
  | { kind: 'file'; name: string }
  | { kind: 'config' }
  | { kind: 'output' }
  | { kind: 'not-run'; why: string }
  | { kind: 'illustration' };

export interface Example {
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  code: string;
  what: ExampleKind;
}

const FENCE = /^(\s*)(`{3,})([\w-]*)\s*$/;
const DIRECTIVE = /^<!--\s*(file:\s*(\S+)|config|output|not run:\s*(.+?))\s*-->$/;

/** The fenced blocks of `markdown` and what each is; throws naming the line of a block that says nothing. */
export function parseExamples(markdown: string, source: string): Example[] {
  const lines = markdown.split('\n');
  const examples: Example[] = [];
  let directive: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    const fence = FENCE.exec(line);
    if (!fence) {
      if (trimmed === '') continue;
      directive = DIRECTIVE.test(trimmed) ? trimmed : undefined;
      continue;
    }
    const [, indent, ticks, language] = fence as unknown as [string, string, string, string];
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && lines[j]!.trim() !== ticks; j++) body.push(lines[j]!.slice(indent.length));
    if (j === lines.length) throw new Error(`${source}:${i + 1}: a fenced block is never closed`);
    examples.push({ line: i + 1, language, code: body.length === 0 ? '' : `${body.join('\n')}\n`, what: kindOf(language, directive, `${source}:${i + 1}`) });
    directive = undefined;
    i = j;
  }
  return examples;
}

function kindOf(language: string, directive: string | undefined, where: string): ExampleKind {
  const m = directive === undefined ? null : DIRECTIVE.exec(directive);
  if (m?.[2]) return { kind: 'file', name: m[2] };
  if (m?.[3]) return { kind: 'not-run', why: m[3] };
  if (m?.[1] === 'config') {
    if (language !== 'toml') throw new Error(`${where}: <!-- config --> goes before a toml block`);
    return { kind: 'config' };
  }
  if (m?.[1] === 'output') return { kind: 'output' };
  switch (language) {
    case 'sh': case 'bash': case 'shell':
      return { kind: 'shell' };
    case 'js': case 'mjs':
      return { kind: 'program', language: 'js' };
    case 'ts':
      return { kind: 'program', language: 'ts' };
    case 'toml': case 'json':
      throw new Error(`${where}: a ${language} block must say what it is: <!-- file: NAME -->, <!-- config --> or <!-- not run: why -->`);
    default:
      return { kind: 'illustration' };
  }
}

/**
 * Whether `actual` is what an `<!-- output -->` block shows: line by line, where `…` in an
 * expected line stands for any run of characters (and a CR before a line end is not shown).
 * Returns null when it matches, else why not.
 */
export function outputMismatch(expected: string, actual: string): string | null {
  const want = expected.replace(/\n+$/, '').split('\n');
  // A terminal shows a CR LF line end (HTTP headers with curl -i) as a plain line end.
  const got = actual.replace(/\r$/gm, '').replace(/\n+$/, '').split('\n');
  if (want.length !== got.length) return `expected ${want.length} lines, got ${got.length}:\n${actual}`;
  for (const [i, line] of want.entries()) {
    const pattern = new RegExp(`^${line.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    if (!pattern.test(got[i]!)) return `line ${i + 1}: expected ${JSON.stringify(line)}, got ${JSON.stringify(got[i])}`;
  }
  return null;
}
