/**
 * Counts a listener's open connections, in all and per client address, and decides who gets a
 * slot. A client is an IPv4 address, or an IPv6 /64 (one subscriber's usual allocation: counting
 * single IPv6 addresses would give each of them billions of "clients").
 *
 * A fixed per-client cap alone lets a handful of addresses take every slot (16 clients at 256 fill
 * 4,096), so the cap shrinks as the listener fills, and a full listener makes room:
 * - under half full, a client may hold `maxConnectionsPerClient` (0: any number, and no fair
 *   share either, as behind a reverse proxy);
 * - from half full on, a client may hold at most its fair share, the slots divided among the
 *   clients holding connections plus one (the one still to come), so the clients already in can
 *   never take the room a newcomer needs;
 * - when full, a client holding less than the heaviest client evicts that client's oldest idle
 *   connection (one with no request being handled: a partial head, or kept alive between
 *   requests) instead of being refused. Connections with a request in progress are never evicted.
 */
import type { ListenerErrorCode } from './listener-errors.ts';

/** From this fraction of `maxConnections` on, a client is held to its fair share. */
const FAIR_SHARE_FROM = 0.5;

/** What becomes of a new connection: refused (with the limit it met), or admitted (possibly in place of an evicted one). */
export type Admission<C> = { refused: ListenerErrorCode } | { refused?: undefined; evict?: C };

interface ClientConnections<C> {
  open: number;
  /** Connections with no request being handled, oldest idle first (a Set keeps insertion order). */
  readonly idle: Set<C>;
}

export class ConnectionLimiter<C = object> {
  readonly #maxConnections: number;
  readonly #maxPerClient: number;
  readonly #clients = new Map<string, ClientConnections<C>>();
  /** The client key of each counted connection. */
  readonly #owners = new Map<C, string>();
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
    return this.#clients.get(key)?.open ?? 0;
  }

  /**
   * How many connections one client may hold now (Infinity when unlimited). A per-client limit of 0
   * turns fair shares off too: that is the setting behind a reverse proxy, whose one address is
   * every client's.
   */
  capFor(): number {
    if (this.#maxPerClient === 0) return Infinity;
    if (this.#maxConnections === 0 || this.#total < this.#maxConnections * FAIR_SHARE_FROM) return this.#maxPerClient;
    return Math.min(this.#maxPerClient, Math.max(1, Math.floor(this.#maxConnections / (this.#clients.size + 1))));
  }

  /**
   * Counts `connection` of client `key` in (as idle), or names the limit it meets and counts
   * nothing. When admitted in place of another client's connection, `evict` is that connection,
   * already counted out: the caller closes it.
   */
  admit(key: string, connection: C): Admission<C> {
    const client = this.#clients.get(key);
    const open = client?.open ?? 0;
    if (open >= this.capFor()) return { refused: 'LISTENER_CLIENT_CONNECTION_LIMIT' };
    let evict: C | undefined;
    if (this.#maxConnections > 0 && this.#total >= this.#maxConnections) {
      evict = this.#evictable(open);
      if (evict === undefined) return { refused: 'LISTENER_CONNECTION_LIMIT' };
    }
    if (evict !== undefined) this.release(evict);
    const entry = client ?? { open: 0, idle: new Set<C>() };
    if (client === undefined) this.#clients.set(key, entry);
    entry.open += 1;
    entry.idle.add(connection);
    this.#owners.set(connection, key);
    this.#total += 1;
    return evict === undefined ? {} : { evict };
  }

  /** The connection now has a request being handled: it is not evicted until it is idle again. */
  busy(connection: C): void {
    const key = this.#owners.get(connection);
    if (key !== undefined) this.#clients.get(key)?.idle.delete(connection);
  }

  /** The connection's request is done: it is idle again, and the newest idle of its client. */
  idle(connection: C): void {
    const key = this.#owners.get(connection);
    if (key !== undefined) this.#clients.get(key)?.idle.add(connection);
  }

  /** Counts an admitted connection out (once: releasing it again, after an eviction, is ignored). */
  release(connection: C): void {
    const key = this.#owners.get(connection);
    if (key === undefined) return;
    this.#owners.delete(connection);
    const client = this.#clients.get(key);
    if (client === undefined) return;
    client.idle.delete(connection);
    client.open -= 1;
    if (client.open <= 0) this.#clients.delete(key);
    this.#total = Math.max(0, this.#total - 1);
  }

  /**
   * The oldest idle connection of the client holding the most, when that client holds more than
   * a newcomer holding `open` would after admission; else nothing may be evicted.
   */
  #evictable(open: number): C | undefined {
    let heaviest: ClientConnections<C> | undefined;
    for (const client of this.#clients.values()) {
      if (client.idle.size > 0 && (heaviest === undefined || client.open > heaviest.open)) heaviest = client;
    }
    if (heaviest === undefined || heaviest.open <= open + 1) return undefined;
    return heaviest.idle.values().next().value;
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
  return `${groups
    .slice(0, 4)
    .map((group) => (group.includes('.') ? group : Number.parseInt(group, 16).toString(16)))
    .join(':')}::/64`;
}
