/**
 * `s3://<bucket>/<path>?region=..&endpoint=..&access-key-id=..&secret-access-key=..`: batches become
 * objects in any S3-compatible store (path-style addressing when an endpoint is given).
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DestinationError, type DeliveredBatch, type LogDestination } from './destination.ts';

export interface S3DestinationOptions {
  bucket: string;
  region: string;
  endpoint: string | undefined;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
}

export function s3Destination(options: S3DestinationOptions): LogDestination {
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: endpointUrl(options.endpoint), forcePathStyle: true } : {}),
    ...(options.accessKeyId && options.secretAccessKey
      ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
      : {}),
    maxAttempts: 1,
  });
  return {
    async write(batch: DeliveredBatch): Promise<void> {
      try {
        await client.send(new PutObjectCommand({
          Bucket: options.bucket, Key: batch.name, Body: batch.gzipped,
          ContentType: batch.contentType, ContentEncoding: 'gzip',
        }));
      } catch (error) {
        throw new DestinationError(`S3 PutObject to bucket ${JSON.stringify(options.bucket)} failed: ${(error as Error).name}: ${(error as Error).message}`);
      }
    },
    async close() {
      client.destroy();
    },
  };
}

/** The reference's endpoints are hosts without a scheme; https is assumed then. */
function endpointUrl(endpoint: string): string {
  return /^https?:\/\//.test(endpoint) ? endpoint : `https://${endpoint}`;
}
