/**
 * The package's `edgeport/store` entry: a bucket for a user's own code and tests, in-process, with
 * no server (like Miniflare's `getR2Bucket`). `openStoreBucket` gives the same StoreBucket a script
 * receives as `env.<binding>`, on a data dir of its own (a temporary one by default) or on an
 * edgeport data dir that no running edgeport holds. Loaded from plain node through entry.js.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { lockDataDir, type DataDirLock } from '../cli/data-dir-lock.ts';
import { firstAccountIdIn } from '../db/open-control-store.ts';
import { compatibilityDateProblem, unknownCompatibilityFlags } from '../runtime/compat.ts';
import { listHonorsInclude } from './binding/compat.ts';
import { StoreBucket } from './binding/store-bucket.ts';
import { accountStore } from './engine/account-store.ts';
import type { ObjectEngine } from './engine/object-engine.ts';
import { openStoreEngine } from './engine/open-store-engine.ts';
import { assertBucketName } from './engine/validation.ts';

export { StoreBucket } from './binding/store-bucket.ts';
export { GetResult, HeadResult } from './binding/store-object.ts';
export type * from './binding/types.ts';

export interface OpenStoreBucketOptions {
  /** The bucket's name (3-63 characters of a-z, 0-9 and '-'); created if it does not exist. */
  bucket: string;
  /**
   * The data dir (as `edgeport dev --data-dir`), locked while the bucket is open. Default: a new
   * temporary directory, deleted by close().
   */
  dataDir?: string;
  /**
   * The id of the account whose bucket it is (32 hex digits, as `edgeport accounts` prints), or
   * `null` for a bucket of no account. Default: as `edgeport dev` does, the data dir's first
   * account when it has one, else no account.
   */
  account?: string | null;
  /** `YYYY-MM-DD`, as a script's `compatibility_date`. Default: today (list() honours `include`). */
  compatibilityDate?: string;
  /** As a script's `compatibility_flags`, e.g. `['store_list_honor_include']`. */
  compatibilityFlags?: string[];
}

/** A StoreBucket opened by openStoreBucket: the script API plus close(). */
export class LocalStoreBucket extends StoreBucket {
  /** The data dir the bucket lives in (absolute). */
  readonly dataDir: string;
  readonly #close: () => Promise<void>;
  #closed: Promise<void> | undefined;

  /** @internal Made by openStoreBucket. */
  constructor(engine: ObjectEngine, where: { dataDir: string; account: string | null; bucket: string }, honorsInclude: boolean, close: () => Promise<void>) {
    super(accountStore(engine, where.account), where.bucket, { listHonorsInclude: honorsInclude });
    this.dataDir = where.dataDir;
    this.#close = close;
  }

  /** Closes the store and unlocks the data dir (deleting it when it was a temporary one). Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  // After close(), each call says so, rather than failing inside the closed store as an internal
  // error. An open bucket's call starts at once: put() converts its value (copies a buffer) before
  // it returns, so the caller may reuse the buffer, as the runtime allows.
  override head(...args: Parameters<StoreBucket['head']>) {
    return this.#whenOpen('head', () => super.head(...args));
  }
  override get(...args: Parameters<StoreBucket['get']>) {
    return this.#whenOpen('get', () => super.get(...args));
  }
  override put(...args: Parameters<StoreBucket['put']>) {
    return this.#whenOpen('put', () => super.put(...args));
  }
  override delete(...args: Parameters<StoreBucket['delete']>) {
    return this.#whenOpen('delete', () => super.delete(...args));
  }
  override list(...args: Parameters<StoreBucket['list']>) {
    return this.#whenOpen('list', () => super.list(...args));
  }
  override createMultipartUpload(...args: Parameters<StoreBucket['createMultipartUpload']>) {
    return this.#whenOpen('createMultipartUpload', () => super.createMultipartUpload(...args));
  }

  #whenOpen<T>(operation: string, call: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error(`${operation}: this bucket was closed; open it again with openStoreBucket().`));
    return call();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

const ACCOUNT_ID = /^[0-9a-f]{32}$/;

/** Opens `options.bucket` for use in this process; close() it when done (an open bucket holds its data dir). */
export async function openStoreBucket(options: OpenStoreBucketOptions): Promise<LocalStoreBucket> {
  const { bucket, compatibilityFlags = [] } = checkOptions(options);
  const compatibilityDate = options.compatibilityDate ?? new Date().toISOString().slice(0, 10);
  const temporary = options.dataDir === undefined;
  const dataDir = temporary ? mkdtempSync(join(tmpdir(), 'edgeport-store-')) : resolve(options.dataDir!);
  let lock: DataDirLock | undefined;
  let engine: ObjectEngine | undefined;
  const release = async () => {
    try {
      await engine?.close();
    } finally {
      lock?.release();
      if (temporary) rmSync(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    }
  };
  try {
    // One process per data dir, as `edgeport start` and `edgeport dev`: a running one refuses us here.
    lock = lockDataDir(dataDir, { flagHint: 'the dataDir option of openStoreBucket', command: `openStoreBucket (${process.argv.slice(1).join(' ')})` });
    const account = options.account !== undefined ? options.account : temporary ? null : await firstAccountIdIn(dataDir);
    engine = await openStoreEngine({ dataDir, recover: true, maintenance: true });
    await accountStore(engine, account).ensureBucket(bucket);
    return new LocalStoreBucket(engine, { dataDir, account, bucket }, listHonorsInclude(compatibilityDate, compatibilityFlags), release);
  } catch (error) {
    await release();
    throw error;
  }
}

function checkOptions(options: OpenStoreBucketOptions): OpenStoreBucketOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('openStoreBucket: pass an options object, e.g. { bucket: "photos" }.');
  const { bucket, dataDir, account, compatibilityDate, compatibilityFlags } = options;
  if (typeof bucket !== 'string') throw new TypeError('openStoreBucket: `bucket` is required: the bucket\'s name, e.g. "photos".');
  try {
    assertBucketName(bucket);
  } catch (error) {
    throw new TypeError(`openStoreBucket: \`bucket\` ${(error as Error).message.replace(/^The specified bucket name is not valid: /, '')}`, { cause: error });
  }
  if (dataDir !== undefined && (typeof dataDir !== 'string' || dataDir === ''))
    throw new TypeError('openStoreBucket: `dataDir` must be a directory path, or left out for a temporary one.');
  if (account !== undefined && account !== null && (typeof account !== 'string' || !ACCOUNT_ID.test(account))) {
    throw new TypeError(
      `openStoreBucket: \`account\` must be an account id (32 hex digits), or null for a bucket of no account; got ${JSON.stringify(account)}.`,
    );
  }
  if (compatibilityDate !== undefined) {
    const problem = typeof compatibilityDate === 'string' ? compatibilityDateProblem(compatibilityDate, Date.now()) : 'must be a string';
    if (problem) throw new TypeError(`openStoreBucket: \`compatibilityDate\` ${problem}.`);
  }
  if (compatibilityFlags !== undefined) {
    if (!Array.isArray(compatibilityFlags) || compatibilityFlags.some((flag) => typeof flag !== 'string')) {
      throw new TypeError('openStoreBucket: `compatibilityFlags` must be an array of strings.');
    }
    const unknown = unknownCompatibilityFlags(compatibilityFlags);
    if (unknown.length > 0) throw new TypeError(`openStoreBucket: unknown compatibility flag(s) ${unknown.map((flag) => JSON.stringify(flag)).join(', ')}.`);
  }
  return options;
}
