/**
 * Errors of the S3 API: S3's code, HTTP status and message. Store engine errors map through the
 * store catalog's `s3Code`/`status`; the rest are the API's own (authentication, request shape).
 */
import { STORE_ERRORS, StoreError, storeFaultOf } from '../engine/errors.ts';

export class S3Error extends Error {
  readonly s3Code: string;
  readonly status: number;
  /** Response headers the error answer carries (Retry-After of SlowDown). */
  readonly headers: Readonly<Record<string, string>>;
  /** Elements the error document carries after its Message, as S3's do (InvalidPartNumber's PartNumberRequested). */
  readonly fields: Readonly<Record<string, string | number>>;
  constructor(s3Code: string, status: number, message: string, headers: Record<string, string> = {}, fields: Record<string, string | number> = {}) {
    super(message);
    this.name = 'S3Error';
    this.s3Code = s3Code;
    this.status = status;
    this.headers = headers;
    this.fields = fields;
  }
}

export const S3_ERRORS = {
  accessDenied: () => new S3Error('AccessDenied', 403, 'Access Denied'),
  invalidAccessKeyId: () => new S3Error('InvalidAccessKeyId', 403, 'The AWS Access Key Id you provided does not exist in our records.'),
  /** `details`: what the signature should have covered (AWSAccessKeyId, StringToSign, SignatureProvided, CanonicalRequest), as S3 shows it. */
  signatureDoesNotMatch: (details: Record<string, string> = {}) =>
    new S3Error(
      'SignatureDoesNotMatch',
      403,
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
      {},
      details,
    ),
  /** A session token (X-Amz-Security-Token): S3's code for a token it cannot honour; edgeport issues none. */
  sessionToken: () =>
    new S3Error(
      'InvalidToken',
      400,
      'The provided token is malformed or otherwise invalid: edgeport access keys are long-lived and have no session token. ' +
        'Sign with an edgeport access key id and secret and no X-Amz-Security-Token (unset AWS_SESSION_TOKEN, or the sessionToken of the credentials).',
    ),
  expiredPresigned: () => new S3Error('AccessDenied', 403, 'Request has expired'),
  requestTimeTooSkewed: () => new S3Error('RequestTimeTooSkewed', 403, 'The difference between the request time and the current time is too large.'),
  missingSecurityHeader: () =>
    new S3Error('AccessDenied', 403, 'Missing authentication: sign the request with AWS Signature Version 4 (Authorization header or presigned URL).'),
  browserVisit: (dashboard: string | undefined) =>
    new S3Error(
      'AccessDenied',
      403,
      'This port is the S3-compatible API of edgeport, for S3 clients, which sign every request (AWS Signature Version 4). ' +
        `To browse buckets in a browser, open the dashboard${dashboard === undefined ? ' (on the port of the management API, 8081 by default)' : `: ${dashboard}`}.`,
    ),
  /** Signature Version 2 (header, query or form), as S3 answers it where only SigV4 is taken. */
  signatureV2: () => new S3Error('InvalidRequest', 400, 'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.'),
  /** A header-signed request with neither X-Amz-Date nor Date (or an X-Amz-Date that is no time): S3's answer. */
  missingRequestDate: () => new S3Error('AccessDenied', 403, 'AWS authentication requires a valid Date or x-amz-date header'),
  /** A presigned URL's X-Amz-* parameter that is missing or malformed (S3's code for the query form's own parameters). */
  authorizationQueryParameters: (message: string) => new S3Error('AuthorizationQueryParametersError', 400, message),
  authorizationMalformed: (why: string) => new S3Error('AuthorizationHeaderMalformed', 400, `The authorization header is malformed; ${why}`),
  contentSha256Mismatch: () => new S3Error('XAmzContentSHA256Mismatch', 400, "The provided 'x-amz-content-sha256' header does not match what was computed."),
  badDigest: () => new S3Error('BadDigest', 400, 'The Content-MD5 or checksum you specified did not match what we received.'),
  invalidDigest: () => new S3Error('InvalidDigest', 400, 'The Content-MD5 you specified is not valid.'),
  malformedXml: () => new S3Error('MalformedXML', 400, 'The XML you provided was not well-formed or did not validate against our published schema.'),
  notImplemented: (what: string) => new S3Error('NotImplemented', 501, `${what} is not implemented by edgeport.`),
  methodNotAllowed: () => new S3Error('MethodNotAllowed', 405, 'The specified method is not allowed against this resource.'),
  invalidArgument: (message: string) => new S3Error('InvalidArgument', 400, message),
  /** A storage class the store does not have (S3's and the platform's code for one it does not take). */
  invalidStorageClass: (value: string) =>
    new S3Error('InvalidStorageClass', 400, `The storage class you specified is not valid: x-amz-storage-class must be STANDARD or STANDARD_IA, not ${value}.`),
  missingContentLength: () => new S3Error('MissingContentLength', 411, 'You must provide the Content-Length HTTP header.'),
  invalidRequest: (message: string) => new S3Error('InvalidRequest', 400, message),
  /** A path whose percent-escapes are malformed or do not spell UTF-8 (S3's own answer and message). */
  invalidUri: () => new S3Error('InvalidURI', 400, "Couldn't parse the specified URI."),
  /**
   * Too many failed authentications from the client's address or for the access key id. 429, not
   * AWS's 503: a 4xx puts the refusal on the client (monitoring and load balancers count 5xx
   * against the server), and the platform's own S3 API throttles with 429. Code SlowDown, which
   * SDKs that classify by code (botocore) treat as throttling, as those classifying by status do 429.
   */
  /**
   * Every place of the client's address was held, for seconds, by signature checks still under way
   * (such as uploads whose signature is checked when their body ends): no failure, so not 429 but
   * S3's own SlowDown 503, which SDKs retry after Retry-After.
   */
  checksPending: (retryAfterMs: number) => {
    const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    return new S3Error(
      'SlowDown',
      503,
      `Please reduce your request rate: too many signature checks from this address are still under way; retry after ${seconds} s.`,
      { 'retry-after': String(seconds) },
    );
  },
  slowDown: (retryAfterMs: number, scope: 'address' | 'identity') => {
    const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    return new S3Error(
      'SlowDown',
      429,
      `Please reduce your request rate: too many failed authentications ${scope === 'address' ? 'from this address' : 'for this access key id'}; retry after ${seconds} s.`,
      { 'retry-after': String(seconds) },
    );
  },
} as const;

/**
 * Any error -> the S3 error to send; unknown errors become InternalError. A backend fault (the
 * database, the blob store or the disk down, slow or full) is `fault`: 503 with Retry-After.
 */
export function toS3Error(error: unknown): { error: S3Error; internal: boolean; fault?: StoreError } {
  if (error instanceof S3Error) return { error, internal: false };
  const fault = storeFaultOf(error);
  if (fault) {
    const entry = STORE_ERRORS[fault.code];
    return {
      error: new S3Error(entry.s3Code, entry.status, fault.message, { 'retry-after': String(fault.details?.retryAfterS ?? 1) }),
      internal: false,
      fault,
    };
  }
  if (error instanceof StoreError) {
    const entry = STORE_ERRORS[error.code];
    return { error: new S3Error(entry.s3Code, entry.status, error.message, {}, storeErrorFields(error)), internal: entry.kind === 'system' };
  }
  return { error: new S3Error('InternalError', 500, 'We encountered an internal error. Please try again.'), internal: true };
}

/** The elements S3 adds to a store error's document: the part asked for and the object's part count of InvalidPartNumber. */
function storeErrorFields(error: StoreError): Record<string, string | number> {
  if (error.code !== 'STORE_INVALID_PART_NUMBER' || error.details === undefined) return {};
  const { partNumberRequested, actualPartCount } = error.details;
  return typeof partNumberRequested === 'number' && typeof actualPartCount === 'number'
    ? { PartNumberRequested: partNumberRequested, ActualPartCount: actualPartCount }
    : {};
}
