/**
 * S3 lifecycle configuration through a real listener with the AWS SDK: Put/Get/DeleteBucket-
 * LifecycleConfiguration as S3 clients send them, the refusals of what the store cannot do, the
 * document read back as written (a property over generated rules), and the rules applied by the
 * sweeper on the injected clock.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteBucketLifecycleCommand,
  GetBucketLifecycleConfigurationCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  UploadPartCommand,
  type LifecycleRule as S3LifecycleRule,
} from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { silentLogger } from '../../../src/core/log.ts';
import type { LifecycleRule } from '../../../src/store/engine/lifecycle.ts';
import { LifecycleSweeper } from '../../../src/store/engine/lifecycle-sweeper.ts';
import { lifecycleConfigurationXml, parseLifecycleConfiguration } from '../../../src/store/s3/operations/lifecycle.ts';
import { replaceDocuments, s3ErrorCode as code, startS3 } from './helpers.ts';

const DAY = 86_400_000;

test(
  'PutBucketLifecycleConfiguration as the SDK sends it; Get answers the rules; Delete removes them (then 404 NoSuchLifecycleConfiguration)',
  { timeout: 10_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    await assert.rejects(client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })), code('NoSuchLifecycleConfiguration', 404));
    const rules: S3LifecycleRule[] = [
      { ID: 'expire-logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 30 } },
      { ID: 'tmp-by-date', Status: 'Disabled', Filter: { And: { Prefix: 'tmp/' } }, Expiration: { Date: new Date('2031-01-01T00:00:00.000Z') } },
      { ID: 'archive', Status: 'Enabled', Filter: { Prefix: 'archive/' }, Transitions: [{ Days: 7, StorageClass: 'STANDARD_IA' }] },
      { ID: 'uploads', Status: 'Enabled', Filter: {}, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 } },
    ];
    await client.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: rules } }));
    const got = await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
    assert.deepEqual(got.Rules, [
      { ID: 'expire-logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 30 } },
      { ID: 'tmp-by-date', Status: 'Disabled', Filter: { Prefix: 'tmp/' }, Expiration: { Date: new Date('2031-01-01T00:00:00.000Z') } },
      { ID: 'archive', Status: 'Enabled', Filter: { Prefix: 'archive/' }, Transitions: [{ Days: 7, StorageClass: 'STANDARD_IA' }] },
      { ID: 'uploads', Status: 'Enabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 } },
    ]);
    // A rule without an ID gets one; the older rule-level Prefix is read too (boto's legacy PutBucketLifecycle).
    const replace = replaceDocuments(client);
    replace(
      '<LifecycleConfiguration><Rule><Prefix>old/</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>',
    );
    await client.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: [] } }));
    replace(undefined);
    const [only] = (await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules!;
    assert.deepEqual(
      [only!.Prefix, only!.Filter, only!.Expiration, typeof only!.ID, only!.ID!.length > 0],
      ['old/', undefined, { Days: 1 }, 'string', true],
      'read back in the form it was written',
    );
    await client.send(new DeleteBucketLifecycleCommand({ Bucket: bucket }));
    await assert.rejects(client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })), code('NoSuchLifecycleConfiguration', 404));
    await assert.rejects(client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'no-such-bucket' })), code('NoSuchBucket', 404));
  },
);

test('what the store cannot do is refused, naming it, and the rules in place stay', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const kept: S3LifecycleRule = { ID: 'kept', Status: 'Enabled', Filter: { Prefix: 'k/' }, Expiration: { Days: 1 } };
  await client.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: [kept] } }));
  const put = (rule: S3LifecycleRule) => client.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: [rule] } }));
  const base = { ID: 'r', Status: 'Enabled' as const };
  await assert.rejects(put({ ...base, Filter: { Tag: { Key: 'k', Value: 'v' } }, Expiration: { Days: 1 } }), code('NotImplemented', 501));
  await assert.rejects(
    put({ ...base, Filter: { And: { Prefix: 'a', Tags: [{ Key: 'k', Value: 'v' }] } }, Expiration: { Days: 1 } }),
    code('NotImplemented', 501),
  );
  await assert.rejects(put({ ...base, Filter: { ObjectSizeGreaterThan: 10 }, Expiration: { Days: 1 } }), code('NotImplemented', 501));
  await assert.rejects(put({ ...base, Filter: {}, NoncurrentVersionExpiration: { NoncurrentDays: 1 } }), code('NotImplemented', 501));
  await assert.rejects(put({ ...base, Filter: {}, Expiration: { ExpiredObjectDeleteMarker: true } }), code('NotImplemented', 501));
  await assert.rejects(put({ ...base, Filter: {}, Transitions: [{ Days: 1, StorageClass: 'GLACIER' }] }), code('InvalidStorageClass', 400));
  await assert.rejects(put({ ...base, Filter: {}, Expiration: { Days: 0 } }), code('InvalidArgument', 400));
  await assert.rejects(put({ ...base, Filter: {}, Expiration: { Date: new Date('2031-01-01T12:00:00Z') } }), code('InvalidArgument', 400));
  await assert.rejects(put({ ...base, Filter: {} }), code('InvalidArgument', 400), 'a rule with no action');
  await assert.rejects(
    client.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: bucket,
        LifecycleConfiguration: {
          Rules: [
            { ...base, Filter: {}, Expiration: { Days: 1 } },
            { ...base, Filter: {}, Expiration: { Days: 2 } },
          ],
        },
      }),
    ),
    code('InvalidArgument', 400),
  );
  const replace = replaceDocuments(client);
  for (const document of [
    '<LifecycleConfiguration></LifecycleConfiguration>',
    '<LifecycleConfiguration><Rule><Status>On</Status></Rule></LifecycleConfiguration>',
    '<LifecycleConfiguration><Rule><Status>Enabled</Status><Unknown/></Rule></LifecycleConfiguration>',
    '<NotLifecycle/>',
    '<LifecycleConfiguration><Rule><Status>Enabled</Status><Expiration><Days>1</Days><Date>2030-01-01</Date></Expiration></Rule></LifecycleConfiguration>',
  ]) {
    replace(document);
    await assert.rejects(
      client.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: [] } })),
      code('MalformedXML', 400),
      document,
    );
  }
  replace(undefined);
  assert.deepEqual(
    (await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules?.map((rule) => rule.ID),
    ['kept'],
  );
});

test('property: any rules the S3 face can express read back as written', { timeout: 30_000 }, () => {
  const condition = fc.oneof(
    fc.integer({ min: 1, max: 100_000 }).map((days) => ({ afterSeconds: days * 86_400 })),
    fc.integer({ min: 0, max: 100_000 }).map((days) => ({ date: days * DAY })),
  );
  const ruleArbitrary = fc
    .record({
      enabled: fc.boolean(),
      // XML 1.0 cannot carry most control characters (nor lone surrogates), in a key or anywhere.
      // eslint-disable-next-line no-control-regex -- the characters XML cannot hold are the point
      prefix: fc.string({ maxLength: 20 }).filter((prefix) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff]/.test(prefix)),
      expiration: fc.option(condition, { nil: undefined }),
      abortUploadsAfterSeconds: fc.option(
        fc.integer({ min: 1, max: 1000 }).map((days) => days * 86_400),
        { nil: undefined },
      ),
    })
    .filter((rule) => rule.expiration !== undefined || rule.abortUploadsAfterSeconds !== undefined);
  fc.assert(
    fc.property(fc.array(ruleArbitrary, { minLength: 1, maxLength: 5 }), (drafts) => {
      const rules: LifecycleRule[] = drafts.map((draft, i) => {
        const rule: LifecycleRule = { id: `rule-${i}`, enabled: draft.enabled, prefix: draft.prefix };
        if (draft.expiration) rule.expiration = draft.expiration;
        if (draft.abortUploadsAfterSeconds !== undefined) rule.abortUploadsAfterSeconds = draft.abortUploadsAfterSeconds;
        return rule;
      });
      assert.deepEqual(parseLifecycleConfiguration(lifecycleConfigurationXml(rules)), rules);
    }),
    { numRuns: 200 },
  );
});

test(
  'the rules applied: due objects expire (at the midnight after their age), a due upload is aborted, others stay; S3 clients see them gone',
  { timeout: 20_000 },
  async (t) => {
    const { client, bucket, engine, clock } = await startS3(t);
    await client.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: bucket,
        LifecycleConfiguration: {
          Rules: [
            { ID: 'logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 1 } },
            { ID: 'uploads', Status: 'Enabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } },
          ],
        },
      }),
    );
    clock.set(Date.UTC(2026, 5, 1, 15, 30));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'logs/a', Body: 'old' }));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'data/b', Body: 'kept' }));
    await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'big' }));
    clock.advance(DAY);
    const sweeper = new LifecycleSweeper({ meta: engine.metadata, clock, logger: silentLogger });
    await sweeper.runCycle();
    // An upload's age counts exactly; an object's is rounded up to the next midnight UTC, as S3 counts it.
    assert.equal((await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads, undefined);
    await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'logs/a' }));
    clock.set(Date.UTC(2026, 5, 3) - 1);
    await sweeper.runCycle();
    await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'logs/a' }));
    clock.set(Date.UTC(2026, 5, 3));
    await sweeper.runCycle();
    await assert.rejects(
      client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'logs/a' })),
      (error: Error & { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode === 404,
    );
    await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'data/b' }));
    assert.equal((await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads, undefined);
    assert.deepEqual([sweeper.stats.expiredObjects, sweeper.stats.abortedUploads], [1, 1]);
  },
);

test(
  'x-amz-expiration on PUT, HEAD, GET, copy and completion: the earliest enabled rule that expires the key, as the SDK reads it',
  { timeout: 10_000 },
  async (t) => {
    const { client, bucket, clock } = await startS3(t);
    clock.set(Date.UTC(2026, 5, 1, 15, 30));
    const expiration = (date: Date, rule: string) => `expiry-date="${date.toUTCString()}", rule-id="${rule}"`;
    await client.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: bucket,
        LifecycleConfiguration: {
          Rules: [
            { ID: 'rule1', Status: 'Enabled', Filter: { Prefix: 'days1/' }, Expiration: { Days: 1 } },
            { ID: 'all-in-30', Status: 'Enabled', Filter: {}, Expiration: { Days: 30 } },
            { ID: 'by-date', Status: 'Enabled', Filter: { Prefix: 'dated/' }, Expiration: { Date: new Date('2026-06-10T00:00:00Z') } },
            { ID: 'off', Status: 'Disabled', Filter: { Prefix: 'days1/' }, Expiration: { Date: new Date('2026-06-02T00:00:00Z') } },
            { ID: 'move "quoted" é', Status: 'Enabled', Filter: { Prefix: 'moved/' }, Transitions: [{ Days: 1, StorageClass: 'STANDARD_IA' }] },
          ],
        },
      }),
    );
    // Uploaded 2026-06-01 15:30 + 1 day, rounded up to the next midnight UTC: 2026-06-03.
    const put = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'days1/foo', Body: 'bar' }));
    assert.equal(put.Expiration, expiration(new Date('2026-06-03T00:00:00Z'), 'rule1'));
    assert.equal((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'days1/foo' }))).Expiration, put.Expiration);
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'days1/foo' }));
    assert.equal(got.Expiration, put.Expiration);
    await got.Body!.transformToString();
    const dated = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'dated/x', Body: 'x' }));
    assert.equal(dated.Expiration, expiration(new Date('2026-06-10T00:00:00Z'), 'by-date'), 'a date earlier than the 30 days of the rule for all');
    const other = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'moved/x', Body: 'x' }));
    assert.equal(other.Expiration, expiration(new Date('2026-07-02T00:00:00Z'), 'all-in-30'), 'a transition is no expiration');
    const copied = await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'days1/copy', CopySource: `${bucket}/dated/x` }));
    assert.equal(copied.Expiration, expiration(new Date('2026-06-03T00:00:00Z'), 'rule1'));
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'dated/big' }));
    const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'dated/big', UploadId, PartNumber: 1, Body: 'part' }));
    const done = await client.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'dated/big', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag! }] } }),
    );
    assert.equal(done.Expiration, expiration(new Date('2026-06-10T00:00:00Z'), 'by-date'));
    // A rule ID that cannot stand between quotes is escaped as in a URL; no rule, no header (seen at once after a change).
    await client.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: bucket,
        LifecycleConfiguration: { Rules: [{ ID: 'say "hi" é', Status: 'Enabled', Filter: { Prefix: 'days1/' }, Expiration: { Days: 2 } }] },
      }),
    );
    const escaped = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'days1/foo' }));
    assert.equal(escaped.Expiration, expiration(new Date('2026-06-04T00:00:00Z'), 'say %22hi%22 %C3%A9'));
    await client.send(new DeleteBucketLifecycleCommand({ Bucket: bucket }));
    assert.equal((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'days1/foo' }))).Expiration, undefined);
  },
);
