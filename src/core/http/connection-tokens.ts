/**
 * The headers a request or response's `Connection` header names: hop-by-hop for that one
 * connection (RFC 9110 §7.6.1), so a proxy passes none of them on, as it passes no `Connection`.
 */

/** The lowercased names a `Connection` value lists (node joins repeated headers with commas). */
export function connectionTokens(value: string | undefined): Set<string> {
  const tokens = new Set<string>();
  if (value === undefined) return tokens;
  for (const token of value.split(',')) {
    const name = token.trim().toLowerCase();
    if (name !== '') tokens.add(name);
  }
  return tokens;
}

/** The names listed in every `Connection` header of a raw header list (name, value, ...). */
export function connectionHeaderTokens(raw: readonly string[]): Set<string> {
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'connection') values.push(raw[i + 1]!);
  return connectionTokens(values.length === 0 ? undefined : values.join(','));
}
