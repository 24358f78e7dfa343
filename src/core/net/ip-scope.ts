/**
 * Where an IP address leads: the public internet, or somewhere only this machine or its network
 * can reach (loopback, private, link-local, ...), after the IANA special-purpose address registries
 * (RFC 6890 and its updates). IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
 * NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that IPv4 address.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** What an address is, `public` when the internet at large routes it. */
export type IpScope = 'public' | 'loopback' | 'private' | 'shared' | 'link-local' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved';

/** The scope in words, for messages (`127.0.0.1 is a loopback address`). */
export const IP_SCOPE_WORDS: Record<IpScope, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private network address',
  shared: 'a carrier-grade NAT address (100.64.0.0/10)',
  'link-local': 'a link-local address',
  unspecified: 'the unspecified address (this host)',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address, not routed on the internet',
};

interface Range {
  bytes: number[];
  bits: number;
  scope: IpScope;
}

const range = (bytes: number[], bits: number, scope: IpScope): Range => ({ bytes, bits, scope });

/** IPv4 ranges that are not public (RFC 6890 §2.2.2, RFC 1918, RFC 6598, RFC 5737, RFC 2544, RFC 1112). */
const IPV4_RANGES: readonly Range[] = [
  range([0], 8, 'unspecified'), // "this network": 0.0.0.0 (and on Linux 0.x.y.z) connects to this host
  range([10], 8, 'private'),
  range([100, 64], 10, 'shared'),
  range([127], 8, 'loopback'),
  range([169, 254], 16, 'link-local'),
  range([172, 16], 12, 'private'),
  range([192, 0, 0], 24, 'reserved'), // IETF protocol assignments
  range([192, 0, 2], 24, 'reserved'), // documentation
  range([192, 88, 99], 24, 'reserved'), // 6to4 relay anycast
  range([192, 168], 16, 'private'),
  range([198, 18], 15, 'reserved'), // benchmarking
  range([198, 51, 100], 24, 'reserved'), // documentation
  range([203, 0, 113], 24, 'reserved'), // documentation
  range([224], 4, 'multicast'),
  range([255, 255, 255, 255], 32, 'broadcast'),
  range([240], 4, 'reserved'),
];

/**
 * IPv6 ranges, checked in order; anything outside global unicast (2000::/3) that is not listed is
 * reserved too (RFC 6890 §2.2.3, RFC 4193, RFC 4291, RFC 3849, RFC 9637).
 */
const IPV6_RANGES: readonly Range[] = [
  range([], 128, 'unspecified'), // ::
  range([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'loopback'),
  range([0xfc], 7, 'private'), // unique local
  range([0xfe, 0x80], 10, 'link-local'),
  range([0xfe, 0xc0], 10, 'private'), // site-local (deprecated)
  range([0xff], 8, 'multicast'),
  range([0x20, 0x01, 0x0d, 0xb8], 32, 'reserved'), // documentation
  range([0x3f, 0xff], 20, 'reserved'), // documentation
  range([0x20, 0x01], 23, 'reserved'), // IETF protocol assignments (Teredo, benchmarking, ORCHID)
];

/** IPv6 prefixes whose low 32 bits (or bits 16-47 for 6to4) are an IPv4 address that decides. */
const IPV4_CARRIERS: ReadonlyArray<{ prefix: Range; at: number }> = [
  { prefix: range([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96, 'public'), at: 12 }, // IPv4-mapped
  { prefix: range([0, 0x64, 0xff, 0x9b], 96, 'public'), at: 12 }, // NAT64 well-known prefix
  { prefix: range([0x20, 0x02], 16, 'public'), at: 2 }, // 6to4
];

/** The scope of an IP address (IPv6 may carry a `%zone`); null when `address` is not one. */
export function ipScope(address: string): IpScope | null {
  if (isIPv4(address)) return scopeOf(address.split('.').map(Number), IPV4_RANGES) ?? 'public';
  const bytes = parseIPv6(address);
  if (!bytes) return null;
  for (const { prefix, at } of IPV4_CARRIERS) {
    if (inRange(bytes, prefix)) return scopeOf(bytes.slice(at, at + 4), IPV4_RANGES) ?? 'public';
  }
  const listed = scopeOf(bytes, IPV6_RANGES);
  if (listed) return listed;
  // Global unicast is 2000::/3; everything else (::/8 IPv4-compatible, 64:ff9b:1::/48, 100::/64 discard, ...) is not routed publicly.
  return (bytes[0]! & 0xe0) === 0x20 ? 'public' : 'reserved';
}

/**
 * The IPv4 address an IPv4-mapped IPv6 address stands for (`::ffff:127.0.0.1` -> `127.0.0.1`);
 * any other address as given, without an IPv6 `%zone`. Sockets report IPv4 peers of dual-stack
 * listeners in the mapped form.
 */
export function canonicalIp(address: string): string {
  const bytes = isIPv4(address) ? null : parseIPv6(address);
  if (bytes && inRange(bytes, IPV4_CARRIERS[0]!.prefix)) return bytes.slice(12).join('.');
  const percent = address.indexOf('%');
  return (percent < 0 ? address : address.slice(0, percent)).toLowerCase();
}

/** The 16 bytes of an IPv6 address (a `%zone` suffix ignored); null when it is not one. */
export function parseIPv6(address: string): number[] | null {
  const percent = address.indexOf('%');
  const text = percent < 0 ? address : address.slice(0, percent);
  if (!isIPv6(text)) return null;
  const toGroups = (part: string): number[] => {
    if (part === '') return [];
    const groups: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const [a, b, c, d] = piece.split('.').map(Number) as [number, number, number, number];
        groups.push((a << 8) | b, (c << 8) | d);
      } else {
        groups.push(parseInt(piece, 16));
      }
    }
    return groups;
  };
  const gap = text.indexOf('::');
  const head = toGroups(gap < 0 ? text : text.slice(0, gap));
  const tail = gap < 0 ? [] : toGroups(text.slice(gap + 2));
  const groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  return groups.flatMap((group) => [group >> 8, group & 0xff]);
}

function scopeOf(bytes: readonly number[], ranges: readonly Range[]): IpScope | null {
  for (const candidate of ranges) if (inRange(bytes, candidate)) return candidate.scope;
  return null;
}

/** Whether the first `bits` bits of `bytes` equal the range's (missing range bytes are 0). */
function inRange(bytes: readonly number[], { bytes: prefix, bits }: Range): boolean {
  for (let i = 0; i * 8 < bits; i++) {
    const mask = bits - i * 8 >= 8 ? 0xff : (0xff << (8 - (bits - i * 8))) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}
