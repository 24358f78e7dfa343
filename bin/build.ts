/**
 * `npm start`'s first step, `npm test`'s and `npm run build`: the web dashboard (web/dist, rebuilt
 * only when its sources changed) and the server bundle (dist/, rebuilt only when stale); `--force`
 * builds both. Run: `node --import tsx bin/build.ts [--force]`.
 */
import { fileURLToPath } from 'node:url';
import { buildDashboard } from './build-dashboard.ts';
import { buildServerIfStale } from './build-server.ts';

export async function buildStale(options: { force: boolean }): Promise<void> {
  await buildDashboard(options);
  await buildServerIfStale(options);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildStale({ force: process.argv.includes('--force') });
