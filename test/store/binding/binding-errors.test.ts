/** How engine failures reach scripts: "<action>: <message> (<v4>)", BadDigest, internal errors. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ScriptStreamFailure, scriptCall, toScriptError } from '../../../src/store/binding/binding-errors.ts';
import { STORE_ERRORS, StoreError, type StoreErrorCode } from '../../../src/store/engine/errors.ts';

test('every engine error becomes a plain Error "<action>: <message> (<v4>)" with no code', { timeout: 10_000 }, () => {
  for (const code of Object.keys(STORE_ERRORS) as StoreErrorCode[]) {
    const entry = STORE_ERRORS[code];
    const error = toScriptError('get', new StoreError(code)) as Error;
    assert.equal(error.constructor, Error, code);
    assert.equal(error.name, 'Error');
    assert.equal(error.message, `get: ${entry.message} (${entry.v4})`);
    assert.equal('code' in error, false);
  }
  assert.equal((toScriptError('list', new StoreError('STORE_INVALID_MAX_KEYS')) as Error).message, 'list: MaxKeys params must be positive integer <= 1000. (10022)');
});

test('BadDigest: three lines built from the details, algorithm names as the runtime writes them', { timeout: 10_000 }, () => {
  const names = { md5: 'MD5', sha1: 'SHA-1', sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' };
  for (const [algorithm, name] of Object.entries(names)) {
    const error = new StoreError('STORE_BAD_DIGEST', { details: { algorithm, expected: 'AB12', actual: 'cd34' } });
    assert.equal((toScriptError('put', error) as Error).message,
      `put: The ${name} checksum you specified did not match what we received.\nYou provided a ${name} checksum with value: ab12\nActual ${name} was: cd34 (10037)`);
  }
});

test('foreign errors are internal errors (10001) that keep the cause; script stream errors pass through', { timeout: 10_000 }, async () => {
  const cause = new TypeError('disk exploded');
  const internal = toScriptError('uploadPart', cause) as Error;
  assert.equal(internal.message, 'uploadPart: We encountered an internal error. Please try again. (10001)');
  assert.equal(internal.cause, cause);
  assert.equal((toScriptError('put', 'a string') as Error).constructor, Error);
  const own = new RangeError('from the script');
  assert.equal(toScriptError('put', new ScriptStreamFailure(own)), own);
  assert.equal(await scriptCall('head', async () => 42), 42);
  await assert.rejects(scriptCall('abortMultipartUpload', async () => {
    throw new StoreError('STORE_NO_SUCH_UPLOAD');
  }), { message: 'abortMultipartUpload: The specified multipart upload does not exist. (10024)' });
});
