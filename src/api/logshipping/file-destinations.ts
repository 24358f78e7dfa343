/**
 * Where a log destination's ownership challenge lives, as the job and ownership routes check it:
 * for file:// destinations, the real path of the directory before any `{DATE}` segment, refused
 * (400 / 1002 on /destination_conf, naming the allowed roots) outside `[logs] file_roots`, inside
 * the data dir, or a root itself (unless `[logs] file_roots_claimable`). Challenges of file:// destinations are stored and matched by that real path, so
 * `//`, `file://localhost/` or a symbolic link cannot make one directory look like two.
 */
import { challengeLocation, coveringLocations, fixedPath, type Destination } from '../../logs/index.ts';
import { ApiError } from '../errors.ts';
import type { ApiDeps } from '../route.ts';

export interface ChallengeTarget {
  /** The location a challenge is stored under (`file://<real dir>`, `store://bucket/prefix`). */
  location: string;
  /** The location and each one above it: a challenge for any of them covers the destination. */
  covering: string[];
  /** file:// only: the real directory the challenge file goes into. */
  realDirectory?: string;
}

/** The destination's challenge location; a file:// destination outside the file roots is refused. */
export async function challengeTarget(deps: Pick<ApiDeps, 'destinations'>, conf: string, destination: Destination): Promise<ChallengeTarget> {
  if (destination.scheme !== 'file') return { location: challengeLocation(destination), covering: coveringLocations(destination) };
  const realDirectory = await requireFileRoot(deps, conf, destination);
  const real: Destination = { scheme: 'file', directory: realDirectory };
  return { location: challengeLocation(real), covering: coveringLocations(real), realDirectory };
}

/** The real directory of a file:// destination (before any `{DATE}`); 400 / 1002 when it may not be written. */
export async function requireFileRoot(deps: Pick<ApiDeps, 'destinations'>, conf: string, destination: Destination & { scheme: 'file' }): Promise<string> {
  const check = await deps.destinations.fileRoots.checkClaim(fixedPath(destination.directory) || '/');
  if (check.ok) return check.realPath;
  throw new ApiError('API_JOB_INVALID', {
    message: `'${conf}' is not a valid value for destination_conf because ${check.reason}`,
    pointer: '/destination_conf',
  });
}
