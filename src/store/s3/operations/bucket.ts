/** Bucket operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket, GetBucketLocation. */
import { StoreError } from '../../engine/errors.ts';
import { element, OWNER_XML, parseRequestXml, xmlDocument } from '../xml.ts';
import { readSmallBody, requireBucket, sendEmpty, sendXml, type S3Context } from '../context.ts';
import { mayUseBucket } from '../key-grant.ts';
import { S3_ERRORS } from '../s3-error.ts';

/** The one region every bucket is in (HeadBucket, GetBucketLocation and ListBuckets name it). */
const REGION = 'auto';

/** ListBuckets' largest page, and its page without `max-buckets` (S3's general purpose bucket quota). */
const MAX_BUCKETS = 10_000;

/**
 * ListBuckets, paged as S3 does: buckets in name order, `prefix` and `bucket-region` filter them,
 * `max-buckets` (1 to 10000) bounds a page, and a truncated page names the ContinuationToken that
 * resumes after its last bucket. Every bucket is in the one region, `auto`.
 */
export async function listBuckets(ctx: S3Context): Promise<void> {
  const rawMax = ctx.query.get('max-buckets');
  if (rawMax !== null && (!/^\d+$/.test(rawMax) || Number(rawMax) < 1 || Number(rawMax) > MAX_BUCKETS)) {
    throw S3_ERRORS.invalidArgument(`max-buckets must be an integer between 1 and ${MAX_BUCKETS}, not ${rawMax}.`);
  }
  const limit = rawMax === null ? MAX_BUCKETS : Number(rawMax);
  const token = ctx.query.get('continuation-token');
  const after = token === null ? undefined : bucketAfter(token);
  const prefix = ctx.query.get('prefix');
  const region = ctx.query.get('bucket-region');
  const matching = (await ctx.engine.listBuckets())
    .filter(
      (bucket) =>
        mayUseBucket(ctx.grant, bucket.name) &&
        bucket.name.startsWith(prefix ?? '') &&
        (region === null || region === REGION) &&
        (after === undefined || bucket.name > after),
    )
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const page = matching.slice(0, limit);
  const next = matching.length > page.length ? continuationToken(page.at(-1)!.name) : undefined;
  const inner = page
    .map(
      (b) => `<Bucket>${element('Name', b.name)}${element('CreationDate', new Date(b.created).toISOString())}` + `${element('BucketRegion', REGION)}</Bucket>`,
    )
    .join('');
  sendXml(
    ctx,
    200,
    xmlDocument(
      'ListAllMyBucketsResult',
      `${OWNER_XML}<Buckets>${inner}</Buckets>${element('ContinuationToken', next)}` + element('Prefix', prefix ?? undefined),
    ),
  );
}

const TOKEN_TAG = 'bucket:';

/** An opaque token (base64url) naming the bucket a page ended with. */
function continuationToken(lastBucket: string): string {
  return Buffer.from(TOKEN_TAG + lastBucket).toString('base64url');
}

/** The bucket a ListBuckets continuation token resumes after; InvalidArgument when it is not one ListBuckets gave. */
function bucketAfter(token: string): string {
  const decoded = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, 'base64url').toString('utf8') : '';
  if (!decoded.startsWith(TOKEN_TAG) || decoded.length === TOKEN_TAG.length || continuationToken(decoded.slice(TOKEN_TAG.length)) !== token) {
    throw S3_ERRORS.invalidArgument('The continuation token provided is incorrect: pass the ContinuationToken of the previous ListBuckets page unchanged.');
  }
  return decoded.slice(TOKEN_TAG.length);
}

export async function createBucket(ctx: S3Context): Promise<void> {
  const name = requireBucket(ctx);
  await readBucketConfiguration(ctx);
  await ctx.engine.createBucket(name);
  sendEmpty(ctx, 200, { location: `/${name}` });
}

/**
 * CreateBucket's optional body, a CreateBucketConfiguration (its LocationConstraint: any region is
 * accepted, every bucket is in `auto`). Read (at most SMALL_BODY_LIMIT) and checked, as S3 does:
 * a body that is not such a document is MalformedXML and creates nothing.
 */
async function readBucketConfiguration(ctx: S3Context): Promise<void> {
  const headers = ctx.req.headers;
  if (headers['transfer-encoding'] === undefined && Number(headers['content-length'] ?? 0) === 0 && ctx.body === undefined) return;
  const text = await readSmallBody(ctx);
  if (text.trim() === '') return;
  let doc: { CreateBucketConfiguration?: unknown };
  try {
    doc = parseRequestXml(text) as { CreateBucketConfiguration?: unknown };
  } catch {
    throw S3_ERRORS.malformedXml();
  }
  if (doc.CreateBucketConfiguration === undefined) throw S3_ERRORS.malformedXml();
}

export async function headBucket(ctx: S3Context): Promise<void> {
  const bucket = await ctx.engine.getBucket(requireBucket(ctx));
  // HEAD answers carry no body: a missing bucket is a bare 404.
  sendEmpty(ctx, bucket ? 200 : 404, bucket ? { 'x-amz-bucket-region': REGION } : {});
}

export async function deleteBucket(ctx: S3Context): Promise<void> {
  await ctx.engine.deleteBucket(requireBucket(ctx));
  sendEmpty(ctx, 204);
}

export async function getBucketLocation(ctx: S3Context): Promise<void> {
  if (!(await ctx.engine.getBucket(requireBucket(ctx)))) throw new StoreError('STORE_NO_SUCH_BUCKET');
  sendXml(ctx, 200, xmlDocument('LocationConstraint', REGION));
}
