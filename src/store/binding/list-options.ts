/** list() options as the runtime converts them. */
import type { ListOptions } from '../engine/types.ts';
import { wrongField } from './binding-errors.ts';

function optionalString(options: Record<string, unknown>, field: string): string | undefined {
  const value = options[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw wrongField(field, 'ListOptions', 'string');
  return value;
}

/**
 * `honorsInclude` is the compatibility rule: when false, both metadata kinds are always returned;
 * when true, exactly the listed ones (none if an options object has no include).
 */
export function toListOptions(input: unknown, honorsInclude: boolean): ListOptions {
  const options = (input ?? {}) as Record<string, unknown>;
  if (typeof options !== 'object') throw new TypeError("Failed to execute 'list' on 'StoreBucket': parameter 1 is not of type 'ListOptions'.");
  const out: ListOptions = {};
  if (options.limit !== undefined) {
    // Converted like a UInt32: "2" -> 2, 1.5 -> 1; 0 and -1 mean "unset" (the default, 1000).
    const limit = Math.trunc(Number(options.limit));
    if (Number.isNaN(limit)) throw wrongField('limit', 'ListOptions', 'number');
    if (limit > 0) out.limit = limit;
  }
  for (const field of ['prefix', 'cursor', 'delimiter', 'startAfter'] as const) {
    const value = optionalString(options, field);
    if (value !== undefined) out[field] = value;
  }
  let include = { httpMetadata: false, customMetadata: false };
  if (options.include !== undefined) {
    if (!Array.isArray(options.include)) throw wrongField('include', 'ListOptions', 'Array');
    for (const entry of options.include) {
      if (typeof entry !== 'string') throw wrongField('include', 'ListOptions', 'string');
      if (entry !== 'httpMetadata' && entry !== 'customMetadata') throw new RangeError(`Unsupported include value ${entry}`);
      include = { ...include, [entry]: true };
    }
  }
  out.include = honorsInclude ? include : { httpMetadata: true, customMetadata: true };
  return out;
}
