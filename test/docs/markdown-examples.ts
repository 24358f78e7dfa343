/**
 * The examples of a Markdown document, as the docs-examples tests run them. Every fenced block is
 * one of:
 *
 * - `sh` (`bash`, `shell`): run, in order, in the one shell session of the README and the pages;
 * - written to a file when an HTML comment `<!-- file: NAME -->` stands right before it (any
 *   language: a program, a script, a script config, a wrangler.json), and then not run by itself:
 *   a program runs when a shell block runs it, with the command the page shows (`node NAME.mjs`).
 *   The prose before the block names the file (`` `NAME` ``), so a reader knows where to save it;
 * - `toml` after `<!-- config -->`: an edgeport.toml, loaded by the real config loader;
 * - `text` (or no language) after `<!-- output -->`: what the previous run block printed, each
 *   line matched with `…` standing for any run of characters;
 * - any block after `<!-- not run: <why> -->`: not run, for the reason given (installing packages);
 * - other `text` / `console` blocks: illustrations, not run.
 *
 * A `js`, `ts`, `toml` or `json` block with no directive that says what it is fails the test, so a
 * new example cannot slip in untested, nor a program without the file name and command that run it.
 */

export type ExampleKind =
  { kind: 'shell' } | { kind: 'file'; name: string } | { kind: 'config' } | { kind: 'output' } | { kind: 'not-run'; why: string } | { kind: 'illustration' };

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
  // What a reader sees between the previous block and this one.
  let prose = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    const fence = FENCE.exec(line);
    if (!fence) {
      if (trimmed === '') continue;
      directive = DIRECTIVE.test(trimmed) ? trimmed : undefined;
      if (directive === undefined) prose += `${line}\n`;
      continue;
    }
    const [, indent, ticks, language] = fence as unknown as [string, string, string, string];
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && lines[j]!.trim() !== ticks; j++) body.push(lines[j]!.slice(indent.length));
    if (j === lines.length) throw new Error(`${source}:${i + 1}: a fenced block is never closed`);
    const what = kindOf(language, directive, `${source}:${i + 1}`);
    if (what.kind === 'file' && !prose.includes(`\`${what.name}\``)) {
      throw new Error(
        `${source}:${i + 1}: the text before the block must name its file, \`${what.name}\`: the <!-- file --> comment does not show on the page`,
      );
    }
    examples.push({ line: i + 1, language, code: body.length === 0 ? '' : `${body.join('\n')}\n`, what });
    directive = undefined;
    prose = '';
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
    case 'sh':
    case 'bash':
    case 'shell':
      return { kind: 'shell' };
    case 'js':
    case 'mjs':
    case 'ts':
      throw new Error(
        `${where}: a program must say where it is saved, <!-- file: NAME.mjs --> (named in the text too), and a shell block after it run it as a reader would (node NAME.mjs)`,
      );
    case 'toml':
    case 'json':
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
    const pattern = new RegExp(
      `^${line
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    if (!pattern.test(got[i]!)) return `line ${i + 1}: expected ${JSON.stringify(line)}, got ${JSON.stringify(got[i])}`;
  }
  return null;
}
