/**
 * Every file package.json hands to a user (its bin commands and exports) exists, so an install
 * never points at a file that is not there.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function targets(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(targets);
  return [];
}

test('every bin and export of package.json names a file that exists', { timeout: 10_000 }, () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin?: unknown; exports?: unknown };
  const files = [...targets(pkg.bin), ...targets(pkg.exports)];
  assert.ok(files.length > 0);
  for (const file of files) assert.ok(existsSync(join(ROOT, file)), `package.json names ${file}, which does not exist`);
});
