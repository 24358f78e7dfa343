/**
 * Ownership challenges (reference §3.4): POST .../logshipping/ownership writes a random token to
 * the destination and remembers its hash for 7 days; a job for a destination that needs one must
 * present that token (a token issued for a parent location covers everything below it).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase64UrlId } from '../../core/ids.ts';
import { ApiError } from '../errors.ts';
import type { ApiDeps } from '../route.ts';
import { challengeLocation, coveringLocations, needsOwnershipChallenge, type Destination } from '../../logs/index.ts';

export const CHALLENGE_LIFETIME_MS = 7 * 24 * 3600 * 1000;

export interface ChallengeOutcome {
  filename: string | null;
  message: string;
  valid: boolean;
}

export async function issueChallenge(deps: ApiDeps, accountId: string, zoneId: string, destination: Destination): Promise<ChallengeOutcome> {
  const token = randomBase64UrlId(48);
  let filename: string;
  try {
    filename = await deps.destinations.writeChallenge(destination, token, accountId);
  } catch (error) {
    deps.logger.debug({ err: error }, 'Ownership challenge could not be written.');
    return { filename: null, message: `the challenge could not be written to the destination: ${(error as Error).message}`, valid: false };
  }
  await deps.control.putOwnershipChallenge({
    zoneId, destinationConf: challengeLocation(destination), tokenHash: hashToken(token), expires: deps.clock.now() + CHALLENGE_LIFETIME_MS,
  });
  return { filename, message: '', valid: true };
}

/** Whether `token` was issued to this zone for the destination or a location above it, and is unexpired. */
export async function challengeMatches(deps: ApiDeps, zoneId: string, destination: Destination, token: string): Promise<boolean> {
  const hash = Buffer.from(hashToken(token), 'hex');
  const now = deps.clock.now();
  for (const location of coveringLocations(destination)) {
    const challenge = await deps.control.getOwnershipChallenge(zoneId, location);
    if (challenge && challenge.expires > now && timingSafeEqual(Buffer.from(challenge.tokenHash, 'hex'), hash)) return true;
  }
  return false;
}

/** Refuses a job whose destination needs a challenge it does not carry (or carries wrongly). */
export async function requireOwnership(deps: ApiDeps, zoneId: string, destination: Destination, token: string | undefined): Promise<void> {
  if (!needsOwnershipChallenge(destination)) return;
  if (token === undefined || token === '') {
    throw new ApiError('API_OWNERSHIP_CHALLENGE_MISSING', {
      message: `missing ownership challenge: ${destination.scheme}:// destinations need the token written by POST /zones/${zoneId}/logshipping/ownership`,
      pointer: '/ownership_challenge',
    });
  }
  if (!await challengeMatches(deps, zoneId, destination, token)) throw new ApiError('API_OWNERSHIP_CHALLENGE_INVALID', { pointer: '/ownership_challenge' });
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
