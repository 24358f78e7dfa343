/**
 * `npm start`'s first step: builds the web dashboard (web/ into web/dist, with vite) only when its
 * sources changed since the last build, so a start never rebuilds the files a running server is
 * serving for nothing. "Changed" is a SHA-256 over the sources' paths and contents (web/index.html,
 * web/vite.config.ts, web/tsconfig.json, everything under web/src) and the installed vite and
 * preact versions, kept in web/dist/.sources.sha256: contents, not mtimes, which a checkout or a
 * copy changes without changing anything. Run by bin/build.ts.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = ['index.html', 'vite.config.ts', 'tsconfig.json', 'src'];
const STAMP = '.sources.sha256';

/** The fingerprint of the dashboard's sources in `web` (a directory laid out like web/). */
export function dashboardSourcesHash(web: string, toolVersions: string = installedVersions()): string {
  const hash = createHash('sha256').update(`${toolVersions}\n`);
  const files = SOURCES.flatMap((name) => filesUnder(join(web, name))).sort();
  for (const file of files) {
    const content = readFileSync(file);
    hash.update(`${relative(web, file).split(sep).join('/')}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

/** `path` itself when it is a file, else every file below it. */
function filesUnder(path: string): string[] {
  const info = statSync(path, { throwIfNoEntry: false });
  if (info === undefined) return [];
  if (!info.isDirectory()) return [path];
  return (readdirSync(path, { recursive: true }) as string[]).map((name) => join(path, name)).filter((file) => statSync(file).isFile());
}

function installedVersions(): string {
  const require = createRequire(join(ROOT, 'package.json'));
  return ['vite', 'preact'].map((name) => `${name}@${(require(`${name}/package.json`) as { version: string }).version}`).join(' ');
}

/** Builds the dashboard with vite when its sources changed (or always, with `force`); says so on stderr when not forced. */
export async function buildDashboard(options: { force: boolean }): Promise<void> {
  const web = join(ROOT, 'web');
  await buildIfChanged(
    web,
    async () => {
      if (!options.force) process.stderr.write('edgeport: building the dashboard (its sources changed since web/dist was built)...\n');
      const { build } = await import('vite');
      await build({ configFile: join(web, 'vite.config.ts') });
    },
    undefined,
    options,
  );
}

/**
 * Builds `web` into `web/dist` with `build` unless the stamp there matches its sources; returns
 * whether it built. The stamp is written only after a successful build.
 */
export async function buildIfChanged(web: string, build: () => Promise<void>, toolVersions?: string, options: { force?: boolean } = {}): Promise<boolean> {
  const hash = dashboardSourcesHash(web, toolVersions);
  const stamp = join(web, 'dist', STAMP);
  const current = existsSync(join(web, 'dist', 'index.html')) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === hash;
  if (current && !options.force) return false;
  await build();
  writeFileSync(stamp, `${hash}\n`);
  return true;
}
