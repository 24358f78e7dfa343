/**
 * Bucket and object subresources edgeport has no feature for (versioning, ACLs, policies, tagging,
 * encryption, ...; CORS is operations/cors.ts, lifecycle operations/lifecycle.ts). Reading one answers what S3 answers for a bucket or object
 * where nothing was ever configured, so tools that read them all (rclone, Terraform, s3cmd info)
 * work; writing or deleting one is NotImplemented. A request naming any of them never reaches
 * PutObject, DeleteObject, CreateBucket or DeleteBucket: `DELETE /b/k?tagging` must not delete `k`.
 */
import { StoreError } from '../../engine/errors.ts';
import { requireBucket, requireKey, sendXml, type S3Context } from '../context.ts';
import { S3_ERRORS, S3Error } from '../s3-error.ts';
import { OWNER_FIELDS, OWNER_XML, xmlDocument } from '../xml.ts';
import { getObjectAttributes } from './object.ts';

type Operation = (ctx: S3Context) => Promise<void>;

/** Every access key acts as the one owner, with full control (ListBuckets names the same owner). */
const OWNER_ACL =
  `${OWNER_XML}<AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser">` +
  `${OWNER_FIELDS}</Grantee><Permission>FULL_CONTROL</Permission></Grant></AccessControlList>`;

/** A bucket subresource read: the document of "never configured", or S3's not-found error for it. */
type BucketRead = { document: [root: string, inner: string] } | { missing: [code: string, message: string] };

const BUCKET_READS: Record<string, BucketRead> = {
  versioning: { document: ['VersioningConfiguration', ''] },
  acl: { document: ['AccessControlPolicy', OWNER_ACL] },
  logging: { document: ['BucketLoggingStatus', ''] },
  notification: { document: ['NotificationConfiguration', ''] },
  accelerate: { document: ['AccelerateConfiguration', ''] },
  requestPayment: { document: ['RequestPaymentConfiguration', '<Payer>BucketOwner</Payer>'] },
  policy: { missing: ['NoSuchBucketPolicy', 'The bucket policy does not exist'] },
  tagging: { missing: ['NoSuchTagSet', 'The TagSet does not exist'] },
  encryption: { missing: ['ServerSideEncryptionConfigurationNotFoundError', 'The server side encryption configuration was not found'] },
  website: { missing: ['NoSuchWebsiteConfiguration', 'The specified bucket does not have a website configuration'] },
  'object-lock': { missing: ['ObjectLockConfigurationNotFoundError', 'Object Lock configuration does not exist for this bucket'] },
  replication: { missing: ['ReplicationConfigurationNotFoundError', 'The replication configuration was not found'] },
  ownershipControls: { missing: ['OwnershipControlsNotFoundError', 'The bucket ownership controls were not found'] },
  publicAccessBlock: { missing: ['NoSuchPublicAccessBlockConfiguration', 'The public access block configuration was not found'] },
};

/** Bucket subresources with no read here either (analytics, inventory, ...): always NotImplemented. */
const OTHER_BUCKET_SUBRESOURCES = ['analytics', 'inventory', 'metrics', 'intelligent-tiering', 'policyStatus', 'metadataTable'];

const OBJECT_SUBRESOURCES = ['tagging', 'acl', 'retention', 'legal-hold', 'restore', 'select', 'select-type', 'torrent', 'attributes', 'renameObject'];

function named(query: URLSearchParams, names: Iterable<string>): string | undefined {
  for (const name of names) if (query.has(name)) return name;
  return undefined;
}

/** The operation for a bucket request naming a configuration subresource, or undefined. */
export function bucketSubresource(method: string, query: URLSearchParams): Operation | undefined {
  const name = named(query, [...Object.keys(BUCKET_READS), ...OTHER_BUCKET_SUBRESOURCES]);
  if (name === undefined) return undefined;
  const read = BUCKET_READS[name];
  if (method !== 'GET' || !read) throw S3_ERRORS.notImplemented(`${method} ?${name} on a bucket`);
  return async (ctx) => {
    if (!(await ctx.engine.getBucket(requireBucket(ctx)))) throw new StoreError('STORE_NO_SUCH_BUCKET');
    if ('missing' in read) throw new S3Error(read.missing[0], 404, read.missing[1]);
    sendXml(ctx, 200, xmlDocument(...read.document));
  };
}

/** The operation for an object request naming a subresource (tagging, acl, ...), or undefined. */
export function objectSubresource(method: string, query: URLSearchParams): Operation | undefined {
  const name = named(query, OBJECT_SUBRESOURCES);
  if (name === undefined) return undefined;
  if (method === 'GET' && name === 'attributes') return getObjectAttributes;
  if (method !== 'GET' || (name !== 'tagging' && name !== 'acl')) throw S3_ERRORS.notImplemented(`${method} ?${name} on an object`);
  return async (ctx) => {
    if (!(await ctx.engine.head(requireBucket(ctx), requireKey(ctx)))) throw new StoreError('STORE_NO_SUCH_KEY');
    sendXml(ctx, 200, name === 'tagging' ? xmlDocument('Tagging', '<TagSet></TagSet>') : xmlDocument('AccessControlPolicy', OWNER_ACL));
  };
}
