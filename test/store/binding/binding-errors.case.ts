/** How engine failures reach scripts: "<action>: <message> (<v4>)", BadDigest, internal errors. */
import { ScriptStreamFailure, scriptCall, toScriptError, unknownLengthError } from '../../../src/store/binding/binding-errors.ts';
import { STORE_ERRORS, StoreError, type StoreErrorCode } from '../../../src/store/engine/errors.ts';
import { assert, type BindingCases } from './case-kit.ts';

export const CASES: BindingCases = {
  'every engine error becomes a plain Error "<action>: <message> (<v4>)" with no code': () => {
    for (const code of Object.keys(STORE_ERRORS) as StoreErrorCode[]) {
      const entry = STORE_ERRORS[code];
      const error = toScriptError('get', new StoreError(code)) as Error;
      assert.equal(error.constructor, Error, code);
      assert.equal(error.name, 'Error');
      assert.equal(error.message, `get: ${entry.message} (${entry.v4})`);
      assert.equal('code' in error, false);
    }
    assert.equal(
      (toScriptError('list', new StoreError('STORE_INVALID_MAX_KEYS')) as Error).message,
      'list: MaxKeys params must be positive integer <= 1000. (10022)',
    );
  },

  'BadDigest: three lines built from the details, algorithm names as the runtime writes them': () => {
    const names = { md5: 'MD5', sha1: 'SHA-1', sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' };
    for (const [algorithm, name] of Object.entries(names)) {
      const error = new StoreError('STORE_BAD_DIGEST', { details: { algorithm, expected: 'AB12', actual: 'cd34' } });
      assert.equal(
        (toScriptError('put', error) as Error).message,
        `put: The ${name} checksum you specified did not match what we received.\nYou provided a ${name} checksum with value: ab12\nActual ${name} was: cd34 (10037)`,
      );
    }
  },

  'foreign errors are internal errors (10001) that keep the cause; script stream errors pass through': async () => {
    const cause = new TypeError('disk exploded');
    const internal = toScriptError('uploadPart', cause) as Error;
    assert.equal(internal.message, 'uploadPart: We encountered an internal error. Please try again. (10001)');
    assert.equal(internal.cause, cause);
    assert.equal((toScriptError('put', 'a string') as Error).constructor, Error);
    const own = new RangeError('from the script');
    assert.equal(toScriptError('put', new ScriptStreamFailure(own)), own);
    assert.equal(await scriptCall('head', async () => 42), 42);
    await assert.rejects(
      scriptCall('abortMultipartUpload', async () => {
        throw new StoreError('STORE_NO_SUCH_UPLOAD');
      }),
      { message: 'abortMultipartUpload: The specified multipart upload does not exist. (10024)' },
    );
    const unknownLength = unknownLengthError();
    assert.equal(unknownLength.constructor, TypeError);
    assert.equal(unknownLength.message, 'Provided readable stream must have a known length (request/response body or readable half of FixedLengthStream)');
    assert.equal(toScriptError('put', new ScriptStreamFailure(unknownLength)), unknownLength, "a stream of unknown length is the script's own TypeError");
  },
};
