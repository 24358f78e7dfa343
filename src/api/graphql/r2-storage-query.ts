/**
 * Runs a parsed GraphQL query against the one dataset this server answers:
 * `viewer { accounts(filter: {accountTag}) { r2StorageAdaptiveGroups(limit, filter: {bucketName, ...}) { max { objectCount payloadSize metadataSize uploadCount } dimensions { bucketName storageClass datetime date } } } }`
 * (what `wrangler r2 bucket info` asks), from the buckets' current contents. Anything else is a
 * GraphQLQueryError that names what is supported.
 *
 * By design: the figures are the bucket's now, whatever time range the filter names (there is no
 * history to group by time); without a bucketName filter, one group per bucket when the query asks
 * for the bucketName dimension, else one group summing the account's buckets.
 *
 * Bounded (the query's cost was checked before, graphql-cost.ts): a query counts each bucket once,
 * however many nodes ask for it, and at most MAX_BUCKETS_PER_QUERY buckets; it runs in time slices
 * (time-slice.ts), letting other requests in between buckets and between groups of its answer.
 */
import type { BucketInfo, BucketUsage } from '../../store/engine/types.ts';
import { GraphQLRequestError } from './graphql-errors.ts';
import type { GraphQLField, GraphQLValue } from './graphql-parser.ts';
import { resolve } from './graphql-values.ts';
import { TimeSlice } from './time-slice.ts';

export class GraphQLQueryError extends GraphQLRequestError {
  constructor(message: string, path: Array<string | number>) {
    super('GRAPHQL_VALIDATION_FAILED', message, { path });
  }
}

/** What the query may read: the caller's account, if it may read its R2 storage. */
export interface R2StorageSource {
  /** Whether the caller may read this account's R2 storage (its own account, and a token allowed to). */
  mayRead(accountTag: string): boolean;
  listBuckets(): Promise<BucketInfo[]>;
  getBucket(name: string): Promise<BucketInfo | null>;
  /** The bucket's count (null: it was deleted meanwhile). */
  bucketUsage(name: string): Promise<BucketUsage | null>;
  now(): number;
}

const SUPPORTED = 'viewer.accounts(filter: {accountTag}).r2StorageAdaptiveGroups';
const MAX_FIELDS = ['objectCount', 'payloadSize', 'metadataSize', 'uploadCount'] as const;
const DIMENSIONS = ['bucketName', 'storageClass', 'datetime', 'date'] as const;
/** Buckets one query may count, however many nodes ask (each is a read of its rows, bounded and chunked by the store). */
export const MAX_BUCKETS_PER_QUERY = 100;
/** The most `limit` a node may ask for, as on the platform. */
export const MAX_LIMIT = 10_000;

type Json = unknown;

/** An object of the answer, keyed by the query's names: without a prototype, so an alias `__proto__` is a key like any other. */
function answerObject(): Record<string, Json> {
  return Object.create(null) as Record<string, Json>;
}

/** One query's run: its variables, what it may read, the buckets it counted, its time slices. */
interface Run {
  variables: Record<string, unknown>;
  source: R2StorageSource;
  /** Each bucket's count, read once per query. */
  usages: Map<string, Promise<BucketUsage | null>>;
  slice: TimeSlice;
}

export async function runR2StorageQuery(
  selections: GraphQLField[],
  variables: Record<string, unknown>,
  source: R2StorageSource,
  slice = new TimeSlice(),
): Promise<Record<string, Json>> {
  const run: Run = { variables, source, usages: new Map(), slice };
  const data: Record<string, Json> = answerObject();
  for (const field of selections) {
    const key = field.alias ?? field.name;
    if (field.name === '__typename') data[key] = 'Query';
    else if (field.name === 'viewer') data[key] = await viewer(field, run, [key]);
    else throw new GraphQLQueryError(`unknown field "${field.name}" of Query: this server answers ${SUPPORTED}`, [key]);
  }
  return data;
}

async function viewer(field: GraphQLField, run: Run, path: Array<string | number>): Promise<Json> {
  const out: Record<string, Json> = answerObject();
  for (const sub of field.selections) {
    const key = sub.alias ?? sub.name;
    if (sub.name === '__typename') out[key] = 'viewer';
    else if (sub.name === 'accounts') out[key] = await accounts(sub, run, [...path, key]);
    else throw new GraphQLQueryError(`unknown field "${sub.name}" of viewer: this server answers ${SUPPORTED}`, [...path, key]);
  }
  return out;
}

async function accounts(field: GraphQLField, run: Run, path: Array<string | number>): Promise<Json> {
  const { variables, source } = run;
  const filter = objectArgument(field, 'filter', variables, path);
  const tag = filter.accountTag;
  if (typeof tag !== 'string') throw new GraphQLQueryError('accounts needs filter: {accountTag: "<account id>"}', path);
  // Another account's tag answers exactly like one that does not exist.
  if (!source.mayRead(tag)) throw new GraphQLQueryError('not authorized for that account', path);
  const account: Record<string, Json> = answerObject();
  for (const sub of field.selections) {
    const key = sub.alias ?? sub.name;
    if (sub.name === '__typename') account[key] = 'account';
    else if (sub.name === 'r2StorageAdaptiveGroups') account[key] = await storageGroups(sub, run, [...path, 0, key]);
    else throw new GraphQLQueryError(`unknown field "${sub.name}" of account: this server answers r2StorageAdaptiveGroups only`, [...path, 0, key]);
  }
  return [account];
}

async function storageGroups(field: GraphQLField, run: Run, path: Array<string | number>): Promise<Json> {
  const { variables, source } = run;
  const limit = resolve(argument(field, 'limit'), variables);
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new GraphQLQueryError(`r2StorageAdaptiveGroups needs limit: an integer from 1 to ${MAX_LIMIT}`, path);
  const filter = objectArgument(field, 'filter', variables, path);
  const named =
    typeof filter.bucketName === 'string'
      ? [filter.bucketName]
      : Array.isArray(filter.bucketName_in)
        ? filter.bucketName_in.filter((name): name is string => typeof name === 'string')
        : undefined;
  const perBucket = field.selections.some((sub) => sub.name === 'dimensions' && sub.selections.some((d) => d.name === 'bucketName'));
  let buckets: BucketInfo[];
  if (named)
    buckets = (await Promise.all(named.slice(0, MAX_BUCKETS_PER_QUERY + 1).map((name) => source.getBucket(name)))).filter((b): b is BucketInfo => b !== null);
  else buckets = await source.listBuckets();
  if (typeof filter.storageClass === 'string') buckets = buckets.filter((bucket) => bucket.storageClass === filter.storageClass);
  if (buckets.length > MAX_BUCKETS_PER_QUERY) {
    throw new GraphQLQueryError(
      `the query covers ${buckets.length} buckets; at most ${MAX_BUCKETS_PER_QUERY} are counted at once: filter by bucketName or bucketName_in`,
      path,
    );
  }
  // One bucket at a time: SQLite reads each in chunks, and counts started side by side would each
  // read their first chunk in the same turn of the event loop.
  const usages: Array<{ bucket: BucketInfo; usage: BucketUsage }> = [];
  for (const bucket of buckets) {
    const usage = await bucketUsage(run, bucket.name, path);
    // A bucket deleted since it was listed is left out, as if listed a moment later.
    if (usage) usages.push({ bucket, usage });
    await run.slice.pause();
  }
  const now = source.now();
  const groups = perBucket || named?.length === 1 ? usages : usages.length === 0 ? [] : [{ bucket: undefined, usage: sum(usages.map((u) => u.usage)) }];
  const out: Json[] = [];
  for (const [i, { bucket, usage }] of groups.slice(0, limit).entries()) {
    out.push(group(field, bucket, usage, now, [...path, i]));
    await run.slice.pause();
  }
  return out;
}

/** The bucket's count, read once per query whatever asks for it again; at most MAX_BUCKETS_PER_QUERY different buckets. */
async function bucketUsage(run: Run, name: string, path: Array<string | number>): Promise<BucketUsage | null> {
  let usage = run.usages.get(name);
  if (usage === undefined) {
    if (run.usages.size >= MAX_BUCKETS_PER_QUERY) {
      throw new GraphQLQueryError(
        `the query covers more than ${MAX_BUCKETS_PER_QUERY} buckets; at most ${MAX_BUCKETS_PER_QUERY} are counted at once: filter by bucketName or bucketName_in`,
        path,
      );
    }
    usage = run.source.bucketUsage(name);
    run.usages.set(name, usage);
  }
  return usage;
}

function group(field: GraphQLField, bucket: BucketInfo | undefined, usage: BucketUsage, now: number, path: Array<string | number>): Json {
  const out: Record<string, Json> = answerObject();
  for (const sub of field.selections) {
    const key = sub.alias ?? sub.name;
    if (sub.name === '__typename') out[key] = 'AccountR2StorageAdaptiveGroups';
    else if (sub.name === 'max') out[key] = pick(sub, MAX_FIELDS, (name) => usage[name], [...path, key]);
    else if (sub.name === 'dimensions') {
      out[key] = pick(
        sub,
        DIMENSIONS,
        (name) => {
          switch (name) {
            case 'bucketName':
              return bucket?.name ?? null;
            case 'storageClass':
              return bucket?.storageClass ?? null;
            case 'datetime':
              return new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
            case 'date':
              return new Date(now).toISOString().slice(0, 10);
          }
        },
        [...path, key],
      );
    } else
      throw new GraphQLQueryError(
        `unknown field "${sub.name}" of r2StorageAdaptiveGroups: this server answers max { ${MAX_FIELDS.join(' ')} } and dimensions { ${DIMENSIONS.join(' ')} }`,
        [...path, key],
      );
  }
  return out;
}

function pick<Name extends string>(field: GraphQLField, names: readonly Name[], value: (name: Name) => Json, path: Array<string | number>): Json {
  const out: Record<string, Json> = answerObject();
  for (const sub of field.selections) {
    const key = sub.alias ?? sub.name;
    if (sub.name === '__typename') out[key] = field.name;
    else if ((names as readonly string[]).includes(sub.name)) out[key] = value(sub.name as Name);
    else throw new GraphQLQueryError(`unknown field "${sub.name}" of ${field.name}: this server answers ${names.join(', ')}`, [...path, key]);
  }
  return out;
}

function sum(usages: BucketUsage[]): BucketUsage {
  return usages.reduce((a, b) => ({
    objectCount: a.objectCount + b.objectCount,
    payloadSize: a.payloadSize + b.payloadSize,
    metadataSize: a.metadataSize + b.metadataSize,
    uploadCount: a.uploadCount + b.uploadCount,
    complete: a.complete && b.complete,
  }));
}

function argument(field: GraphQLField, name: string): GraphQLValue | undefined {
  return field.arguments.find(([arg]) => arg === name)?.[1];
}

function objectArgument(field: GraphQLField, name: string, variables: Record<string, unknown>, path: Array<string | number>): Record<string, unknown> {
  const value = resolve(argument(field, name), variables);
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new GraphQLQueryError(`${field.name}'s ${name} must be an input object`, path);
  return value as Record<string, unknown>;
}
