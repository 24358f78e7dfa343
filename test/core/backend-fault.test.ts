/**
 * Backend faults: which errors are outages (and of which backend), and how each surface answers one:
 * the S3 API, the bucket binding, the management API's envelope. docs/errors.md lists the codes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { toErrorResponse } from '../../src/api/error-map.ts';
import { BACKEND_FAULTS, backendFaultOf, backendFull, backendUnavailable } from '../../src/core/errors/backend-fault.ts';
import { silentLogger } from '../../src/core/log.ts';
import { toScriptError } from '../../src/store/binding/binding-errors.ts';
import { StoreError, storeFaultOf } from '../../src/store/engine/errors.ts';
import { toS3Error } from '../../src/store/s3/s3-error.ts';

const errno = (code: string): Error => Object.assign(new Error(`${code}: something`), { code });

test('file-system and SQLite codes are faults of the disk or the database; other errors are not', { timeout: 5_000 }, () => {
  assert.equal(backendFaultOf(errno('ENOSPC'))?.code, 'BACKEND_FULL');
  assert.equal(backendFaultOf(errno('ENOSPC'))?.backend, 'disk');
  assert.equal(backendFaultOf(errno('EDQUOT'))?.code, 'BACKEND_FULL');
  assert.equal(backendFaultOf(errno('SQLITE_FULL'))?.code, 'BACKEND_FULL');
  assert.equal(backendFaultOf(errno('SQLITE_IOERR_WRITE'))?.code, 'BACKEND_UNAVAILABLE');
  assert.equal(backendFaultOf(errno('SQLITE_IOERR_WRITE'))?.backend, 'disk');
  assert.equal(backendFaultOf(errno('EIO'))?.backend, 'disk');
  assert.equal(backendFaultOf(errno('SQLITE_BUSY'))?.backend, 'database');
  assert.equal(backendFaultOf(errno('SQLITE_BUSY_SNAPSHOT'))?.backend, 'database');
  // Found through a cause chain (an error that wraps the file system's).
  assert.equal(backendFaultOf(new Error('outer', { cause: new Error('mid', { cause: errno('ENOSPC') }) }))?.code, 'BACKEND_FULL');
  const fault = backendUnavailable('blob store', 'did not answer within 100 ms');
  assert.equal(backendFaultOf(new StoreError('STORE_INTERNAL', { cause: fault })), fault);
  for (const other of [
    errno('ENOENT'),
    errno('EACCES'),
    errno('SQLITE_CONSTRAINT'),
    new TypeError('x'),
    'text',
    null,
    undefined,
    new StoreError('STORE_NO_SUCH_KEY'),
  ]) {
    assert.equal(backendFaultOf(other), undefined, String(other));
  }
});

test('a fault says which backend and what happened; retry after 1 s (outage) or 5 s (full)', { timeout: 5_000 }, () => {
  const down = backendUnavailable('database', 'did not answer within 5000 ms');
  assert.equal(down.message, 'The database did not answer within 5000 ms');
  assert.equal(down.retryAfterS, 1);
  const full = backendFull('disk');
  assert.equal(full.message, 'The disk is full');
  assert.equal(full.retryAfterS, 5);
});

test('the S3 API answers 503 ServiceUnavailable / InsufficientStorage with Retry-After, never InternalError', { timeout: 5_000 }, () => {
  const down = toS3Error(backendUnavailable('database', 'refused the connection'));
  assert.equal(down.error.status, 503);
  assert.equal(down.error.s3Code, 'ServiceUnavailable');
  assert.equal(down.error.message, 'The object store is temporarily unavailable: the database refused the connection. Please try again.');
  assert.equal(down.error.headers['retry-after'], '1');
  assert.equal(down.internal, false);
  const full = toS3Error(errno('SQLITE_FULL'));
  assert.equal(full.error.status, 503);
  assert.equal(full.error.s3Code, 'InsufficientStorage');
  assert.match(full.error.message, /^The object store is out of space: the disk is full\. Writes are refused until space is freed; deletes still work\.$/);
  assert.equal(full.error.headers['retry-after'], '5');
  // A StoreError that arrived over the wire (no cause) keeps its code and message.
  const wired = toS3Error(
    new StoreError('STORE_UNAVAILABLE', { message: 'The object store is temporarily unavailable: x. Please try again.', details: { retryAfterS: 1 } }),
  );
  assert.equal(wired.error.s3Code, 'ServiceUnavailable');
  assert.equal(toS3Error(new Error('a bug')).error.status, 500);
});

test("a script sees the store's 10043 with the backend named; the API answers 503 / 507 with Retry-After", { timeout: 5_000 }, async () => {
  assert.equal(
    (toScriptError('put', backendUnavailable('blob store', 'did not answer within 3000 ms')) as Error).message,
    'put: The object store is temporarily unavailable: the blob store did not answer within 3000 ms. Please try again. (10043)',
  );
  assert.equal(
    (toScriptError('delete', errno('ENOSPC')) as Error).message,
    'delete: The object store is out of space: the disk is full. Writes are refused until space is freed; deletes still work. (10043)',
  );
  const unavailable = toErrorResponse(backendUnavailable('database', 'did not answer within 5000 ms'), silentLogger);
  assert.equal(unavailable.status, 503);
  assert.equal(unavailable.headers.get('retry-after'), '1');
  assert.deepEqual(((await unavailable.json()) as { errors: unknown[] }).errors, [
    { code: 10043, message: 'Service temporarily unavailable: the database did not answer within 5000 ms; retry after 1 s' },
  ]);
  const full = toErrorResponse(storeFaultOf(errno('SQLITE_FULL')), silentLogger);
  assert.equal(full.status, 507);
  assert.equal(full.headers.get('retry-after'), '5');
  assert.equal(toErrorResponse(new Error('a bug'), silentLogger).status, 500);
});

test('docs/errors.md lists the backend fault codes with their kinds, and nothing else', { timeout: 5_000 }, () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const documented = new Map([...doc.matchAll(/^\| `(BACKEND_[A-Z_]+)` \| (user|system) \|/gm)].map((m) => [m[1]!, m[2]!]));
  assert.deepEqual(Object.fromEntries(documented), Object.fromEntries(Object.entries(BACKEND_FAULTS).map(([code, entry]) => [code, entry.kind])));
});
