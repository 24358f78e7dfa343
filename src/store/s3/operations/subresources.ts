/**
 * Bucket and object subresources edgeport has no feature for (versioning, ACLs, policies, tagging,
 * encryption, ...; CORS is operations/cors.ts, lifecycle operations/lifecycle.ts). Reading one answers what S3 answers for a bucket or object
 * where nothing was ever configured, so tools that read them all (rclone, Terraform, s3cmd info)
 * work; writing or deleting one is NotImplemented, but for PutBucketOwnershipControls with the one
 * ownership every bucket has (BucketOwnerEnforced), accepted as it changes nothing. A request naming any of them never reaches
 * PutObject, DeleteObject, CreateBucket or DeleteBucket: `DELETE /b/k?tagging` must not delete `k`.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { StoreError } from '../../engine/errors.ts';
import { readConfigurationDocument } from '../configuration-document.ts';
import { requireBucket, requireKey, sendEmpty, sendXml, type S3Context } from '../context.ts';
import { S3_ERRORS, S3Error } from '../s3-error.ts';
import { element, OWNER_FIELDS, OWNER_XML, REQUEST_XML_MAX_DEPTH, xmlDocument } from '../xml.ts';
import { getObjectAttributes } from './object.ts';

type Operation = (ctx: S3Context) => Promise<void>;

/** Every access key acts as the one owner, with full control (ListBuckets names the same owner). */
const OWNER_ACL =
  `${OWNER_XML}<AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser">` +
  `${OWNER_FIELDS}</Grantee><Permission>FULL_CONTROL</Permission></Grant></AccessControlList>`;

/** The one Object Ownership every bucket has. */
const OWNERSHIP = 'BucketOwnerEnforced';

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
  // Every edgeport bucket is what S3 makes every new bucket (since April 2023): ACLs disabled, the bucket owner owns every object.
  ownershipControls: { document: ['OwnershipControls', `<Rule>${element('ObjectOwnership', OWNERSHIP)}</Rule>`] },
  // GetBucketPolicyStatus of a bucket with no policy: S3 answers NoSuchBucketPolicy, as GetBucketPolicy does.
  policyStatus: { missing: ['NoSuchBucketPolicy', 'The bucket policy does not exist'] },
  publicAccessBlock: { missing: ['NoSuchPublicAccessBlockConfiguration', 'The public access block configuration was not found'] },
};

/** Bucket subresources with no read here either (analytics, inventory, ...): always NotImplemented. */
const OTHER_BUCKET_SUBRESOURCES = ['analytics', 'inventory', 'metrics', 'intelligent-tiering', 'metadataTable'];

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
  if (name === 'ownershipControls' && method === 'PUT') return putBucketOwnershipControls;
  if (name === 'ownershipControls' && method === 'DELETE') {
    throw S3_ERRORS.notImplemented(`DELETE ?ownershipControls on a bucket (every bucket is ${OWNERSHIP} and keeps that rule)`);
  }
  if (method !== 'GET' || !read) throw S3_ERRORS.notImplemented(`${method} ?${name} on a bucket`);
  return async (ctx) => {
    if (!(await ctx.engine.getBucket(requireBucket(ctx)))) throw new StoreError('STORE_NO_SUCH_BUCKET');
    if ('missing' in read) throw new S3Error(read.missing[0], 404, read.missing[1]);
    sendXml(ctx, 200, xmlDocument(...read.document));
  };
}

const ownershipXml = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  maxNestedTags: REQUEST_XML_MAX_DEPTH - 1,
  isArray: (name) => name === 'Rule',
});

/** The ObjectOwnership values S3 knows. */
const OWNERSHIPS = new Set(['BucketOwnerEnforced', 'BucketOwnerPreferred', 'ObjectWriter']);

/**
 * The ObjectOwnership of an OwnershipControls document (one Rule, as S3 takes it); MalformedXML
 * unless it is one.
 */
function parseOwnershipControls(text: string): string {
  try {
    if (XMLValidator.validate(text) !== true) throw new Error('not well-formed');
    const doc = ownershipXml.parse(text) as { OwnershipControls?: { Rule?: Array<{ ObjectOwnership?: unknown }> } };
    const rules = doc.OwnershipControls?.Rule;
    const value = rules?.length === 1 ? rules[0]!.ObjectOwnership : undefined;
    if (typeof value !== 'string' || !OWNERSHIPS.has(value)) throw new Error('no ObjectOwnership');
    return value;
  } catch {
    throw S3_ERRORS.malformedXml();
  }
}

/**
 * PutBucketOwnershipControls: BucketOwnerEnforced is what the bucket already is (accepted, nothing
 * changes); the settings that enable ACLs are NotImplemented, as ACLs are.
 */
async function putBucketOwnershipControls(ctx: S3Context): Promise<void> {
  if (!(await ctx.engine.getBucket(requireBucket(ctx)))) throw new StoreError('STORE_NO_SUCH_BUCKET');
  const ownership = parseOwnershipControls(await readConfigurationDocument(ctx, OWNERSHIP_DOCUMENT_MAX, 'OwnershipControls document'));
  if (ownership !== OWNERSHIP) {
    throw S3_ERRORS.notImplemented(`PutBucketOwnershipControls with ObjectOwnership ${ownership} (every bucket is ${OWNERSHIP}: ACLs are disabled)`);
  }
  sendEmpty(ctx, 200);
}

/** An OwnershipControls document is a few hundred bytes. */
const OWNERSHIP_DOCUMENT_MAX = 16 * 1024;

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
