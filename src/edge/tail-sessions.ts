/**
 * Tail sessions (`wrangler tail`): an account opens one on its script through the API, and the
 * client connects to the session's WebSocket (`trace-v1`); every request the script serves on this
 * instance is then sent to it as one JSON event. Bounded: at most MAX_PER_SCRIPT sessions per
 * script and MAX_PER_ACCOUNT per account, each expires after SESSION_MS, and one no client
 * connected to within CONNECT_MS is dropped. A session is found by its id and its account: another
 * account's id is as missing as an unknown one. A script's version runs with workerd's tails only
 * while a session is open on it (`onChange` tells the edge to restart it when the first opens and the
 * last closes): tails cost every request, even the ones nobody watches.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { CLOSE_CAUSES, WEBSOCKET_LIMITS, type CloseCause, type ServerWebSocket } from '../core/http/websocket.ts';
import type { TailTarget } from '../runtime/host.ts';
import { tailEventPasses, type TailEventView, type TailFilter } from './tail-filters.ts';

/**
 * A tail's socket also holds at most `maxMessageBytes` of what its client sends (its settings, a
 * few bytes) and `maxBufferedBytes` of events its client has not read yet: past that, the client
 * is too slow for the script's traffic and its socket is closed with 1008 (wrangler tail then
 * opens a new tail); see websocket.ts for the rest of the bounds.
 */
export const TAIL_LIMITS = {
  perScript: 10,
  perAccount: 50,
  sessionMs: 6 * 60 * 60 * 1000,
  connectMs: 60_000,
  maxMessageBytes: 64 * 1024,
  maxBufferedBytes: WEBSOCKET_LIMITS.maxBufferedBytes,
} as const;

export interface TailSession {
  id: string;
  accountId: string;
  script: string;
  /** Secret part of the WebSocket's path: the URL is the session's credential. */
  secret: string;
  expiresAt: number;
  socket: ServerWebSocket | undefined;
  timer: NodeJS.Timeout;
  /** What an event must meet to be sent (tail-filters.ts); none: every event. */
  filters: readonly TailFilter[];
  /** The address of whoever opened it: what a `client_ip` filter's `self` stands for. */
  openerIp: string | undefined;
}

export class TailSessions {
  readonly #sessions = new Map<string, TailSession>();
  /** Sessions per `${accountId}/${script}`. */
  readonly #byScript = new Map<string, Set<TailSession>>();
  readonly #limits: typeof TAIL_LIMITS;
  readonly #now: () => number;
  /** Every tail socket until its connection is gone (a closed one still reading its close frame included). */
  readonly sockets = new Set<ServerWebSocket>();
  /** Sockets ended since start, by why. */
  readonly #socketsClosed = Object.fromEntries(CLOSE_CAUSES.map((cause) => [cause, 0])) as Record<CloseCause, number>;

  constructor(options: { limits?: Partial<typeof TAIL_LIMITS>; now?: () => number } = {}) {
    this.#limits = { ...TAIL_LIMITS, ...options.limits };
    this.#now = options.now ?? Date.now;
  }

  #changed: (() => void) | undefined;

  /** Called when a script gets its first session or loses its last. */
  onChange(listener: () => void): void {
    this.#changed = listener;
  }

  /** Whether any session (connected or not yet) is open on the script. */
  watching(accountId: string, script: string): boolean {
    return this.#byScript.has(`${accountId}/${script}`);
  }

  get limits(): typeof TAIL_LIMITS {
    return this.#limits;
  }

  /** A new session (sending the events that meet `filters`), or which limit it would pass. */
  open(
    accountId: string,
    script: string,
    options: { filters?: readonly TailFilter[]; openerIp?: string } = {},
  ): TailSession | { limit: 'script' | 'account'; max: number } {
    const key = `${accountId}/${script}`;
    if ((this.#byScript.get(key)?.size ?? 0) >= this.#limits.perScript) return { limit: 'script', max: this.#limits.perScript };
    let perAccount = 0;
    for (const session of this.#sessions.values()) if (session.accountId === accountId) perAccount++;
    if (perAccount >= this.#limits.perAccount) return { limit: 'account', max: this.#limits.perAccount };
    const id = randomUUID().replace(/-/g, '');
    const session: TailSession = {
      id,
      accountId,
      script,
      secret: randomBytes(24).toString('base64url'),
      expiresAt: this.#now() + this.#limits.sessionMs,
      socket: undefined,
      filters: options.filters ?? [],
      openerIp: options.openerIp,
      timer: setTimeout(() => {
        if (!session.socket) this.close(session);
      }, this.#limits.connectMs),
    };
    session.timer.unref();
    this.#sessions.set(id, session);
    let set = this.#byScript.get(key);
    if (!set) this.#byScript.set(key, (set = new Set()));
    set.add(session);
    if (set.size === 1) this.#changed?.();
    return session;
  }

  /** The account's session on its script (undefined for another account's, or an expired one). */
  get(accountId: string, script: string, id: string): TailSession | undefined {
    const session = this.#sessions.get(id);
    return session && session.accountId === accountId && session.script === script ? session : undefined;
  }

  list(accountId: string, script: string): TailSession[] {
    return [...(this.#byScript.get(`${accountId}/${script}`) ?? [])];
  }

  /** The session a WebSocket connects to, by id and secret; only once. */
  forSocket(id: string, secret: string): TailSession | undefined {
    const session = this.#sessions.get(id);
    return session && session.secret === secret && !session.socket && session.expiresAt > this.#now() ? session : undefined;
  }

  attach(session: TailSession, socket: ServerWebSocket): void {
    session.socket = socket;
    clearTimeout(session.timer);
    session.timer = setTimeout(() => this.close(session), Math.max(0, session.expiresAt - this.#now()));
    session.timer.unref();
    socket.onClose((cause) => {
      this.#socketsClosed[cause] += 1;
      this.close(session);
    });
  }

  /** Bytes the tail sockets hold: events their clients have not read, and input being read. */
  get bufferedBytes(): number {
    let total = 0;
    for (const socket of this.sockets) total += socket.bufferedBytes;
    return total;
  }

  /** Tail sockets ended since start, by why (`slow_reader`: closed for leaving too much unread). */
  get socketsClosed(): Readonly<Record<CloseCause, number>> {
    return this.#socketsClosed;
  }

  close(session: TailSession): void {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    clearTimeout(session.timer);
    const key = `${session.accountId}/${session.script}`;
    const set = this.#byScript.get(key);
    set?.delete(session);
    session.socket?.close(1000);
    if (set?.size === 0) {
      this.#byScript.delete(key);
      this.#changed?.();
    }
  }

  /** At shutdown: every session closed, its socket sent a close frame; onChange's listener is no longer told (nothing restarts for it). */
  closeAll(): void {
    this.#changed = undefined;
    for (const session of [...this.#sessions.values()]) this.close(session);
  }

  /** What a running version (`versionId`) of the script reports its requests to: each session gets the events its filters let through. */
  target(accountId: string, script: string, versionId: string): TailTarget {
    const key = `${accountId}/${script}`;
    return {
      watched: () => this.#byScript.has(key),
      publish: (event) => {
        const set = this.#byScript.get(key);
        if (!set) return;
        let text: string | undefined;
        for (const session of set) {
          if (!session.socket) continue;
          if (session.filters.length > 0 && !tailEventPasses(session.filters, (event ?? {}) as TailEventView, versionId, session.openerIp)) continue;
          text ??= JSON.stringify(event);
          // A socket whose client left too much unread closes itself here (and its session with it).
          session.socket.sendText(text);
        }
      },
    };
  }
}
