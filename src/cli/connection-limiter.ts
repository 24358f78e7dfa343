/**
 * Counts a listener's open connections, in all and per client address, and says which limit a new
 * connection would cross. A client is an IPv4 address, or an IPv6 /64 (one subscriber's usual
 * allocation: counting single IPv6 addresses would give each of them billions of "clients").
 */
import type { ListenerErrorCode } from './listener-errors.ts';

export class ConnectionLimiter {
  readonly #maxConnections: number;
  readonly #maxPerClient: number;
  readonly #perClient = new Map<string, number>();
  #total = 0;

  /** A limit of 0 is no limit. */
  constructor(limits: { maxConnections: number; maxConnectionsPerClient: number }) {
    this.#maxConnections = limits.maxConnections;
    this.#maxPerClient = limits.maxConnectionsPerClient;
  }

  get total(): number {
    return this.#total;
  }

  /** Open connections of the client `key` (from clientKey). */
  openFrom(key: string): number {
    return this.#perClient.get(key) ?? 0;
  }

  /** Counts a new connection from client `key` in, or names the limit it would cross (and counts nothing). */
  admit(key: string): ListenerErrorCode | undefined {
    const open = this.#perClient.get(key) ?? 0;
    if (this.#maxPerClient > 0 && open >= this.#maxPerClient) return 'LISTENER_CLIENT_CONNECTION_LIMIT';
    if (this.#maxConnections > 0 && this.#total >= this.#maxConnections) return 'LISTENER_CONNECTION_LIMIT';
    this.#perClient.set(key, open + 1);
    this.#total += 1;
    return undefined;
  }

  /** Counts an admitted connection of client `key` out. */
  release(key: string): void {
    const open = this.#perClient.get(key) ?? 0;
    if (open <= 1) this.#perClient.delete(key);
    else this.#perClient.set(key, open - 1);
    this.#total = Math.max(0, this.#total - 1);
  }
}

/** The client a remote address belongs to: the IPv4 address (also when IPv4-mapped), or the IPv6 /64. */
export function clientKey(address: string | undefined): string {
  if (address === undefined || address === '') return '';
  if (!address.includes(':')) return address;
  const unzoned = address.split('%', 1)[0]!.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(unzoned);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = unzoned.split('::', 2);
  const headGroups = head === '' ? [] : head.split(':');
  let groups = headGroups;
  if (tail !== undefined) {
    const tailGroups = tail === '' ? [] : tail.split(':');
    // An embedded IPv4 address (`::1.2.3.4`) fills two groups.
    const tailWidth = tailGroups.reduce((width, group) => width + (group.includes('.') ? 2 : 1), 0);
    groups = [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailWidth)).fill('0'), ...tailGroups];
  }
  return `${groups.slice(0, 4).map((group) => (group.includes('.') ? group : Number.parseInt(group, 16).toString(16))).join(':')}::/64`;
}
