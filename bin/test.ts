/**
 * `npm test`: builds what is stale (bin/build.ts), then runs the type check, the lint and the test
 * files side by side. The tests print as they run; the type check and the lint print one line each
 * when they pass, everything they said when they fail. Exits 1 if any of the three failed.
 * Run: `node --import tsx bin/test.ts` (the package's `test` script).
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { buildStale } from './build.ts';

interface Outcome {
  script: string;
  code: number;
}

/**
 * `npm run <script>`; with `quiet`, its output is held and printed (to stderr) only if it fails,
 * so it never lands in the middle of the test runner's.
 */
function runScript(script: string, quiet: boolean): Promise<Outcome> {
  const started = performance.now();
  const child = spawn('npm', ['run', '--silent', script], { stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  const held: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => held.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => held.push(chunk));
  return new Promise((resolve) => {
    child.once('error', (error) => {
      held.push(Buffer.from(`${error.message}\n`));
      finish(127);
    });
    child.once('close', (code, signal) => finish(code ?? (signal ? 128 : 1)));
    const finish = (code: number) => {
      if (quiet) {
        process.stderr.write(
          code === 0
            ? `# npm test: ${script} passed in ${((performance.now() - started) / 1000).toFixed(1)} s\n`
            : `# npm test: ${script} FAILED (exit ${code}):\n${Buffer.concat(held).toString()}\n`,
        );
      }
      resolve({ script, code });
    };
  });
}

await buildStale({ force: false });
const outcomes = await Promise.all([runScript('test:unit', false), runScript('typecheck', true), runScript('lint', true)]);
process.stderr.write(`# npm test: ${outcomes.map((o) => `${o.script} ${o.code === 0 ? 'passed' : `FAILED (exit ${o.code})`}`).join(', ')}\n`);
process.exitCode = outcomes.every((outcome) => outcome.code === 0) ? 0 : 1;
