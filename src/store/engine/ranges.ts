/**
 * Resolves a requested range against an object's size, as the real store does: suffix clamps, length
 * clamps, an offset at or past the end or any range on an empty object is unsatisfiable.
 */
import { StoreError } from './errors.ts';
import type { RangeRequest, ServedRange } from './types.ts';

export function resolveRange(range: RangeRequest | undefined, size: number): ServedRange {
  if (range === undefined) return { offset: 0, length: size };
  if ('suffix' in range) {
    if (range.suffix <= 0 || size === 0) throw new StoreError('STORE_INVALID_RANGE');
    const length = Math.min(range.suffix, size);
    return { offset: size - length, length };
  }
  const offset = range.offset ?? 0;
  if (offset > size) throw new StoreError('STORE_INVALID_RANGE');
  const length = Math.min(range.length ?? size - offset, size - offset);
  if (length <= 0) throw new StoreError('STORE_INVALID_RANGE');
  return { offset, length };
}
