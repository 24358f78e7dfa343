/**
 * The key a client is counted under by the failed-credential limits: its IPv4 address, or the /64
 * prefix of its IPv6 address (one host is usually given a whole /64, so counting single IPv6
 * addresses would let it take a fresh one per attempt). IPv4-mapped IPv6 addresses count as IPv4.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** What requests without a socket (in-process calls) are counted under. */
export const UNKNOWN_CLIENT = 'unknown';

/** The counting key of a socket's remote address (`req.socket.remoteAddress`). */
export function clientKey(address: string | undefined): string {
  if (address === undefined || address === '') return UNKNOWN_CLIENT;
  const bare = address.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1]!;
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return bare;
  return `${expandIpv6(bare).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, lower-case hex without leading zeros. */
function expandIpv6(address: string): string[] {
  let text = address.toLowerCase();
  // A trailing dotted IPv4 part is two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16).toString(16));
}
