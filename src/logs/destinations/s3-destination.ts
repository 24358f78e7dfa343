/**
 * `s3://<bucket>/<path>?region=..&endpoint=..&access-key-id=..&secret-access-key=..`: batches become
 * objects in any S3-compatible store (path-style addressing when an endpoint is given). A job of an
 * account other than the operator's connects only where its guard allows: an endpoint that is an
 * IP literal or `localhost` is judged before connecting, names in each connection's lookup.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { guardedLookup, literalRefusal, urlPort, type OutboundGuard } from '../../core/net/outbound-guard.ts';
import { DestinationError, type DeliveredBatch, type LogDestination } from './destination.ts';
import { postFailure } from './guarded-post.ts';

export interface S3DestinationOptions {
  bucket: string;
  region: string;
  endpoint: string | undefined;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** Where the account may connect; null: anywhere (the operator's jobs). */
  guard?: OutboundGuard | null;
  /** A write not answered within this is abandoned and fails (default: the SDK's own, none). */
  timeoutMs?: number;
}

/** The AWS SDK is loaded by the first s3:// batch: a server without such jobs never pays for it. */
let sdk: Promise<typeof S3Sdk> | undefined;

export function s3Destination(options: S3DestinationOptions): LogDestination {
  const endpoint = options.endpoint ? new URL(endpointUrl(options.endpoint)) : new URL(`https://s3.${options.region}.amazonaws.com`);
  const guard = options.guard ?? null;
  const refused = guard && literalRefusal(guard, endpoint);
  const lookup = guard ? guardedLookup(guard, urlPort(endpoint)) : undefined;
  let client: S3Client | undefined;
  const clientOf = (S3: typeof S3Client) =>
    (client ??= new S3({
      ...(lookup ? { requestHandler: { httpAgent: new HttpAgent({ keepAlive: true, lookup }), httpsAgent: new HttpsAgent({ keepAlive: true, lookup }) } } : {}),
      region: options.region,
      ...(options.endpoint ? { endpoint: endpointUrl(options.endpoint), forcePathStyle: true } : {}),
      ...(options.accessKeyId && options.secretAccessKey
        ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
        : {}),
      maxAttempts: 1,
    }));
  return {
    async write(batch: DeliveredBatch): Promise<void> {
      if (refused)
        throw new DestinationError(
          `S3 PutObject to bucket ${JSON.stringify(options.bucket)} failed: the destination leads where this account may not connect: ${refused}`,
        );
      const signal = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
      try {
        const { PutObjectCommand, S3Client } = await (sdk ??= import('@aws-sdk/client-s3'));
        await clientOf(S3Client).send(
          new PutObjectCommand({
            Bucket: options.bucket,
            Key: batch.name,
            Body: batch.gzipped,
            ContentType: batch.contentType,
            ContentEncoding: 'gzip',
          }),
          signal ? { abortSignal: signal } : {},
        );
      } catch (error) {
        const why = signal?.aborted ? `no answer from ${endpoint.origin} within ${options.timeoutMs} ms` : `${(error as Error).name}: ${postFailure(error)}`;
        throw new DestinationError(`S3 PutObject to bucket ${JSON.stringify(options.bucket)} failed: ${why}`);
      }
    },
    async close() {
      client?.destroy();
    },
  };
}

/** The reference's endpoints are hosts without a scheme; https is assumed then. */
function endpointUrl(endpoint: string): string {
  return /^https?:\/\//.test(endpoint) ? endpoint : `https://${endpoint}`;
}
