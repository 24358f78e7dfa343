/**
 * Ownership challenges (as the real service makes them): POST .../logshipping/ownership writes a random token to
 * the destination and remembers its hash for 7 days; a job for a destination that needs one must
 * present that token (a token issued for a parent location covers everything below it).
 *
 * By design: a file:// directory belongs to one account at a time. While a zone of another account
 * holds an unexpired challenge for the directory, or has a log job writing there (however old the
 * challenge that proved it: the challenge proves write access once, the job holds the directory for
 * as long as it exists), or either for a directory above or below it, a new challenge there is
 * refused with `valid: false` and the file is left alone; zones of the same account share their
 * directories. The refusal names no zone or job of the other account.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase64UrlId } from '../../core/ids.ts';
import type { OwnershipChallengeRecord, ZoneRecord } from '../../db/control-store.ts';
import { ApiError } from '../errors.ts';
import type { ApiDeps } from '../route.ts';
import { fixedPath, needsOwnershipChallenge, type Destination } from '../../logs/index.ts';
import type { ChallengeTarget } from './file-destinations.ts';

export const CHALLENGE_LIFETIME_MS = 7 * 24 * 3600 * 1000;

export interface ChallengeOutcome {
  filename: string | null;
  message: string;
  valid: boolean;
}

export async function issueChallenge(
  deps: ApiDeps,
  zone: Pick<ZoneRecord, 'id' | 'accountId'>,
  destination: Destination,
  target: ChallengeTarget,
): Promise<ChallengeOutcome> {
  const token = randomBase64UrlId(48);
  const challenge: OwnershipChallengeRecord = {
    zoneId: zone.id,
    destinationConf: target.location,
    tokenHash: hashToken(token),
    expires: deps.clock.now() + CHALLENGE_LIFETIME_MS,
  };
  const claimed = target.realDirectory !== undefined;
  // A file:// directory is claimed before its file is written: of two accounts racing for it, one wins.
  if (claimed && (await deps.control.claimOwnershipChallenge(challenge, zone.accountId)) === 'taken') {
    const directory = destination.scheme === 'file' ? fixedPath(destination.directory) || '/' : target.location;
    return {
      filename: null,
      valid: false,
      message: `the directory ${directory} is taken: another account holds it, or a directory above or below it, with a log job or an unexpired ownership challenge; choose another directory`,
    };
  }
  let filename: string;
  try {
    filename = await deps.destinations.writeChallenge(destination, token, zone.accountId, target.realDirectory);
  } catch (error) {
    deps.logger.debug({ err: error }, 'Ownership challenge could not be written.');
    // Nobody holds the token of an unwritten file: the claim ends at once.
    if (claimed) await deps.control.putOwnershipChallenge({ ...challenge, expires: deps.clock.now() });
    return { filename: null, message: `the challenge could not be written to the destination: ${(error as Error).message}`, valid: false };
  }
  if (!claimed) await deps.control.putOwnershipChallenge(challenge);
  return { filename, message: '', valid: true };
}

/** Whether `token` was issued to this zone for one of the `covering` locations, and is unexpired. */
export async function challengeMatches(deps: ApiDeps, zoneId: string, covering: readonly string[], token: string): Promise<boolean> {
  const hash = Buffer.from(hashToken(token), 'hex');
  const now = deps.clock.now();
  for (const location of covering) {
    const challenge = await deps.control.getOwnershipChallenge(zoneId, location);
    if (challenge && challenge.expires > now && timingSafeEqual(Buffer.from(challenge.tokenHash, 'hex'), hash)) return true;
  }
  return false;
}

/** Refuses a job whose destination needs a challenge it does not carry (or carries wrongly). */
export async function requireOwnership(
  deps: ApiDeps,
  zoneId: string,
  destination: Destination,
  target: ChallengeTarget,
  token: string | undefined,
): Promise<void> {
  if (!needsOwnershipChallenge(destination)) return;
  if (token === undefined || token === '') {
    throw new ApiError('API_OWNERSHIP_CHALLENGE_MISSING', {
      message: `missing ownership challenge: ${destination.scheme}:// destinations need the token written by POST /zones/${zoneId}/logshipping/ownership`,
      pointer: '/ownership_challenge',
    });
  }
  if (!(await challengeMatches(deps, zoneId, target.covering, token)))
    throw new ApiError('API_OWNERSHIP_CHALLENGE_INVALID', { pointer: '/ownership_challenge' });
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
