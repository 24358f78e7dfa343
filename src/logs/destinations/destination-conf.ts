/**
 * `destination_conf` of a log job (docs/edge-and-logs.md, docs/management-api.md "Routes"): parsed and validated, and which
 * destinations need an ownership challenge. `{DATE}` in a path becomes the day (YYYYMMDD) when
 * logs are written; the challenge is written where the path stops being fixed.
 *
 * By design: `file://` and `store://` destinations need a challenge (the token proves the caller
 * can read what the server writes there); `s3://` carries its own credentials and `https://` is
 * probed with a test upload instead, as the real service does for S3-compatible and HTTP
 * destinations. `http://` is accepted too (local collectors), unlike the real service.
 */
import { HTTP_TOKEN } from '../../core/http/token.ts';

export type Destination =
  | { scheme: 'file'; directory: string }
  | { scheme: 'store'; bucket: string; prefix: string }
  | { scheme: 's3'; bucket: string; prefix: string; region: string; endpoint: string | null; accessKeyId: string; secretAccessKey: string }
  | { scheme: 'http' | 'https'; url: string; headers: Record<string, string> };

export const MAX_DESTINATION_CONF_LENGTH = 4096;

const BUCKET = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;
const S3_BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export type DestinationResult = { ok: true; destination: Destination } | { ok: false; reason: string };

export function parseDestination(conf: string): DestinationResult {
  const scheme = /^([a-z0-9+.-]+):\/\//i.exec(conf)?.[1]?.toLowerCase();
  if (scheme === undefined) return fail('it must start with a scheme: file://, store://, s3://, https:// or http://');
  switch (scheme) {
    case 'file':
      return parseFile(conf);
    case 'store':
      return parseBucketPath(conf.slice('store://'.length), 'store');
    case 's3':
      return parseS3(conf);
    case 'https':
    case 'http':
      return parseHttp(conf, scheme);
    default:
      return fail(`the scheme ${scheme}:// is not supported: use file://, store://, s3://, https:// or http://`);
  }
}

function parseFile(conf: string): DestinationResult {
  const rest = conf.slice('file://'.length);
  if (rest.includes('?') || rest.includes('#')) return fail('a file:// destination takes no query or fragment');
  const path = rest.startsWith('localhost/') ? rest.slice('localhost'.length) : rest;
  if (!path.startsWith('/')) return fail('a file:// destination needs an absolute path: file:///var/log/edgeport');
  let directory: string;
  try {
    directory = decodeURIComponent(path);
  } catch {
    return fail('its path is not validly percent-encoded');
  }
  if (directory.includes('\0') || directory.split('/').some((segment) => segment === '..' || segment === '.')) {
    return fail('its path may not contain "." or ".." segments');
  }
  return { ok: true, destination: { scheme: 'file', directory: directory.length > 1 ? directory.replace(/\/+$/, '') : directory } };
}

function parseBucketPath(rest: string, scheme: 'store'): DestinationResult {
  if (rest.includes('?') || rest.includes('#')) return fail('a store:// destination takes no query: store://<bucket>/<path>');
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  if (!BUCKET.test(bucket)) return fail(`'${bucket}' is not a valid bucket name (3-63 lowercase letters, digits and hyphens)`);
  return { ok: true, destination: { scheme, bucket, prefix: slash < 0 ? '' : trimSlashes(rest.slice(slash + 1)) } };
}

function parseS3(conf: string): DestinationResult {
  const q = conf.indexOf('?');
  const location = conf.slice('s3://'.length, q < 0 ? undefined : q);
  const query = new URLSearchParams(q < 0 ? '' : conf.slice(q + 1));
  const slash = location.indexOf('/');
  const bucket = slash < 0 ? location : location.slice(0, slash);
  if (!S3_BUCKET.test(bucket)) return fail(`'${bucket}' is not a valid S3 bucket name`);
  const known = new Set(['region', 'endpoint', 'access-key-id', 'secret-access-key', 'sse']);
  const unknown = [...query.keys()].find((key) => !known.has(key));
  if (unknown !== undefined) return fail(`the s3:// parameter ${unknown} is not known: use region, endpoint, access-key-id, secret-access-key, sse`);
  const region = query.get('region');
  if (!region) return fail('an s3:// destination needs ?region=');
  const accessKeyId = query.get('access-key-id');
  const secretAccessKey = query.get('secret-access-key');
  if (!accessKeyId || !secretAccessKey) {
    return fail('an s3:// destination needs access-key-id and secret-access-key (edgeport has no cloud identity of its own to write with)');
  }
  const endpoint = query.get('endpoint');
  if (endpoint !== null) {
    try {
      new URL(endpoint.includes('://') ? endpoint : `https://${endpoint}`);
    } catch {
      return fail(`the endpoint ${endpoint} is not a host or URL`);
    }
  }
  return {
    ok: true,
    destination: { scheme: 's3', bucket, prefix: slash < 0 ? '' : trimSlashes(location.slice(slash + 1)), region, endpoint, accessKeyId, secretAccessKey },
  };
}

function parseHttp(conf: string, scheme: 'http' | 'https'): DestinationResult {
  let url: URL;
  try {
    url = new URL(conf);
  } catch {
    return fail('it is not a valid URL');
  }
  if (url.username || url.password) return fail('put credentials in header_<Name> parameters, not in the URL');
  const headers: Record<string, string> = {};
  for (const [key, value] of [...url.searchParams]) {
    if (!key.startsWith('header_')) continue;
    const name = key.slice('header_'.length);
    if (!HTTP_TOKEN.test(name)) return fail(`${key} does not name a valid HTTP header`);
    headers[name] = value;
    url.searchParams.delete(key);
  }
  return { ok: true, destination: { scheme, url: url.href, headers } };
}

/** Whether a job for this destination must present a token from an ownership challenge. */
export function needsOwnershipChallenge(destination: Destination): boolean {
  return destination.scheme === 'file' || destination.scheme === 'store';
}

/**
 * Where the challenge file goes: the destination's fixed part, before any `{DATE}` segment,
 * written as a location (`file:///dir`, `store://bucket/prefix`).
 */
export function challengeLocation(destination: Destination): string {
  switch (destination.scheme) {
    case 'file':
      return `file://${fixedPath(destination.directory) || '/'}`;
    case 'store': {
      const prefix = fixedPath(destination.prefix);
      return `store://${destination.bucket}${prefix ? `/${prefix}` : ''}`;
    }
    default:
      throw new Error(`${destination.scheme} destinations have no ownership challenge.`);
  }
}

/**
 * The locations a challenge may have been issued for to cover this destination: its own and each
 * parent up to the root or bucket. A token for a parent proves access to everything below it.
 */
export function coveringLocations(destination: Destination): string[] {
  const own = challengeLocation(destination);
  const root = destination.scheme === 'file' ? 'file://' : `store://${(destination as { bucket: string }).bucket}`;
  const out = [own];
  let current = own;
  while (current.length > root.length) {
    const cut = current.lastIndexOf('/');
    current = current.slice(0, cut);
    if (current.length < root.length) break;
    out.push(current === 'file://' ? 'file:///' : current);
    if (current === 'file://') break;
  }
  return [...new Set(out)];
}

export function fixedPath(path: string): string {
  const segments = path.split('/');
  const dated = segments.findIndex((segment) => segment.includes('{DATE}'));
  return (dated < 0 ? segments : segments.slice(0, dated)).join('/').replace(/\/+$/, '');
}

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}

function fail(reason: string): DestinationResult {
  return { ok: false, reason };
}
