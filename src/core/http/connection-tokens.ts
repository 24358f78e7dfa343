/**
 * The headers a request or response's `Connection` header names: hop-by-hop for that one
 * connection (RFC 9110 §7.6.1), so a proxy passes none of them on, as it passes no `Connection`.
 */

/** The lowercased names listed in every `Connection` header of a raw header list (name, value, ...). */
export function connectionHeaderTokens(raw: readonly string[]): Set<string> {
  const tokens = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'connection') continue;
    for (const token of raw[i + 1]!.split(',')) {
      const name = token.trim().toLowerCase();
      if (name !== '') tokens.add(name);
    }
  }
  return tokens;
}
