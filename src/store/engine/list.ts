/**
 * list(): lexicographic (UTF-8 byte) order, prefix, delimiter folding into delimitedPrefixes (each
 * prefix counts as one entry against the limit), opaque cursors, and `truncated` set only when
 * another entry really exists.
 */
import type { ListedRow, MetadataStore } from '../../db/metadata-store.ts';
import { StoreError, STORE_LIMITS } from './errors.ts';
import { AFTER_ALL_KEYS } from './key-order.ts';
import type { ListOptions, ListResult } from './types.ts';

/** A cursor says where the last page ended: after a key (`k`) or after a whole delimited group (`p`). */
export function encodeCursor(kind: 'k' | 'p', key: string): string {
  return Buffer.from(`${kind}${key}`, 'utf8').toString('base64url');
}

/** Returns the key after which listing resumes. */
export function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const kind = text[0];
  if ((kind !== 'k' && kind !== 'p') || encodeCursor(kind, text.slice(1)) !== cursor) throw new StoreError('STORE_INVALID_CURSOR');
  return kind === 'k' ? text.slice(1) : text.slice(1) + AFTER_ALL_KEYS;
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export async function listObjects(meta: MetadataStore, bucket: string, options: ListOptions): Promise<ListResult> {
  const limit = options.limit ?? STORE_LIMITS.maxListLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > STORE_LIMITS.maxListLimit) throw new StoreError('STORE_INVALID_MAX_KEYS');
  const prefix = options.prefix ?? '';
  const delimiter = options.delimiter ? options.delimiter : undefined;
  let after = options.cursor ? decodeCursor(options.cursor) : undefined;
  // Compared as UTF-8 bytes, the list order: JS `>` compares UTF-16 units, which disagree past U+FFFF
  // (a cursor past U+1F600 would lose to a startAfter of U+FF61 and the listing would repeat itself).
  if (options.startAfter !== undefined && (after === undefined || byteOrder(options.startAfter, after) > 0)) after = options.startAfter;

  const result: ListResult = { objects: [], delimitedPrefixes: [], truncated: false };
  let count = 0;
  // Where the page ended; encoded into a cursor only if the page is truncated.
  let last: { kind: 'k' | 'p'; key: string } = { kind: 'k', key: '' };
  let group: string | undefined;
  for (;;) {
    const batchSize = Math.min(limit - count + 1, STORE_LIMITS.maxListLimit + 1);
    const rows: ListedRow[] = await meta.listObjects(bucket, {
      after,
      prefix,
      limit: batchSize,
      withHttpMetadata: options.include?.httpMetadata ?? false,
      withCustomMetadata: options.include?.customMetadata ?? false,
    });
    for (const row of rows) {
      if (group !== undefined && row.key.startsWith(group)) continue;
      const cut = delimiter === undefined ? -1 : row.key.indexOf(delimiter, prefix.length);
      if (count === limit) {
        result.truncated = true;
        result.cursor = encodeCursor(last.kind, last.key);
        return result;
      }
      count += 1;
      if (cut >= 0) {
        group = row.key.slice(0, cut + delimiter!.length);
        result.delimitedPrefixes.push(group);
        last = { kind: 'p', key: group };
        after = group + AFTER_ALL_KEYS;
      } else {
        result.objects.push(row);
        last = { kind: 'k', key: row.key };
        after = row.key;
      }
    }
    if (rows.length < batchSize) return result;
    // The batch ended inside a group: resume after the group rather than re-reading it.
    const lastRead = rows[rows.length - 1]!.key;
    if (group !== undefined && lastRead.startsWith(group)) after = group + AFTER_ALL_KEYS;
  }
}
