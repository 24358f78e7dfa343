/**
 * The S3-compatible API: a thin face on the store engine, served with raw node:http so bodies
 * stream both ways without copies. Pipeline, in order: address (path-style or virtual-hosted) ->
 * authenticate (SigV4; failed attempts limited per client address and access key id, checked
 * before the secret is looked up: past the limit 429 SlowDown) -> detect the operation -> run it
 * -> map errors to S3 XML. A browser form upload (POST Object) is signed inside its body instead:
 * operations/post-object.ts authenticates it.
 *
 * CORS: bucket rules (operations/cors.ts), preflights and Access-Control-* headers (cors-headers.ts).
 *
 * Lifecycle rules: operations/lifecycle.ts (applied by the engine's lifecycle sweeper).
 *
 * Gaps: versioning, ACLs, policies, tagging, SSE and object lock cannot be configured:
 * reading one answers "none configured", anything else is NotImplemented 501 (subresources.ts); a
 * write whose headers ask for one is refused (write-headers.ts). By design: one region, named
 * `auto`; any region in the credential scope is accepted. Client quirks: current AWS SDKs send aws-chunked bodies with trailing checksums.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FailureLimits } from '../../core/auth/credential-guard.ts';
import type { Clock } from '../../core/clock.ts';
import { backendFaultOf } from '../../core/errors/backend-fault.ts';
import { noteFault } from '../../core/errors/fault-log.ts';
import { guardedListener } from '../../core/http/guarded-listener.ts';
import { listenerOrigin } from '../../core/http/wrong-port.ts';
import { lingerOnClose } from '../../core/http/lingering-close.ts';
import type { Logger } from '../../core/log.ts';
import type { RequestListener } from '../../core/service.ts';
import { accountStore } from '../engine/account-store.ts';
import type { StoreEngine } from '../engine/store-engine.ts';
import { assertDeclaredWithin, assertNullVersion, readBody, type S3Context } from './context.ts';
import { createBucket, deleteBucket, getBucketLocation, headBucket, listBuckets } from './operations/bucket.ts';
import { copyObject } from './operations/copy.ts';
import { listObjectVersions, listObjectsV1, listObjectsV2 } from './operations/list.ts';
import {
  abortMultipartUpload,
  completeMultipartUpload,
  createMultipartUpload,
  listMultipartUploads,
  listParts,
  uploadPart,
  uploadPartCopy,
} from './operations/multipart.ts';
import { deleteObject, deleteObjects, getObject, putObject } from './operations/object.ts';
import { isPostObject, postObject } from './operations/post-object.ts';
import { bucketSubresource, objectSubresource } from './operations/subresources.ts';
import { corsOperation } from './operations/cors.ts';
import { lifecycleOperation } from './operations/lifecycle.ts';
import { addCorsHeaders, answerPreflight } from './cors-headers.ts';
import { applyHoistedHeaders } from './presigned-headers.ts';
import { accessOf, assertAllowed, type S3AccessKey } from './key-grant.ts';
import { refuseUnevaluatedConditions } from './http-conditions.ts';
import { S3_ERRORS, toS3Error, type S3Error } from './s3-error.ts';
import { createLimitedVerifier } from './signature-limits.ts';
import { sha256Hex } from './sigv4.ts';
import { refuseUnsupportedWriteHeaders, type WriteKind } from './write-headers.ts';
import { errorXml } from './xml.ts';

/** Request ids: a random per-process prefix and a counter (unique, and cheap on the hot path). */
const REQUEST_ID_PREFIX = randomBytes(4).toString('hex').toUpperCase();
let requestCounter = 0;

export interface S3HandlerOptions {
  /** The whole store: each request sees only its key's account's buckets (accountStore). */
  engine: StoreEngine;
  /** A usable access key (its secret, account and permission), or undefined when unknown or revoked. */
  keys: (accessKeyId: string) => Promise<S3AccessKey | undefined> | S3AccessKey | undefined;
  clock: Clock;
  logger: Logger;
  /** Host names under which `<bucket>.<host>` addresses a bucket (virtual-hosted style). */
  virtualHostBases?: readonly string[];
  /** Failed-authentication limits per client address and access key id (default DEFAULTS.auth). */
  failureLimits?: FailureLimits;
  /** The dashboard's URL (the management API's listener) once bound: named to a browser that opens an S3 address. */
  dashboard?: () => string | undefined;
}

type Operation = (ctx: S3Context) => Promise<void>;

const LIST_V1_PARAMETERS = ['prefix', 'delimiter', 'marker', 'max-keys', 'encoding-type'];
const LIST_V2_ONLY_PARAMETERS = ['continuation-token', 'start-after', 'fetch-owner'];

/** A bucket request no operation takes: the error says what would make it one. */
function unroutedBucketRequest(method: string, query: URLSearchParams): S3Error {
  const names = [...query.keys()];
  if (method === 'POST') {
    return S3_ERRORS.invalidRequest(
      `A POST on a bucket is DeleteObjects (?delete) or a browser form upload (POST Object: an unsigned multipart/form-data body with its policy and signature)${names.length > 0 ? `, not ?${names.join('&')}` : ''}.`,
    );
  }
  if (method !== 'GET') return S3_ERRORS.methodNotAllowed();
  const listType = query.get('list-type');
  if (listType !== null) return S3_ERRORS.invalidArgument(`list-type must be 2 (ListObjectsV2) or left out (ListObjects), not ${JSON.stringify(listType)}.`);
  const v2Only = names.find((name) => LIST_V2_ONLY_PARAMETERS.includes(name));
  if (v2Only !== undefined) return S3_ERRORS.invalidArgument(`${v2Only} is a parameter of ListObjectsV2: add list-type=2 (ListObjects pages with marker).`);
  return S3_ERRORS.notImplemented(`GET on a bucket with ?${names.filter((name) => !LIST_V1_PARAMETERS.includes(name)).join('&')}`);
}

/** Picks the operation from method, addressing and query (S3 API reference, per operation). */
function detect(method: string, bucket: string | undefined, key: string | undefined, query: URLSearchParams): Operation {
  if (!bucket) {
    if (method === 'GET') return listBuckets;
    throw S3_ERRORS.methodNotAllowed();
  }
  if (key === undefined) {
    if (query.has('cors')) return corsOperation(method);
    if (query.has('lifecycle')) return lifecycleOperation(method);
    const subresource = bucketSubresource(method, query);
    if (subresource) return subresource;
    switch (method) {
      case 'PUT':
        return createBucket;
      case 'HEAD':
        return headBucket;
      case 'DELETE':
        return deleteBucket;
      case 'POST':
        if (query.has('delete')) return deleteObjects;
        break;
      case 'GET':
        if (query.has('location')) return getBucketLocation;
        if (query.has('uploads')) return listMultipartUploads;
        if (query.has('versions')) return listObjectVersions;
        if (query.get('list-type') === '2') return listObjectsV2;
        if (!query.has('list-type') && [...query.keys()].every((name) => LIST_V1_PARAMETERS.includes(name))) return listObjectsV1;
        break;
    }
    throw unroutedBucketRequest(method, query);
  }
  const subresource = objectSubresource(method, query);
  if (subresource) return subresource;
  assertNullVersion(query.get('versionId'));
  const inUpload = query.has('uploadId');
  switch (method) {
    case 'PUT':
      if (inUpload) return (ctx) => (ctx.req.headers['x-amz-copy-source'] ? uploadPartCopy(ctx) : uploadPart(ctx));
      return (ctx) => (ctx.req.headers['x-amz-copy-source'] ? copyObject(ctx) : putObject(ctx));
    case 'GET':
      return inUpload ? listParts : (ctx) => getObject(ctx, false);
    case 'HEAD':
      return (ctx) => getObject(ctx, true);
    case 'DELETE':
      return inUpload ? abortMultipartUpload : deleteObject;
    case 'POST':
      if (query.has('uploads')) return createMultipartUpload;
      if (inUpload) return completeMultipartUpload;
      break;
  }
  throw S3_ERRORS.methodNotAllowed();
}

/** Which write, taking ACL/tagging/lock/encryption headers, the operation is (write-headers.ts), if any. */
function writeKind(method: string, operation: Operation, key: string | undefined, query: URLSearchParams): WriteKind | undefined {
  if (operation === createBucket) return 'bucket';
  if (key === undefined) return undefined;
  if (method === 'PUT') return query.has('uploadId') ? 'part' : 'object';
  if (method !== 'POST') return undefined;
  // CompleteMultipartUpload takes an upload's SSE-C parameters, as its parts do.
  return query.has('uploads') ? 'object' : query.has('uploadId') ? 'part' : undefined;
}

/** The decoded path; InvalidURI (400, before any authentication work) when an escape is malformed or not UTF-8. */
function decodePath(rawPath: string): string {
  try {
    return decodeURIComponent(rawPath);
  } catch {
    throw S3_ERRORS.invalidUri();
  }
}

function expectsContinue(req: IncomingMessage): boolean {
  return req.headers.expect?.toLowerCase() === '100-continue';
}

/** Was the client told 100 Continue? Node answers it itself when the server has no 'checkContinue' listener (its `_sent100`). */
function continueSent(res: ServerResponse): boolean {
  return (res as ServerResponse & { _sent100?: boolean })._sent100 === true;
}

/**
 * Did the request fail because the client went away (ECONNRESET, a premature close, an aborted
 * upload)? Judged by the client's connection, not the error's code: an upstream reset (a remote
 * blob store's) while the client is still there is a server fault. Once the connection is gone,
 * whatever failed, nobody is there to answer.
 */
function clientLeft(req: IncomingMessage, res: ServerResponse): boolean {
  // Node detaches the socket (req.socket becomes null) once the request is destroyed: gone too.
  return req.socket === null || req.socket.destroyed || (res.destroyed && !res.writableFinished);
}

/** What answering a failed request needs to know about it. */
interface FailedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  /** The resource the error names (`/bucket/key`). */
  resource: string;
  /** Were the Access-Control-* headers already set? */
  corsDone: boolean;
  bucketName: string | undefined;
}

export function createS3Handler(options: S3HandlerOptions) {
  const bases = options.virtualHostBases ?? ['localhost'];
  const verify = createLimitedVerifier(options.failureLimits, options.clock);

  function address(req: IncomingMessage, rawPath: string): { bucket: string | undefined; key: string | undefined } {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const base = bases.find((b) => host.endsWith(`.${b}`));
    const path = decodePath(rawPath);
    if (base) {
      const bucket = host.slice(0, host.length - base.length - 1);
      return { bucket, key: path.length > 1 ? path.slice(1) : undefined };
    }
    const slash = path.indexOf('/', 1);
    if (path === '/' || path === '') return { bucket: undefined, key: undefined };
    if (slash < 0) return { bucket: path.slice(1), key: undefined };
    const key = path.slice(slash + 1);
    return { bucket: path.slice(1, slash), key: key === '' ? undefined : key };
  }

  /**
   * Answers a failed request with its S3 error. It never throws: whatever goes wrong while
   * answering (a CORS lookup that fails, a socket gone mid-write) ends in the connection closed.
   */
  async function answerFailure(thrown: unknown, at: FailedRequest): Promise<void> {
    const { req, res, requestId } = at;
    try {
      // A client that leaves mid-request (closes a GetObject early, aborts an upload) is no failure of ours.
      if (clientLeft(req, res)) {
        options.logger.debug({ err: thrown, requestId }, 'S3 client closed the connection before the request finished.');
        res.destroy();
        return;
      }
      const { error, internal, fault } = toS3Error(thrown);
      if (internal) options.logger.error({ err: thrown, requestId }, 'S3 request failed unexpectedly.');
      const backendFault = fault && backendFaultOf(fault);
      if (backendFault) noteFault(options.logger, 's3', backendFault);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // A request refused before it was authenticated gets the CORS headers its preflight would have.
      if (!at.corsDone && req.headers.origin !== undefined) {
        await addCorsHeaders(req, res, at.bucketName, (name) => options.engine.corsOfBucketsNamed(name)).catch((error: unknown) => {
          options.logger.error({ err: error, requestId }, 'S3 CORS rules could not be read for an error answer.');
        });
        if (clientLeft(req, res) || res.headersSent) return void res.destroy();
      }
      const body = req.method === 'HEAD' ? '' : errorXml(error.s3Code, error.message, at.resource, requestId, error.fields);
      res.writeHead(error.status, {
        ...error.headers,
        'content-type': 'application/xml',
        'content-length': Buffer.byteLength(body),
        'x-amz-request-id': requestId,
        connection: 'close',
      });
      // A body still arriving would reset a connection closed under it, and the client lose the
      // answer: the close lingers (bounded in time and bytes) for the answer to be read.
      if (!req.readableEnded && req.socket) lingerOnClose(req.socket);
      res.end(body);
      // A body the client was told to hold back (no 100 Continue) is never read. Any other
      // refused body (a paused oversized one too) is read and dropped while the close lingers.
      if (!req.readableEnded && (!expectsContinue(req) || continueSent(res))) req.resume();
    } catch (failure) {
      options.logger.error({ err: failure, cause: thrown, requestId }, 'S3 error answer failed; closing the connection.');
      res.destroy();
    }
  }

  return async function handleS3Request(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = `${REQUEST_ID_PREFIX}${(requestCounter++).toString(16).toUpperCase().padStart(8, '0')}`;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    const rawQuery = q < 0 ? '' : url.slice(q + 1);
    let resource = rawPath;
    let settle: (() => void) | undefined;
    let bucketName: string | undefined;
    let corsDone = false;
    try {
      const { bucket, key } = address(req, rawPath);
      bucketName = bucket;
      resource = bucket ? `/${bucket}${key !== undefined ? `/${key}` : ''}` : '/';
      // Browsers send preflights unsigned: answered from the bucket's CORS rules, before authentication.
      if (req.method === 'OPTIONS') {
        corsDone = true;
        await answerPreflight(req, res, bucket, (name) => options.engine.corsOfBucketsNamed(name), requestId);
        return;
      }
      // A person's browser opening an S3 address (unsigned, asking for a page): told where the dashboard is.
      if (isBrowserVisit(req, rawQuery)) {
        const url = options.dashboard?.();
        throw S3_ERRORS.browserVisit(url === undefined ? undefined : `${listenerOrigin(url, req.headers.host)}/`);
      }
      const now = options.clock.now();
      // A browser form upload authenticates with the policy signature in its body, not the request's.
      if (isPostObject(req.method, bucket, key, rawQuery, req.headers)) {
        // Its credentials are in the body: a client waiting for 100 Continue is told to send it.
        if (expectsContinue(req) && !continueSent(res)) res.writeContinue();
        await postObject({ engine: options.engine, keys: options.keys, verify }, { req, res, bucket: bucket!, rawPath, requestId, now });
        return;
      }
      const query = new URLSearchParams(rawQuery);
      let accessKey: S3AccessKey | undefined;
      const verified = await verify(
        { method: req.method ?? 'GET', rawPath, rawQuery, query, headers: req.headers },
        async (id) => (accessKey = await options.keys(id))?.secret,
        now,
        req.socket.remoteAddress,
      );
      const { signing } = verified;
      settle = verified.settle;
      const grant = accessKey!;
      if (query.has('X-Amz-Algorithm')) applyHoistedHeaders(req.headers, query);
      const engine = accountStore(options.engine, grant.accountId);
      // A browser's request: the Access-Control-* headers of the key's account's bucket, set before
      // anything can fail, so refusals (AccessDenied, NoSuchKey, ...) carry them too.
      if (req.headers.origin !== undefined) {
        corsDone = true;
        await addCorsHeaders(req, res, bucket, (name) => engine.corsOfBucketsNamed(name));
      }
      const operation = detect(req.method ?? 'GET', bucket, key, query);
      assertAllowed(grant, accessOf(req.method ?? 'GET', bucket, key, query), bucket);
      // Refused before any body is read: a write edgeport cannot honour as asked stores nothing.
      const kind = writeKind(req.method ?? 'GET', operation, key, query);
      if (kind) refuseUnsupportedWriteHeaders(kind, req.headers);
      refuseUnevaluatedConditions(req.method ?? 'GET', key, query, req.headers);
      const ctx: S3Context = { engine, grant, req, res, bucket, key, query, signing, requestId, now };
      // PutObject and UploadPart check a deferred signature as their body streams; every other
      // operation reads its (small) body first, so nothing acts on an unverified request: one
      // declared over the limit is refused before its client is told to send it.
      const streamsBody = req.method === 'PUT' && key !== undefined && !req.headers['x-amz-copy-source'];
      const readsBodyFirst = signing.verifyDeferred !== undefined && !streamsBody;
      if (readsBodyFirst) assertDeclaredWithin(req);
      // `Expect: 100-continue` is answered only now, once the header signature (over the declared
      // payload hash) and the key's rights are checked; a refusal closes without reading the body.
      // A body whose hash is not declared can only be verified from the body itself: it is read first.
      if (expectsContinue(req) && !continueSent(res)) res.writeContinue();
      if (readsBodyFirst) {
        ctx.body = await readBody(req);
        const mismatch = signing.verifyDeferred!(sha256Hex(ctx.body));
        if (mismatch) throw mismatch;
      }
      await operation(ctx);
    } catch (thrown) {
      await answerFailure(thrown, { req, res, requestId, resource, corsDone, bucketName });
    } finally {
      // A deferred signature never checked (the request failed first) is no failed guess.
      settle?.();
    }
  };
}

/** An unsigned GET or HEAD that asks for HTML: a browser's address bar, not an S3 client (those sign, and never ask for HTML). */
function isBrowserVisit(req: IncomingMessage, rawQuery: string): boolean {
  if ((req.method !== 'GET' && req.method !== 'HEAD') || req.headers.authorization !== undefined) return false;
  // A presigned URL (SigV4's query, or SigV2's, which is answered as S3 answers SigV2) is no visit.
  if (/(^|&)(X-Amz-Signature|X-Amz-Credential|Signature|AWSAccessKeyId)=/i.test(rawQuery)) return false;
  return /\btext\/html\b/i.test(req.headers.accept ?? '');
}

/**
 * The S3 handler as node:http's request listener (what `edgeport start` serves): should the
 * handler's promise ever reject, the request is logged and answered InternalError (or its
 * connection closed), never left an unhandled rejection.
 */
export function createS3Listener(options: S3HandlerOptions): RequestListener {
  return guardedListener(createS3Handler(options), 'S3-compatible API', options.logger, {
    contentType: 'application/xml',
    body: (req) => errorXml('InternalError', 'We encountered an internal error. Please try again.', (req.url ?? '/').split('?')[0]!, ''),
  });
}
