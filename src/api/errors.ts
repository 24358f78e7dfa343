/**
 * API_ERRORS: every failure the management API reports, with its HTTP status, the numeric code of
 * the real API and its message; `<...>` marks the
 * parts each error fills in. Where the real code is not public, edgeport picked one in the same
 * family; docs/errors.md lists them all.
 *
 * Statuses avoid 408/409/429/5xx for user errors: the official SDK silently retries those. The
 * two throttling answers (429 and 503, code 971 as the real API throttles) are meant to be retried:
 * they carry Retry-After, which the SDK waits for.
 */
import { EdgeportError } from '../core/errors/edgeport-error.ts';

export type ApiErrorCode =
  | 'API_MISSING_CREDENTIALS'
  | 'API_INVALID_REQUEST_HEADERS'
  | 'API_UNKNOWN_CREDENTIALS'
  | 'API_TOKEN_UNKNOWN'
  | 'API_TOKEN_INACTIVE'
  | 'API_TOKEN_FORBIDDEN'
  | 'API_TOKEN_UNAUTHORIZED'
  | 'API_TOKEN_INVALID_BODY'
  | 'API_TOKEN_LIMIT'
  | 'API_AUTH_RATE_LIMITED'
  | 'API_AUTH_BUSY'
  | 'API_NO_ROUTE'
  | 'API_NOT_PROVIDED'
  | 'API_METHOD_NOT_ALLOWED'
  | 'API_OBJECT_NOT_FOUND'
  | 'API_MALFORMED_JSON'
  | 'API_JSON_TOO_DEEP'
  | 'API_BODY_TOO_LARGE'
  | 'API_INVALID_QUERY'
  | 'API_INTERNAL'
  | 'API_SERVICE_UNAVAILABLE'
  | 'API_STORAGE_FULL'
  | 'API_ZONE_INVALID'
  | 'API_ZONE_EXISTS'
  | 'API_ZONE_PUBLIC_SUFFIX'
  | 'API_ZONE_NAME_UNAVAILABLE'
  | 'API_ZONE_RESERVED'
  | 'API_RULESET_NOT_FOUND'
  | 'API_ENTRYPOINT_NOT_FOUND'
  | 'API_RULE_NOT_FOUND'
  | 'API_RULESET_VERSION_NOT_FOUND'
  | 'API_RULESET_INVALID'
  | 'API_EXPRESSION_BLANK'
  | 'API_ZONE_RULESET_EXISTS'
  | 'API_PHASE_NOT_ENTITLED'
  | 'API_CUSTOM_FIELDS_LIMIT'
  | 'API_JOB_NOT_FOUND'
  | 'API_JOB_INVALID'
  | 'API_FILTER_INVALID'
  | 'API_FILTER_LIMIT'
  | 'API_JOB_LIMIT'
  | 'API_OWNERSHIP_CHALLENGE_MISSING'
  | 'API_OWNERSHIP_CHALLENGE_INVALID'
  | 'API_DESTINATION_UNREACHABLE'
  | 'API_ACCESS_KEY_INVALID'
  | 'API_SIGN_IN_INVALID'
  | 'API_NOT_SIGNED_IN'
  | 'API_CSRF_TOKEN_INVALID'
  | 'API_BUCKET_NOT_FOUND'
  | 'API_BUCKET_EXISTS'
  | 'API_BUCKET_NOT_EMPTY'
  | 'API_STORE_KEY_NOT_FOUND'
  | 'API_UPLOAD_NOT_FOUND'
  | 'API_BUCKET_NAME_INVALID'
  | 'API_CORS_NOT_FOUND'
  | 'API_BUCKET_DOMAIN_INVALID'
  | 'API_BUCKET_DOMAIN_NOT_FOUND'
  | 'API_BUCKET_DOMAIN_TAKEN'
  | 'API_JURISDICTION_UNSUPPORTED'
  | 'API_TOKEN_INVALID'
  | 'API_STORE_INVALID'
  | 'API_STORE_QUOTA_EXCEEDED'
  | 'API_DELIVERED_LINES_UNAVAILABLE'
  | 'API_WORKER_NOT_FOUND'
  | 'API_SERVICE_NOT_FOUND'
  | 'API_WORKER_VERSION_NOT_FOUND'
  | 'API_WORKER_INVALID'
  | 'API_WORKER_START_FAILED'
  | 'API_WORKER_TOO_LARGE'
  | 'API_WORKER_LIMIT'
  | 'API_WORKER_QUOTA'
  | 'API_WORKER_BUCKET_NOT_FOUND'
  | 'API_WORKER_ROUTE_INVALID'
  | 'API_WORKER_ROUTE_ZONE'
  | 'API_WORKER_ROUTE_RESERVED'
  | 'API_WORKER_ROUTE_DUPLICATE'
  | 'API_WORKER_ROUTE_NOT_FOUND'
  | 'API_WORKER_ROUTE_LIMIT'
  | 'API_WORKER_SUBDOMAIN_UNAVAILABLE'
  | 'API_WORKER_SUBDOMAIN_NOT_FOUND'
  | 'API_WORKER_SECRET_NOT_FOUND'
  | 'API_WORKER_TAIL_NOT_FOUND'
  | 'API_WORKER_TAIL_LIMIT'
  | 'API_WORKER_BUSY'
  | 'API_WORKER_UPLOADS_IN_FLIGHT';

export interface ApiErrorEntry {
  kind: 'user' | 'system';
  status: number;
  /** The `code` of the envelope's error entry. */
  code: number;
  message: string;
}

export const API_ERRORS: Record<ApiErrorCode, ApiErrorEntry> = {
  API_MISSING_CREDENTIALS: { kind: 'user', status: 400, code: 9106, message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers' },
  API_INVALID_REQUEST_HEADERS: { kind: 'user', status: 400, code: 6003, message: 'Invalid request headers' },
  API_UNKNOWN_CREDENTIALS: { kind: 'user', status: 403, code: 9103, message: 'Unknown X-Auth-Key or X-Auth-Email' },
  // An Authorization header whose token no account has (a deleted or rolled token too).
  API_TOKEN_UNKNOWN: { kind: 'user', status: 401, code: 10000, message: 'Authentication error' },
  API_TOKEN_INACTIVE: {
    kind: 'user',
    status: 401,
    code: 10000,
    message:
      'Authentication error: the API token <is disabled | expired on <date> | is not valid before <date>>; its owner can change that with PUT /user/tokens/<id>',
  },
  // A token whose policies do not grant the route: R2 and Workers answer 10000, the other routes 9109, as the platform does.
  API_TOKEN_FORBIDDEN: { kind: 'user', status: 403, code: 10000, message: 'Authentication error' },
  API_TOKEN_UNAUTHORIZED: { kind: 'user', status: 403, code: 9109, message: 'Unauthorized to access requested resource' },
  API_TOKEN_INVALID_BODY: { kind: 'user', status: 400, code: 1002, message: "'<value>' is not a valid value for <field> because <reason>" },
  API_TOKEN_LIMIT: {
    kind: 'user',
    status: 400,
    code: 1004,
    message: 'creating a new API token is not allowed: the account has <n> tokens, the most it may have; delete one first',
  },
  API_AUTH_RATE_LIMITED: {
    kind: 'user',
    status: 429,
    code: 971,
    message:
      'Please wait and consider throttling your request speed: too many failed credential checks <from this address or for this e-mail>; retry after <n> s',
  },
  // Load shedding, not a fault of the server: logged at debug like user errors (a flood would flood the log).
  API_AUTH_BUSY: {
    kind: 'user',
    status: 503,
    code: 971,
    message: 'Please wait and consider throttling your request speed: too many credential checks are waiting; retry after <n> s',
  },
  API_NO_ROUTE: { kind: 'user', status: 400, code: 7000, message: 'No route for that URI' },
  // A path (or a setting) of the platform that edgeport does not have: named, never 7000, which stays
  // for paths the platform does not have either. 403, not 501: clients retry 5xx answers.
  API_NOT_PROVIDED: {
    kind: 'user',
    status: 403,
    code: 10015,
    message: 'not entitled: edgeport does not provide <feature> (<what there is instead, if anything>)',
  },
  API_METHOD_NOT_ALLOWED: { kind: 'user', status: 405, code: 7001, message: 'Method <method> not allowed for this URI: use <methods>' },
  API_OBJECT_NOT_FOUND: { kind: 'user', status: 404, code: 7003, message: 'Could not route to <path>, perhaps your object identifier is invalid?' },
  API_MALFORMED_JSON: { kind: 'user', status: 400, code: 6007, message: 'Malformed JSON in request body' },
  API_JSON_TOO_DEEP: {
    kind: 'user',
    status: 400,
    code: 6007,
    message: 'Malformed JSON in request body: arrays and objects nest more than <limit> levels deep',
  },
  API_BODY_TOO_LARGE: { kind: 'user', status: 413, code: 6004, message: 'Request body is too large: at most <limit> bytes are accepted' },
  API_INVALID_QUERY: { kind: 'user', status: 400, code: 1002, message: "'<value>' is not a valid value for <parameter> because <reason>" },
  API_INTERNAL: { kind: 'system', status: 500, code: 10001, message: 'Internal server error' },
  // Backend faults (core/errors/backend-fault.ts), with Retry-After: the official SDK retries both.
  API_SERVICE_UNAVAILABLE: {
    kind: 'system',
    status: 503,
    code: 10043,
    message:
      'Service temporarily unavailable: the <database | blob store | disk> <did not answer within <n> ms | refused the connection | ...>; retry after <n> s',
  },
  API_STORAGE_FULL: {
    kind: 'system',
    status: 507,
    code: 10043,
    message:
      'Insufficient storage: the <disk | blob store | database> is full; writes are refused until space is freed (deletes still work); retry after <n> s',
  },
  API_ZONE_INVALID: { kind: 'user', status: 400, code: 1002, message: "'<value>' is not a valid value for <field> because <reason>" },
  API_ZONE_EXISTS: { kind: 'user', status: 400, code: 1061, message: '<name> already exists' },
  API_ZONE_PUBLIC_SUFFIX: {
    kind: 'user',
    status: 400,
    code: 1099,
    message:
      'We were unable to identify <name> as a registered domain: <name> is a public suffix, so a zone must be a domain registered under it, such as example.<name>',
  },
  // One refusal whether another account holds the name, a name above it or one under it: which, and that zone's name, are that account's business.
  API_ZONE_NAME_UNAVAILABLE: {
    kind: 'user',
    status: 400,
    code: 1061,
    message: '<name> is not available: it, a domain above it or a subdomain of it is a zone of another account; choose another name',
  },
  // The dev domain and the names under it are the platform's (edge/platform-hosts.ts), whatever the account, the operator's included.
  API_ZONE_RESERVED: {
    kind: 'user',
    status: 400,
    code: 1061,
    message:
      "<name> is not available: <dev domain> and the names under it belong to this server, which serves each account's scripts at <script>.<account subdomain>.<dev domain>; choose another name",
  },
  API_RULESET_NOT_FOUND: { kind: 'user', status: 404, code: 10003, message: 'could not find ruleset <ruleset_id>' },
  API_ENTRYPOINT_NOT_FOUND: { kind: 'user', status: 404, code: 10003, message: 'could not find entrypoint ruleset in the <phase> phase' },
  API_RULE_NOT_FOUND: { kind: 'user', status: 404, code: 10003, message: 'could not find rule <rule_id> in the ruleset' },
  API_RULESET_VERSION_NOT_FOUND: {
    kind: 'user',
    status: 404,
    code: 10003,
    message: 'could not find version <n> of the ruleset: it never was, or is no longer kept',
  },
  API_RULESET_INVALID: { kind: 'user', status: 400, code: 20021, message: "'<value>' is not a valid value for <field> because <reason>" },
  API_EXPRESSION_BLANK: { kind: 'user', status: 400, code: 20125, message: "'' is not a valid value for expression because the expression cannot be blank" },
  API_ZONE_RULESET_EXISTS: {
    kind: 'user',
    status: 400,
    code: 20217,
    message: "'zone' is not a valid value for kind because exceeded maximum number of zone rulesets for phase <phase>",
  },
  API_PHASE_NOT_ENTITLED: { kind: 'user', status: 400, code: 50002, message: 'not entitled to use the phase <phase>' },
  API_CUSTOM_FIELDS_LIMIT: {
    kind: 'user',
    status: 400,
    code: 20218,
    message:
      'exceeded maximum number of custom fields per zone: the rules configure <n>, at most 40 are allowed (request headers, response headers and cookies together)',
  },
  API_JOB_NOT_FOUND: { kind: 'user', status: 404, code: 1003, message: 'job not found: the zone has no log job <job_id>' },
  API_JOB_INVALID: { kind: 'user', status: 400, code: 1002, message: "'<value>' is not a valid value for <field> because <reason>" },
  API_FILTER_INVALID: { kind: 'user', status: 400, code: 1002, message: 'invalid filter: <problem> (at <pointer into the filter>)' },
  API_FILTER_LIMIT: {
    kind: 'user',
    status: 400,
    code: 1002,
    message:
      'invalid filter: the filter has <n> operators; at most 30 are allowed (or: is <n> bytes long; at most 1000 bytes are allowed; or: nests arrays and objects more than 64 levels deep (each "and"/"or" group takes two); at most 64 are allowed)',
  },
  API_JOB_LIMIT: { kind: 'user', status: 403, code: 1004, message: 'creating a new job (for http_requests dataset) is not allowed: exceeded max jobs allowed' },
  API_OWNERSHIP_CHALLENGE_MISSING: {
    kind: 'user',
    status: 400,
    code: 1002,
    message: 'missing ownership challenge: <scheme>:// destinations need the token written by POST /zones/<zone_id>/logshipping/ownership',
  },
  API_OWNERSHIP_CHALLENGE_INVALID: { kind: 'user', status: 400, code: 1002, message: 'incorrect ownership challenge' },
  API_DESTINATION_UNREACHABLE: {
    kind: 'user',
    status: 400,
    code: 1002,
    message:
      'error validating destination: error writing object: error uploading: <what failed, e.g. no answer within 10000 ms, connect ECONNREFUSED <address>, answered HTTP 403>',
  },
  API_ACCESS_KEY_INVALID: { kind: 'user', status: 400, code: 1002, message: "'<value>' is not a valid value for <field> because <reason>" },
  API_SIGN_IN_INVALID: { kind: 'user', status: 400, code: 1002, message: "'<value>' is not a valid value for <field> because <reason>" },
  API_NOT_SIGNED_IN: {
    kind: 'user',
    status: 401,
    code: 10000,
    message: 'Not signed in: the session is missing, expired or ended; sign in again with POST /client/v4/sessions',
  },
  API_CSRF_TOKEN_INVALID: {
    kind: 'user',
    status: 403,
    code: 9109,
    message: 'Missing or wrong X-CSRF-Token header: a request authenticated by the session cookie must send the csrf_token returned at sign-in',
  },
  API_BUCKET_NOT_FOUND: { kind: 'user', status: 404, code: 10006, message: 'The specified bucket does not exist.' },
  API_BUCKET_EXISTS: { kind: 'user', status: 400, code: 10004, message: 'The bucket you tried to create already exists, and you own it.' },
  API_BUCKET_NOT_EMPTY: { kind: 'user', status: 400, code: 10008, message: 'The bucket you tried to delete is not empty.' },
  API_STORE_KEY_NOT_FOUND: { kind: 'user', status: 404, code: 10007, message: 'The specified key does not exist.' },
  API_UPLOAD_NOT_FOUND: { kind: 'user', status: 404, code: 10024, message: 'The specified multipart upload does not exist.' },
  // The R2 routes (/accounts/<id>/r2/...) answer with R2's own codes where the dashboard's store routes keep 1002.
  API_BUCKET_NAME_INVALID: {
    kind: 'user',
    status: 400,
    code: 10005,
    message: "The specified bucket name is not valid: <name> must be 3-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit.",
  },
  API_CORS_NOT_FOUND: { kind: 'user', status: 404, code: 10059, message: 'The CORS configuration does not exist.' },
  // Public buckets (/accounts/<id>/r2/buckets/<name>/domains/...).
  API_BUCKET_DOMAIN_INVALID: {
    kind: 'user',
    status: 400,
    code: 10058,
    message: "'<value>' is not a valid value for <field> because <reason, e.g. it is not <zone> or a name under it, the zone given>",
  },
  API_BUCKET_DOMAIN_NOT_FOUND: { kind: 'user', status: 404, code: 10060, message: 'The bucket has no custom domain <domain>' },
  API_BUCKET_DOMAIN_TAKEN: {
    kind: 'user',
    status: 400,
    code: 10061,
    message: 'The custom domain <domain> is already attached to a bucket: detach it there first',
  },
  API_JURISDICTION_UNSUPPORTED: {
    kind: 'user',
    status: 400,
    code: 10005,
    message:
      "Jurisdiction '<value>' is not available on this server: its buckets are all in the default jurisdiction; leave out cf-r2-jurisdiction (wrangler's --jurisdiction) or send 'default'",
  },
  // What the real API answers on /user/tokens/verify for a credential that is not an API token.
  API_TOKEN_INVALID: { kind: 'user', status: 401, code: 1000, message: 'Invalid API Token' },
  API_STORE_INVALID: { kind: 'user', status: 400, code: 1002, message: "<the object store's message, e.g. The specified object name is not valid.>" },
  // The object store's quota refusal (STORE_QUOTA_EXCEEDED), in its words: what the account stores, its quota, what the write adds.
  API_STORE_QUOTA_EXCEEDED: {
    kind: 'user',
    status: 403,
    code: 10009,
    message:
      "The account's storage quota is exceeded: it stores <n> of its <quota> bytes (or objects), and this write adds <n>; delete objects or abort uploads, or ask the operator to raise the quota",
  },
  API_DELIVERED_LINES_UNAVAILABLE: {
    kind: 'user',
    status: 400,
    code: 1002,
    message: 'the delivered lines of a <scheme>:// destination cannot be read back: only file:// and store:// destinations can',
  },
  // Scripts deployed through the API (/accounts/<id>/workers/...): the Workers API's codes.
  API_WORKER_NOT_FOUND: { kind: 'user', status: 404, code: 10007, message: 'This Worker does not exist on your account.' },
  API_SERVICE_NOT_FOUND: { kind: 'user', status: 404, code: 10090, message: 'This Worker does not exist on your account.' },
  API_WORKER_VERSION_NOT_FOUND: { kind: 'user', status: 404, code: 10007, message: 'This version does not exist on the Worker: <version id>' },
  API_WORKER_INVALID: {
    kind: 'user',
    status: 400,
    code: 10021,
    message:
      '<what is wrong with the upload, e.g. binding "X" has type "kv_namespace", which this server does not support: use r2_bucket, plain_text, secret_text or json>',
  },
  API_WORKER_START_FAILED: {
    kind: 'user',
    status: 400,
    code: 10021,
    message: 'Uncaught <the exception the script threw as it started, e.g. SyntaxError: Unexpected end of input, with where>',
  },
  API_WORKER_TOO_LARGE: { kind: 'user', status: 413, code: 10027, message: 'Your Worker exceeded the size limit of <limit> bytes: the upload is larger' },
  API_WORKER_LIMIT: {
    kind: 'user',
    status: 400,
    code: 10037,
    message: 'You have exceeded the limit of <n> Workers on your account: delete one, or ask the operator to raise [workers] max_scripts_per_account',
  },
  // 10027 is the platform's "script too large"; wrangler prints its usual size advice after it.
  API_WORKER_QUOTA: {
    kind: 'user',
    status: 400,
    code: 10027,
    message:
      "Your account's scripts exceeded their storage quota: they keep <n> bytes of modules of the <quota> allowed, and this upload adds <n>; delete a script, or ask the operator to raise the quota",
  },
  API_WORKER_BUCKET_NOT_FOUND: {
    kind: 'user',
    status: 400,
    code: 10085,
    message:
      "R2 bucket '<name>' not found for binding <binding>: create it first (wrangler r2 bucket create <name>); a script binds only its account's buckets",
  },
  API_WORKER_ROUTE_INVALID: { kind: 'user', status: 400, code: 10022, message: "Invalid route pattern '<pattern>': <reason>" },
  API_WORKER_ROUTE_ZONE: {
    kind: 'user',
    status: 400,
    code: 10019,
    message: "Could not find a zone of your account for route pattern '<pattern>': its host must be one of your zones or under one",
  },
  API_WORKER_ROUTE_RESERVED: {
    kind: 'user',
    status: 400,
    code: 10022,
    message:
      "Invalid route pattern '<pattern>': it would match hosts of <dev domain>, which belong to this server (it serves each account's scripts at <script>.<account subdomain>.<dev domain>); route hosts of your zones outside it",
  },
  API_WORKER_ROUTE_DUPLICATE: {
    kind: 'user',
    status: 400,
    code: 10020,
    message: "A route with the pattern '<pattern>' already exists: delete it, or change that route instead",
  },
  API_WORKER_ROUTE_NOT_FOUND: { kind: 'user', status: 404, code: 10018, message: 'Route not found: the zone has no route <route id>' },
  API_WORKER_ROUTE_LIMIT: {
    kind: 'user',
    status: 400,
    code: 10023,
    message: 'The zone has reached its limit of <n> routes: delete one, or ask the operator to raise [workers] max_routes_per_zone',
  },
  API_WORKER_BUSY: {
    kind: 'user',
    status: 503,
    code: 971,
    message: 'Please wait and consider throttling your request speed: too many script uploads are being tried; retry after <n> s',
  },
  API_WORKER_UPLOADS_IN_FLIGHT: {
    kind: 'user',
    status: 429,
    code: 971,
    message: 'Please wait and consider throttling your request speed: your account has as many script uploads being tried as it may; retry after <n> s',
  },
  API_WORKER_SECRET_NOT_FOUND: { kind: 'user', status: 404, code: 10056, message: 'The script has no secret named <name>' },
  API_WORKER_TAIL_NOT_FOUND: { kind: 'user', status: 404, code: 10007, message: 'The script has no tail <tail id>' },
  API_WORKER_TAIL_LIMIT: {
    kind: 'user',
    status: 429,
    code: 10057,
    message: 'The script already has <n> tails open (at most <n> per script, <m> per account): close one first',
  },
  API_WORKER_SUBDOMAIN_UNAVAILABLE: { kind: 'user', status: 400, code: 10032, message: "The subdomain '<name>' is not available: choose another" },
  API_WORKER_SUBDOMAIN_NOT_FOUND: {
    kind: 'user',
    status: 404,
    code: 10007,
    message: 'The account has no subdomain: it gets one with PUT /accounts/<account_id>/workers/subdomain (or on first use)',
  },
};

/** One entry of an envelope's `errors`. */
export interface ErrorItem {
  code: number;
  message: string;
  source?: { pointer: string };
  error_chain?: Array<{ code: number; message: string }>;
}

/**
 * The one error type of the API. `items` are the envelope's error entries (several when a body has
 * several problems); by default one entry with the catalog's code and the given message.
 */
export class ApiError extends EdgeportError<ApiErrorCode> {
  readonly status: number;
  readonly items: ErrorItem[];
  /** Response headers the answer carries (Retry-After of the throttling answers). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ApiErrorCode,
    options?: {
      message?: string;
      pointer?: string;
      items?: ErrorItem[];
      status?: number;
      cause?: unknown;
      headers?: Record<string, string>;
    },
  ) {
    const entry = API_ERRORS[code];
    const message = options?.message ?? entry.message;
    super(code, entry.kind, message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = options?.status ?? entry.status;
    this.items = options?.items ?? [{ code: entry.code, message, ...(options?.pointer === undefined ? {} : { source: { pointer: options.pointer } }) }];
    this.headers = options?.headers ?? {};
  }
}

/** An error entry with a catalog code (for several problems in one response). */
export function errorItem(code: ApiErrorCode, message: string, pointer?: string): ErrorItem {
  return { code: API_ERRORS[code].code, message, ...(pointer === undefined ? {} : { source: { pointer } }) };
}

/**
 * The real API's answer for an object in a path that is not the caller's (unknown, or another
 * account's: the two are indistinguishable): 7003 then 7000. A malformed identifier gets 400.
 */
export function objectNotFound(path: string, status: 404 | 400 = 404): ApiError {
  const message = `Could not route to ${path}, perhaps your object identifier is invalid?`;
  return new ApiError('API_OBJECT_NOT_FOUND', {
    message,
    status,
    items: [
      { code: API_ERRORS.API_OBJECT_NOT_FOUND.code, message },
      { code: API_ERRORS.API_NO_ROUTE.code, message: API_ERRORS.API_NO_ROUTE.message },
    ],
  });
}
