/**
 * Runs a parsed GraphQL query against the one dataset this server answers:
 * `viewer { accounts(filter: {accountTag}) { r2StorageAdaptiveGroups(limit, filter: {bucketName, ...}) { max { objectCount payloadSize metadataSize uploadCount } dimensions { bucketName storageClass datetime date } } } }`
 * (what `wrangler r2 bucket info` asks), from the buckets' current contents. Anything else is a
 * GraphQLQueryError that names what is supported.
 *
 * By design: the figures are the bucket's now, whatever time range the filter names (there is no
 * history to group by time); without a bucketName filter, one group per bucket when the query asks
 * for the bucketName dimension, else one group summing the account's buckets.
 */
import type { BucketInfo, BucketUsage } from '../../store/engine/types.ts';
import type { GraphQLField, GraphQLValue } from './graphql-parser.ts';

export class GraphQLQueryError extends Error {
  readonly path: Array<string | number>;

  constructor(message: string, path: Array<string | number>) {
    super(message);
    this.path = path;
  }
}

/** What the query may read: the caller's account, if it may read its R2 storage. */
export interface R2StorageSource {
  /** Whether the caller may read this account's R2 storage (its own account, and a token allowed to). */
  mayRead(accountTag: string): boolean;
  listBuckets(): Promise<BucketInfo[]>;
  getBucket(name: string): Promise<BucketInfo | null>;
  bucketUsage(name: string): Promise<BucketUsage>;
  now(): number;
}

const SUPPORTED = 'viewer.accounts(filter: {accountTag}).r2StorageAdaptiveGroups';
const MAX_FIELDS = ['objectCount', 'payloadSize', 'metadataSize', 'uploadCount'] as const;
const DIMENSIONS = ['bucketName', 'storageClass', 'datetime', 'date'] as const;
/** Buckets one query may count (each is a bounded read of its rows). */
export const MAX_BUCKETS_PER_QUERY = 100;

type Json = unknown;

export async function runR2StorageQuery(selections: GraphQLField[], variables: Record<string, unknown>, source: R2StorageSource): Promise<Record<string, Json>> {
  const data: Record<string, Json> = {};
  for (const field of selections) {
    const key = field.alias ?? field.name;
    if (field.name === '__typename') data[key] = 'Query';
    else if (field.name === 'viewer') data[key] = await viewer(field, variables, source, [key]);
    else throw new GraphQLQueryError(`unknown field "${field.name}" of Query: this server answers ${SUPPORTED}`, [key]);
  }
  return data;
}

async function viewer(field: GraphQLField, variables: Record<string, unknown>, source: R2StorageSource, path: Array<string | number>): Promise<Json> {
  const out: Record<string, Json> = {};
  for (const sub of field.selections) {
    const key = sub.alias ?? sub.name;
    if (sub.name === '__typename') out[key] = 'viewer';
    else if (sub.name === 'accounts') out[key] = await accounts(sub, variables, source, [...path, key]);
    else throw new GraphQLQueryError(`unknown field "${sub.name}" of viewer: this server answers ${SUPPORTED}`, [...path, key]);
  }
  return out;
}

async function accounts(field: GraphQLField, variables: Record<string, unknown>, source: R2StorageSource, path: Array<string | number>): Promise<Json> {
  const filter = objectArgument(field, 'filter', variables, path);
  const tag = filter.accountTag;
  if (typeof tag !== 'string') throw new GraphQLQueryError('accounts needs filter: {accountTag: "<account id>"}', path);
  // Another account's tag answers exactly like one that does not exist.
  if (!source.mayRead(tag)) throw new GraphQLQueryError('not authorized for that account', path);
  const account: Record<string, Json> = {};
  for (const sub of field.selections) {
    const key = sub.alias ?? sub.name;
    if (sub.name === '__typename') account[key] = 'account';
    else if (sub.name === 'r2StorageAdaptiveGroups') account[key] = await storageGroups(sub, variables, source, [...path, 0, key]);
    else throw new GraphQLQueryError(`unknown field "${sub.name}" of account: this server answers r2StorageAdaptiveGroups only`, [...path, 0, key]);
  }
  return [account];
}

async function storageGroups(field: GraphQLField, variables: Record<string, unknown>, source: R2StorageSource, path: Array<string | number>): Promise<Json> {
  const limit = resolve(argument(field, 'limit'), variables, path);
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new GraphQLQueryError('r2StorageAdaptiveGroups needs limit: an integer from 1 to 10000', path);
  const filter = objectArgument(field, 'filter', variables, path);
  const named = typeof filter.bucketName === 'string' ? [filter.bucketName]
    : Array.isArray(filter.bucketName_in) ? filter.bucketName_in.filter((name): name is string => typeof name === 'string') : undefined;
  const perBucket = field.selections.some((sub) => sub.name === 'dimensions' && sub.selections.some((d) => d.name === 'bucketName'));
  let buckets: BucketInfo[];
  if (named) buckets = (await Promise.all(named.slice(0, MAX_BUCKETS_PER_QUERY + 1).map((name) => source.getBucket(name)))).filter((b): b is BucketInfo => b !== null);
  else buckets = await source.listBuckets();
  if (typeof filter.storageClass === 'string') buckets = buckets.filter((bucket) => bucket.storageClass === filter.storageClass);
  if (buckets.length > MAX_BUCKETS_PER_QUERY) {
    throw new GraphQLQueryError(`the query covers ${buckets.length} buckets; at most ${MAX_BUCKETS_PER_QUERY} are counted at once: filter by bucketName or bucketName_in`, path);
  }
  const usages = await Promise.all(buckets.map(async (bucket) => ({ bucket, usage: await source.bucketUsage(bucket.name) })));
  const now = source.now();
  const groups = perBucket || named?.length === 1 ? usages : usages.length === 0 ? [] : [{ bucket: undefined, usage: sum(usages.map((u) => u.usage)) }];
  return groups.slice(0, limit).map(({ bucket, usage }, i) => group(field, bucket, usage, now, [...path, i]));
}

function group(field: GraphQLField, bucket: BucketInfo | undefined, usage: BucketUsage, now: number, path: Array<string | number>): Json {
  const out: Record<string, Json> = {};
  for (const sub of field.selections) {
    const key = sub.alias ?? sub.name;
    if (sub.name === '__typename') out[key] = 'AccountR2StorageAdaptiveGroups';
    else if (sub.name === 'max') out[key] = pick(sub, MAX_FIELDS, (name) => usage[name], [...path, key]);
    else if (sub.name === 'dimensions') {
      out[key] = pick(sub, DIMENSIONS, (name) => {
        switch (name) {
          case 'bucketName': return bucket?.name ?? null;
          case 'storageClass': return bucket?.storageClass ?? null;
          case 'datetime': return new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
          case 'date': return new Date(now).toISOString().slice(0, 10);
        }
      }, [...path, key]);
    } else throw new GraphQLQueryError(`unknown field "${sub.name}" of r2StorageAdaptiveGroups: this server answers max { ${MAX_FIELDS.join(' ')} } and dimensions { ${DIMENSIONS.join(' ')} }`, [...path, key]);
  }
  return out;
}

function pick<Name extends string>(field: GraphQLField, names: readonly Name[], value: (name: Name) => Json, path: Array<string | number>): Json {
  const out: Record<string, Json> = {};
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
    objectCount: a.objectCount + b.objectCount, payloadSize: a.payloadSize + b.payloadSize, metadataSize: a.metadataSize + b.metadataSize,
    uploadCount: a.uploadCount + b.uploadCount, complete: a.complete && b.complete,
  }));
}

function argument(field: GraphQLField, name: string): GraphQLValue | undefined {
  return field.arguments.find(([arg]) => arg === name)?.[1];
}

function objectArgument(field: GraphQLField, name: string, variables: Record<string, unknown>, path: Array<string | number>): Record<string, unknown> {
  const value = resolve(argument(field, name), variables, path);
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new GraphQLQueryError(`${field.name}'s ${name} must be an input object`, path);
  return value as Record<string, unknown>;
}

/** A value with its variables filled in (a variable that was not given is undefined, as if left out). */
export function resolve(value: GraphQLValue | undefined, variables: Record<string, unknown>, path: Array<string | number>): unknown {
  if (value === undefined) return undefined;
  switch (value.kind) {
    case 'variable': return variables[value.name];
    case 'int': case 'float': case 'string': case 'boolean': case 'enum': return value.value;
    case 'null': return null;
    case 'list': return value.values.map((v) => resolve(v, variables, path));
    case 'object': return Object.fromEntries(value.fields.map(([k, v]) => [k, resolve(v, variables, path)]));
  }
}
