/**
 * The S3 API's failed-authentication limits around the SigV4 check (CredentialGuard: per client
 * address; past the limit 429 SlowDown with Retry-After). Not per access key id: a signature costs
 * microseconds to check, so a valid one is always checked and passes, from any address, however
 * many others fail on its key id (a key id held at a limit refused every new consumer of its
 * presigned URLs and POST forms); guessing is bounded by the per-address count. The secret lookup
 * runs once per request, right after the cheap parse of the credential, where the key id is first
 * known: the limits are asked there, before the lookup and the HMAC (an attempt whose address's
 * places are all held by checks still under way waits for them, CredentialGuard.admitWhenDecided:
 * a correct signature is never 429 for others' checks not yet decided). A failed check
 * (InvalidAccessKeyId, SignatureDoesNotMatch) counts; a deferred signature (body hash not
 * declared) counts when it is checked; anything else gives the attempt back.
 */
import { AUTH_DEFAULTS } from '../../config/defaults.ts';
import { CredentialGuard, type Admission, type CredentialAttempt, type FailureLimits } from '../../core/auth/credential-guard.ts';
import type { Clock } from '../../core/clock.ts';
import { S3_ERRORS, S3Error } from './s3-error.ts';
import { verifySignature, type SecretLookup, type SigningContext, type VerifiableRequest } from './sigv4.ts';

/** The S3 codes of a signature that did not verify: a wrong guess, counted by the limits. */
const FAILED_AUTHENTICATION = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch']);

export interface LimitedVerifier {
  (request: VerifiableRequest, secrets: SecretLookup, now: number, address: string | undefined): Promise<{ signing: SigningContext; settle: () => void }>;
  /**
   * Another signature check behind the same limits (a POST form's policy signature): `check`
   * looks the secret up through the lookup it is given, which asks the limits first; an
   * InvalidAccessKeyId or SignatureDoesNotMatch it throws counts as a failure.
   */
  guarded<T>(address: string | undefined, secrets: SecretLookup, check: (lookup: SecretLookup) => Promise<T>): Promise<T>;
}

/**
 * verifySignature behind the limits of `limits` (default DEFAULTS.auth). `address` is the client's
 * socket address. `settle` ends an attempt never decided (the request failed before its deferred
 * signature was checked): it is given back.
 */
export function createLimitedVerifier(limits: FailureLimits | undefined, clock: Clock): LimitedVerifier {
  const guard = new CredentialGuard(
    limits ?? {
      windowMs: AUTH_DEFAULTS.failureWindowMs,
      maxPerAddress: AUTH_DEFAULTS.maxFailuresPerAddress,
      maxPerIdentity: AUTH_DEFAULTS.maxFailuresPerIdentity,
    },
    clock,
    { limitIdentity: false },
  );
  const verifier = (request: VerifiableRequest, secrets: SecretLookup, now: number, address: string | undefined) =>
    limitedVerify(request, secrets, now, guard, address);
  return Object.assign(verifier, {
    guarded: <T>(address: string | undefined, secrets: SecretLookup, check: (lookup: SecretLookup) => Promise<T>) =>
      guardedCheck(guard, address, secrets, check),
  });
}

/** The attempt of an admission; a refusal thrown: SlowDown 429 for failures, 503 for checks that stayed under way. */
function admitted(admission: Admission): CredentialAttempt {
  if (admission.admitted) return admission.attempt;
  if (admission.scope === 'pending') throw S3_ERRORS.checksPending(admission.retryAfterMs);
  throw S3_ERRORS.slowDown(admission.retryAfterMs, admission.scope);
}

async function guardedCheck<T>(
  guard: CredentialGuard,
  address: string | undefined,
  secrets: SecretLookup,
  check: (lookup: SecretLookup) => Promise<T>,
): Promise<T> {
  let attempt: CredentialAttempt | undefined;
  const lookup: SecretLookup = async (accessKeyId) => {
    attempt = admitted(await guard.admitWhenDecided(address, accessKeyId));
    return secrets(accessKeyId);
  };
  try {
    const result = await check(lookup);
    attempt?.succeeded();
    return result;
  } catch (error) {
    if (error instanceof S3Error && FAILED_AUTHENTICATION.has(error.s3Code)) attempt?.failed();
    else attempt?.abandoned();
    throw error;
  }
}

async function limitedVerify(
  request: VerifiableRequest,
  secrets: SecretLookup,
  now: number,
  guard: CredentialGuard,
  address: string | undefined,
): Promise<{ signing: SigningContext; settle: () => void }> {
  let attempt: CredentialAttempt | undefined;
  let signing: SigningContext;
  try {
    // The lookup is passed inline (a `const` arrow would be named by tsx on every request).
    signing = await verifySignature(
      request,
      async (accessKeyId) => {
        attempt = admitted(await guard.admitWhenDecided(address, accessKeyId));
        return secrets(accessKeyId);
      },
      now,
    );
  } catch (error) {
    if (error instanceof S3Error && FAILED_AUTHENTICATION.has(error.s3Code)) attempt?.failed();
    else attempt?.abandoned();
    throw error;
  }
  const deferred = signing.verifyDeferred;
  if (deferred) {
    signing.verifyDeferred = (bodySha256) => {
      const mismatch = deferred(bodySha256);
      if (mismatch === undefined) attempt?.succeeded();
      else attempt?.failed();
      return mismatch;
    };
  } else {
    attempt?.succeeded();
  }
  return {
    signing,
    settle() {
      attempt?.abandoned();
    },
  };
}
