/**
 * `[blobs] url` → a BlobStore. No URL: blob files in the data dir (the embedded default).
 * `file:///shared/dir`: blob files in a directory several instances share (NFS, a mounted volume).
 * `s3://bucket/prefix?endpoint=…&region=…&access-key-id=…&secret-access-key=…&force-path-style=…`:
 * objects in any S3-compatible store. Every other shape is refused with what to fix.
 */
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EdgeportError } from '../../core/errors/edgeport-error.ts';
import type { Logger } from '../../core/log.ts';
import type { BlobStore } from './blob-store.ts';
import { DEFAULTS } from '../../config/defaults.ts';
import { DeadlineBlobStore } from './deadline-blob-store.ts';
import { FsBlobStore } from './fs-blob-store.ts';

/** Where blobs live, parsed from `[blobs] url`. */
export type BlobsLocation =
  | { kind: 'fs'; root: string }
  | {
      kind: 's3';
      bucket: string;
      /** Key prefix without leading or trailing slash ('' for the bucket's root). */
      prefix: string;
      /** Absent: AWS S3 itself, by region. */
      endpoint?: string;
      /** Absent: 'auto' with an endpoint (R2, MinIO and edgeport accept it), else the AWS_REGION chain. */
      region?: string;
      /** Absent: the AWS SDK's default chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, profile, instance role). */
      credentials?: { accessKeyId: string; secretAccessKey: string };
      forcePathStyle: boolean;
    };

const S3_PARAMS = ['endpoint', 'region', 'access-key-id', 'secret-access-key', 'force-path-style'] as const;
type S3Param = (typeof S3_PARAMS)[number];

const EXAMPLE_S3 = 's3://bucket/prefix?endpoint=https://s3.example.com&region=auto&access-key-id=...&secret-access-key=...';

/** A `[blobs] url` that cannot be used; the message says what to change. */
export class BlobsUrlError extends EdgeportError<'CONFIG_INVALID'> {
  constructor(url: string, problem: string) {
    super('CONFIG_INVALID', 'user', `[blobs] url ${JSON.stringify(redact(url))}: ${problem}`, { details: { field: 'blobs.url' } });
  }
}

/** Parses `[blobs] url` (throws BlobsUrlError); exported so config loading can check it early. */
export function parseBlobsUrl(url: string): BlobsLocation {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'file') return parseFileUrl(url);
  if (scheme === 's3') return parseS3Url(url);
  throw new BlobsUrlError(url, `use file:///absolute/dir (a directory shared by every instance) or ${EXAMPLE_S3}`);
}

/**
 * Opens the blob store of `url`, or of the data dir when there is none. `shared` tells recovery
 * whether other instances may be writing to the same store right now (any URL means they may).
 */
export async function openBlobStore(options: {
  url?: string | undefined;
  dataDir: string;
  /** Each call's deadline on an s3:// or file:// store (`[blobs] timeout_ms`). */
  timeoutMs?: number | undefined;
  /** Warnings of an s3:// store (a call it lacks). */
  logger?: Logger | undefined;
}): Promise<{ store: BlobStore; shared: boolean }> {
  if (options.url === undefined) return { store: await FsBlobStore.open(options.dataDir), shared: false };
  const location = parseBlobsUrl(options.url);
  if (location.kind === 'fs') {
    // A shared directory may be on a mount that hangs: its calls get the deadline an s3:// store's have.
    const timeoutMs = options.timeoutMs ?? DEFAULTS.backends.blobsTimeoutMs;
    return { store: await DeadlineBlobStore.open(() => FsBlobStore.open(location.root), { timeoutMs }), shared: true };
  }
  // Loaded only here, so installs that keep blobs on disk never load the AWS SDK.
  const { S3BlobStore } = await import('./s3-blob-store.ts');
  const store = await S3BlobStore.open({
    bucket: location.bucket,
    prefix: location.prefix,
    where: redact(options.url),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    client: {
      forcePathStyle: location.forcePathStyle,
      ...(location.endpoint === undefined ? {} : { endpoint: location.endpoint }),
      ...(location.region === undefined ? {} : { region: location.region }),
      ...(location.credentials === undefined ? {} : { credentials: location.credentials }),
    },
  });
  return { store, shared: true };
}

function parseFileUrl(url: string): BlobsLocation {
  let root: string;
  try {
    const parsed = new URL(url);
    if (parsed.search !== '' || parsed.hash !== '') throw new BlobsUrlError(url, 'a file: URL takes no ?query or #fragment');
    if (parsed.host !== '' && parsed.host !== 'localhost') {
      throw new BlobsUrlError(url, `a file: URL names a local path, not host "${parsed.host}": write file:///absolute/dir (three slashes)`);
    }
    root = fileURLToPath(parsed);
  } catch (error) {
    if (error instanceof BlobsUrlError) throw error;
    throw new BlobsUrlError(url, `not a file: URL (${(error as Error).message}); write file:///absolute/dir`);
  }
  if (!isAbsolute(root) || root === '/') throw new BlobsUrlError(url, 'name an absolute directory other than "/", as in file:///srv/edgeport/blobs');
  return { kind: 'fs', root };
}

function parseS3Url(url: string): BlobsLocation {
  const match = /^s3:\/\/([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?(#.*)?$/i.exec(url);
  if (!match) throw new BlobsUrlError(url, `write it as ${EXAMPLE_S3}`);
  const [, bucket = '', path = '', query = '', fragment] = match;
  if (fragment !== undefined) throw new BlobsUrlError(url, 'remove the #fragment');
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new BlobsUrlError(
      url,
      `"${bucket}" is not a bucket name: after s3:// comes the bucket (3-63 lowercase letters, digits, dots, hyphens), then /prefix`,
    );
  }
  const prefix = decode(url, path).replace(/^\/+|\/+$/g, '');
  if (prefix.includes('//')) throw new BlobsUrlError(url, 'the prefix has an empty segment ("//"); remove it');
  const params = parseQuery(url, query);
  // Path-style by default with an endpoint: MinIO and most self-hosted stores need it, R2 accepts it.
  const location: Extract<BlobsLocation, { kind: 's3' }> = { kind: 's3', bucket, prefix, forcePathStyle: params['endpoint'] !== undefined };
  const endpoint = params['endpoint'];
  if (endpoint !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(endpoint);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new BlobsUrlError(url, `endpoint=${endpoint} is not an http:// or https:// URL (percent-encode it if it has its own ?query)`);
    }
    location.endpoint = endpoint;
  }
  const region = params['region'] ?? (endpoint !== undefined ? 'auto' : undefined);
  if (region !== undefined) {
    if (!/^[a-z0-9-]+$/i.test(region)) throw new BlobsUrlError(url, `region=${region} is not a region name (e.g. auto, us-east-1)`);
    location.region = region;
  }
  const accessKeyId = params['access-key-id'];
  const secretAccessKey = params['secret-access-key'];
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new BlobsUrlError(
      url,
      'give both access-key-id and secret-access-key, or neither (then AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the AWS profile are used)',
    );
  }
  if (accessKeyId !== undefined && secretAccessKey !== undefined) {
    if (accessKeyId === '' || secretAccessKey === '') throw new BlobsUrlError(url, 'access-key-id and secret-access-key may not be empty');
    location.credentials = { accessKeyId, secretAccessKey };
  }
  const pathStyle = params['force-path-style'];
  if (pathStyle !== undefined) {
    if (pathStyle !== 'true' && pathStyle !== 'false') throw new BlobsUrlError(url, `force-path-style=${pathStyle}: use true or false`);
    location.forcePathStyle = pathStyle === 'true';
  }
  return location;
}

/**
 * The query as a record of known parameters. Values are percent-decoded, but `+` stays a plus:
 * AWS secret keys contain `+` and `/`, and form decoding would silently turn `+` into a space.
 */
function parseQuery(url: string, query: string): Partial<Record<S3Param, string>> {
  const params: Partial<Record<S3Param, string>> = {};
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decode(url, eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decode(url, pair.slice(eq + 1));
    if (!(S3_PARAMS as readonly string[]).includes(name)) {
      throw new BlobsUrlError(url, `unknown parameter "${name}"; the parameters are ${S3_PARAMS.join(', ')}`);
    }
    if (params[name as S3Param] !== undefined) throw new BlobsUrlError(url, `"${name}" is given twice`);
    params[name as S3Param] = value;
  }
  return params;
}

function decode(url: string, text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new BlobsUrlError(url, `bad percent-encoding in "${text.slice(0, 40)}"`);
  }
}

/** The URL with its secret key hidden, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/([?&]secret-access-key=)[^&#]*/gi, '$1***');
}
