/**
 * `npm start`'s first step and `npm run build`: the web dashboard (web/dist, rebuilt only when its
 * sources changed) and the server bundle (dist/, rebuilt only when stale); `--force` builds both.
 * Run: `node --import tsx bin/build.ts [--force]`.
 */
import { buildDashboard } from './build-dashboard.ts';
import { buildServerIfStale } from './build-server.ts';

const force = process.argv.includes('--force');
await buildDashboard({ force });
await buildServerIfStale({ force });
