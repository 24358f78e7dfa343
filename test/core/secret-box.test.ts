/** The sealed-value envelope: round trips, and every alteration, other row or other key refused. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  formatSecretsKey,
  generateSecretsKey,
  parseSecretsKey,
  rowBinding,
  SecretBox,
  SecretBoxError,
  secretsKeyOf,
} from '../../src/core/crypto/secret-box.ts';

const ROW = rowBinding('worker_secrets', 'a'.repeat(32), 'api', 'MY_SECRET');

function refusal(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof SecretBoxError, String(error));
    return error.code;
  }
  assert.fail('it opened');
}

test('a value seals to text holding version, key id, nonce, ciphertext and tag, and opens for its row', { timeout: 5_000 }, () => {
  const key = generateSecretsKey();
  const box = new SecretBox(key);
  const sealed = box.seal('hunter2 ✓', ROW);
  const bytes = Buffer.from(sealed, 'base64');
  assert.equal(bytes[0], 1, 'version');
  assert.equal(bytes.subarray(1, 5).toString('hex'), key.id, 'key id');
  assert.equal(bytes.length, 1 + 4 + 12 + Buffer.byteLength('hunter2 ✓') + 16);
  assert.ok(!sealed.includes('hunter2'));
  assert.equal(box.open(sealed, ROW), 'hunter2 ✓');
  assert.notEqual(box.seal('hunter2 ✓', ROW), sealed, 'a fresh nonce each time');
  assert.equal(box.keyId, key.id);
});

test('an altered value is refused, whichever byte changed', { timeout: 20_000 }, () => {
  const box = new SecretBox(generateSecretsKey());
  fc.assert(
    fc.property(fc.string(), fc.nat(), fc.integer({ min: 1, max: 255 }), (plain, at, flip) => {
      const bytes = Buffer.from(box.seal(plain, ROW), 'base64');
      const index = at % bytes.length;
      bytes[index] = bytes[index]! ^ flip;
      assert.equal(
        refusal(() => box.open(bytes.toString('base64'), ROW)),
        'SECRETS_UNREADABLE',
      );
    }),
    { numRuns: 300 },
  );
  const sealed = box.seal('x', ROW);
  assert.equal(
    refusal(() => box.open(sealed.slice(0, -8), ROW)),
    'SECRETS_UNREADABLE',
    'truncated',
  );
  assert.equal(
    refusal(() => box.open('hunter2', ROW)),
    'SECRETS_UNREADABLE',
    'a clear value',
  );
  assert.equal(
    refusal(() => box.open(`${sealed}AAAA`, ROW)),
    'SECRETS_UNREADABLE',
    'extended',
  );
});

test('a value moved to another row, or another table, is refused (the associated data binds it)', { timeout: 5_000 }, () => {
  const box = new SecretBox(generateSecretsKey());
  const sealed = box.seal('hunter2', ROW);
  for (const other of [
    rowBinding('worker_secrets', 'a'.repeat(32), 'api', 'OTHER'),
    rowBinding('worker_secrets', 'b'.repeat(32), 'api', 'MY_SECRET'),
    rowBinding('worker_secrets', 'a'.repeat(32), 'api2', 'MY_SECRET'),
    rowBinding('s3_access_keys', 'MY_SECRET'),
    // Parts never run together: ("ab", "c") is not ("a", "bc").
    rowBinding('worker_secrets', 'a'.repeat(32), 'apiMY', '_SECRET'),
  ])
    assert.equal(
      refusal(() => box.open(sealed, other)),
      'SECRETS_UNREADABLE',
      other,
    );
});

test('another key opens nothing; a keyring opens what each of its keys sealed and seals with the current one', { timeout: 5_000 }, () => {
  const old = generateSecretsKey();
  const next = generateSecretsKey();
  const byOld = new SecretBox(old).seal('v', ROW);
  assert.match(
    refusal(() => new SecretBox(next).open(byOld, ROW)),
    /SECRETS_UNREADABLE/,
  );
  // Same id, other bytes (a forged id): the tag still refuses it.
  const forged = { id: old.id, bytes: next.bytes };
  assert.equal(
    refusal(() => new SecretBox(forged).open(byOld, ROW)),
    'SECRETS_UNREADABLE',
  );
  const ring = new SecretBox(next, [old]);
  assert.equal(ring.open(byOld, ROW), 'v');
  assert.equal(Buffer.from(ring.seal('v', ROW), 'base64').subarray(1, 5).toString('hex'), next.id);
});

test('a locked box neither seals nor opens', { timeout: 5_000 }, () => {
  const locked = SecretBox.locked();
  assert.equal(locked.keyId, undefined);
  assert.equal(
    refusal(() => locked.seal('v', ROW)),
    'SECRETS_LOCKED',
  );
  assert.equal(
    refusal(() => locked.open(new SecretBox(generateSecretsKey()).seal('v', ROW), ROW)),
    'SECRETS_LOCKED',
  );
});

test('keys as text: base64 of 32 bytes, with a stable id; anything else is no key', { timeout: 5_000 }, () => {
  const key = generateSecretsKey();
  const text = formatSecretsKey(key);
  assert.match(text, /^[A-Za-z0-9+/]{43}=\n$/);
  const parsed = parseSecretsKey(`  ${text}  `)!;
  assert.equal(parsed.id, key.id);
  assert.deepEqual(parsed.bytes, key.bytes);
  assert.match(key.id, /^[0-9a-f]{8}$/);
  assert.equal(secretsKeyOf(Buffer.alloc(32)).id, secretsKeyOf(Buffer.alloc(32)).id);
  for (const bad of ['', 'short', Buffer.alloc(31).toString('base64'), Buffer.alloc(33).toString('base64'), `${text.trim().slice(0, -2)}!=`]) {
    assert.equal(parseSecretsKey(bad), undefined, JSON.stringify(bad));
  }
  assert.throws(() => secretsKeyOf(Buffer.alloc(16)), /32 bytes/);
});
