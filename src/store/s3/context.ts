/** What every S3 operation receives, and the helpers to answer. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StoreEngine } from '../engine/store-engine.ts';
import type { S3AccessKey } from './key-grant.ts';
import { S3_ERRORS, S3Error } from './s3-error.ts';
import { sha256Hex, type SigningContext } from './sigv4.ts';

export interface S3Context {
  /** The request's account's view of the store. */
  engine: StoreEngine;
  /** The verified key: what it may do (key-grant.ts). */
  grant: S3AccessKey;
  req: IncomingMessage;
  res: ServerResponse;
  bucket: string | undefined;
  key: string | undefined;
  query: URLSearchParams;
  signing: SigningContext | undefined;
  requestId: string;
  now: number;
  /** The whole body, when the handler had to read it first (to check a deferred signature). */
  body?: Buffer;
}

export function sendXml(ctx: S3Context, status: number, body: string): void {
  ctx.res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), 'x-amz-request-id': ctx.requestId });
  ctx.res.end(body);
}

export function sendEmpty(ctx: S3Context, status: number, headers: Record<string, string | number> = {}): void {
  ctx.res.writeHead(status, { 'content-length': 0, 'x-amz-request-id': ctx.requestId, ...headers });
  ctx.res.end();
}

export function requireBucket(ctx: S3Context): string {
  return ctx.bucket!;
}

export function requireKey(ctx: S3Context): string {
  return ctx.key!;
}

/** S3 storage class names <-> the store's. */
export const TO_S3_CLASS = { Standard: 'STANDARD', InfrequentAccess: 'STANDARD_IA' } as const;
export const FROM_S3_CLASS: Record<string, 'Standard' | 'InfrequentAccess'> = { STANDARD: 'Standard', STANDARD_IA: 'InfrequentAccess' };

/** The largest body read whole (XML documents; any body whose signature is verified from the body itself). */
export const SMALL_BODY_LIMIT = 2 * 1024 * 1024;

/** S3's answer to a request document over the limit (real S3 refuses oversized XML bodies with this code). */
export function bodyTooLarge(limit: number): S3Error {
  return new S3Error(
    'MaxMessageLengthExceeded',
    400,
    `Your request was too big: a request body read whole may have at most ${limit} bytes (${limit / 1024 / 1024} MiB). Send less (e.g. fewer keys per DeleteObjects), or stream a large object with PutObject or UploadPart.`,
  );
}

function incompleteBody(): S3Error {
  return new S3Error('IncompleteBody', 400, 'You did not provide the number of bytes specified by the Content-Length HTTP header: the body ended early.');
}

/** A Content-Length (or aws-chunked decoded length) already over `limit`: refused before any byte is read. */
export function assertDeclaredWithin(req: IncomingMessage, limit = SMALL_BODY_LIMIT): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw bodyTooLarge(limit);
}

/**
 * Reads a whole (small) request body, refusing more than `limit` bytes. On refusal the request is
 * paused, not destroyed: the handler still answers the client (400 MaxMessageLengthExceeded) and
 * closes the connection, so no more of the body is read.
 */
export function readBody(req: IncomingMessage, limit = SMALL_BODY_LIMIT): Promise<Buffer> {
  assertDeclaredWithin(req, limit);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFailure);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > limit) {
        done();
        req.pause();
        reject(bodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      // A client that half-closes before its Content-Length ends the body early, not completely.
      if (!req.complete) reject(incompleteBody());
      else resolve(Buffer.concat(chunks));
    };
    const onFailure = (error: Error): void => {
      done();
      reject(error);
    };
    // A body cut short (the client closed mid-body) ends with 'close' and no 'end'.
    const onClose = (): void => {
      done();
      reject(incompleteBody());
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onFailure);
    req.once('close', onClose);
  });
}

/** Reads a small request body (XML documents), checking a declared x-amz-content-sha256. */
export async function readSmallBody(ctx: S3Context): Promise<string> {
  const body = ctx.body ?? (await readBody(ctx.req));
  const declared = ctx.signing?.payloadHash;
  if (declared && /^[0-9a-f]{64}$/.test(declared) && sha256Hex(body) !== declared) throw S3_ERRORS.contentSha256Mismatch();
  return body.toString('utf8');
}

/**
 * Buckets are never versioned: every object's one version is `null` (as ListObjectVersions shows),
 * so a request for any other version id is refused rather than answered with the current object.
 */
export function assertNullVersion(versionId: string | null | undefined): void {
  if (versionId !== null && versionId !== undefined && versionId !== 'null') throw S3_ERRORS.invalidArgument('Invalid version id specified');
}
