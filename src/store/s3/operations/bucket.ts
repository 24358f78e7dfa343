/** Bucket operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket, GetBucketLocation. */
import { StoreError } from '../../engine/errors.ts';
import { element, OWNER_XML, xmlDocument } from '../xml.ts';
import { requireBucket, sendEmpty, sendXml, type S3Context } from '../context.ts';
import { mayUseBucket } from '../key-grant.ts';

export async function listBuckets(ctx: S3Context): Promise<void> {
  const buckets = (await ctx.engine.listBuckets()).filter((bucket) => mayUseBucket(ctx.grant, bucket.name));
  const inner = buckets.map((b) => `<Bucket>${element('Name', b.name)}${element('CreationDate', new Date(b.created).toISOString())}</Bucket>`).join('');
  sendXml(ctx, 200, xmlDocument('ListAllMyBucketsResult', `${OWNER_XML}<Buckets>${inner}</Buckets>`));
}

export async function createBucket(ctx: S3Context): Promise<void> {
  const name = requireBucket(ctx);
  await ctx.engine.createBucket(name);
  sendEmpty(ctx, 200, { location: `/${name}` });
}

export async function headBucket(ctx: S3Context): Promise<void> {
  const bucket = await ctx.engine.getBucket(requireBucket(ctx));
  // HEAD answers carry no body: a missing bucket is a bare 404.
  sendEmpty(ctx, bucket ? 200 : 404, bucket ? { 'x-amz-bucket-region': 'auto' } : {});
}

export async function deleteBucket(ctx: S3Context): Promise<void> {
  await ctx.engine.deleteBucket(requireBucket(ctx));
  sendEmpty(ctx, 204);
}

export async function getBucketLocation(ctx: S3Context): Promise<void> {
  if (!(await ctx.engine.getBucket(requireBucket(ctx)))) throw new StoreError('STORE_NO_SUCH_BUCKET');
  sendXml(ctx, 200, xmlDocument('LocationConstraint', 'auto'));
}
