/**
 * `promtool check metrics` (Prometheus's own linter, /usr/bin/promtool from Debian's `prometheus`
 * package) on a scraped exposition: what a Prometheus server and its users would trip over
 * (counters without `_total`, missing HELP, units in the wrong place, label clashes...). A test that
 * needs it fails, never skips, when it is missing.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

export const PROMTOOL = '/usr/bin/promtool';
/** promtool reads a few hundred lines in milliseconds; this only bounds a hung process. */
const PROMTOOL_TIMEOUT_MS = 30_000;

export interface PromtoolCheck {
  /** promtool's exit code: 0 when it found nothing. */
  code: number;
  /** Every problem it reported (stdout and stderr together), '' when none. */
  problems: string;
}

/** Runs `promtool check metrics` on `exposition` (the text a /metrics answered). */
export async function checkMetrics(exposition: string): Promise<PromtoolCheck> {
  if (!existsSync(PROMTOOL)) {
    throw new Error(`${PROMTOOL} is missing: install Debian's prometheus package (apt-get install --no-install-recommends prometheus); .ci/run does`);
  }
  return new Promise((resolve, reject) => {
    const child = execFile(PROMTOOL, ['check', 'metrics'], { timeout: PROMTOOL_TIMEOUT_MS }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      if (code === -1) return reject(new Error(`promtool check metrics did not finish: ${error!.message}\n${stderr}`));
      resolve({ code, problems: `${stdout}${stderr}`.trim() });
    });
    child.stdin!.end(exposition);
  });
}
