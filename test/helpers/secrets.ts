/**
 * The secrets key of stores a test opens itself (the metadata, control and script stores seal
 * secrets with it: src/db/secrets). `edgeport start` loads or makes its own (src/cli/secrets-key.ts);
 * this one lives as long as the test process.
 */
import { generateSecretsKey, SecretBox } from '../../src/core/crypto/secret-box.ts';

export const TEST_SECRETS_KEY = generateSecretsKey();
export const TEST_SECRETS = new SecretBox(TEST_SECRETS_KEY);
