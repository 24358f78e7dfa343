/**
 * Sealed values: the secrets edgeport keeps in its database (worker secrets, S3 secret access keys,
 * log destinations with credentials) are sealed with AES-256-GCM under a key the operator keeps
 * outside the database (the data dir's `secrets.key`, `[secrets] key_file`, or
 * EDGEPORT_SECRETS_KEY), so a copy of the database or of a backup holds none of them in clear.
 *
 * A sealed value is text, the base64 of:
 *
 *   version (1 byte: 1) | key id (4 bytes) | nonce (12 random bytes) | ciphertext | tag (16 bytes)
 *
 * Sealing binds the value to the row it is stored in: the associated data (authenticated, not
 * stored) names the table and the row's key columns, so a value copied into another row or table
 * does not open. The key id is the first 4 bytes of SHA-256 of a fixed label and the key: it says
 * which key sealed a value (a rotation reads values of the old key and writes the new key's), and
 * that a key given at start is the wrong one, without storing anything that helps guess the key.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { EdgeportError, type ErrorCatalog } from '../errors/edgeport-error.ts';

const VERSION = 1;
const KEY_BYTES = 32;
const ID_BYTES = 4;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + ID_BYTES + NONCE_BYTES;

export type SecretBoxErrorCode = 'SECRETS_LOCKED' | 'SECRETS_UNREADABLE';

export const SECRET_BOX_ERRORS: ErrorCatalog<SecretBoxErrorCode> = {
  SECRETS_LOCKED: { kind: 'system', message: 'This process holds no secrets key, so it can neither seal nor open a stored secret.' },
  SECRETS_UNREADABLE: {
    kind: 'system',
    message: 'A stored secret does not open with the secrets key: it was sealed with another key, belongs to another row, or was altered.',
  },
};

export class SecretBoxError extends EdgeportError<SecretBoxErrorCode> {
  constructor(code: SecretBoxErrorCode, message: string = SECRET_BOX_ERRORS[code].message) {
    super(code, SECRET_BOX_ERRORS[code].kind, message);
  }
}

/** A 32-byte AES-256 key with its id (8 lowercase hex characters). */
export interface SecretsKey {
  readonly id: string;
  readonly bytes: Buffer;
}

export function secretsKeyOf(bytes: Buffer): SecretsKey {
  if (bytes.length !== KEY_BYTES) throw new Error(`A secrets key is ${KEY_BYTES} bytes, not ${bytes.length}.`);
  const id = createHash('sha256').update('edgeport secrets key id\0').update(bytes).digest().subarray(0, ID_BYTES).toString('hex');
  return { id, bytes: Buffer.from(bytes) };
}

export function generateSecretsKey(): SecretsKey {
  return secretsKeyOf(randomBytes(KEY_BYTES));
}

/**
 * A key written as text (the key file's contents, EDGEPORT_SECRETS_KEY): the base64 of 32 bytes,
 * surrounding white space ignored. Undefined when the text is anything else; the text is never
 * echoed, since it may be a key.
 */
export function parseSecretsKey(text: string): SecretsKey | undefined {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) return undefined;
  return secretsKeyOf(Buffer.from(trimmed, 'base64'));
}

/** The key as its file holds it: base64 and a newline. */
export function formatSecretsKey(key: SecretsKey): string {
  return `${key.bytes.toString('base64')}\n`;
}

/**
 * Which row a sealed value belongs to: the table and the values of the row's key, in order. Two
 * rows never share one (JSON keeps every part apart, whatever characters names hold).
 */
export function rowBinding(table: string, ...key: ReadonlyArray<string | number>): string {
  return JSON.stringify([table, ...key]);
}

/**
 * Seals with one key and opens what any of its keys sealed (the current one, and during a rotation
 * the one being replaced). `SecretBox.locked()` holds none: a process that must never touch a
 * secret (a script host's store, `edgeport accounts`) fails loudly instead of storing a secret in
 * clear or handing out a sealed value as if it were the secret.
 */
export class SecretBox {
  readonly #current: SecretsKey | null;
  readonly #keys: ReadonlyMap<string, SecretsKey>;

  /** Seals with `current`; opens what `current` or one of `others` sealed. Null: a locked box. */
  constructor(current: SecretsKey | null, others: readonly SecretsKey[] = []) {
    this.#current = current;
    this.#keys = new Map([...others, ...(current ? [current] : [])].map((key) => [key.id, key]));
  }

  static locked(): SecretBox {
    return new SecretBox(null);
  }

  /** The id of the key new values are sealed with (undefined for a locked box). */
  get keyId(): string | undefined {
    return this.#current?.id;
  }

  seal(plain: string, binding: string): string {
    const key = this.#current;
    if (!key) throw new SecretBoxError('SECRETS_LOCKED');
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.bytes, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(binding, 'utf8'));
    const header = Buffer.concat([Buffer.from([VERSION]), Buffer.from(key.id, 'hex'), nonce]);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([header, body, cipher.getAuthTag()]).toString('base64');
  }

  /** The value sealed for `binding`; SECRETS_UNREADABLE when it was sealed for another row, with a key this box lacks, or altered. */
  open(sealed: string, binding: string): string {
    if (!this.#current) throw new SecretBoxError('SECRETS_LOCKED');
    const bytes = Buffer.from(sealed, 'base64');
    if (bytes.length < HEADER_BYTES + TAG_BYTES || bytes[0] !== VERSION || bytes.toString('base64') !== sealed) {
      throw new SecretBoxError(
        'SECRETS_UNREADABLE',
        'A stored secret is not a sealed value of this edgeport version (it was altered, or written in clear by other means).',
      );
    }
    const id = bytes.subarray(1, 1 + ID_BYTES).toString('hex');
    const key = this.#keys.get(id);
    if (!key)
      throw new SecretBoxError(
        'SECRETS_UNREADABLE',
        `A stored secret was sealed with secrets key ${id}, which this process does not hold (it holds ${[...this.#keys.keys()].join(', ')}).`,
      );
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, bytes.subarray(1 + ID_BYTES, HEADER_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(binding, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('SECRETS_UNREADABLE');
    }
  }
}
