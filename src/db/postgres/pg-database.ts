/**
 * PgDatabase: one PostgreSQL connection pool (`pg`) shared by the metadata and control stores of an
 * instance. It owns what every PostgreSQL store needs: the schema named by the URL, migrations
 * (once, under an advisory lock, whichever instance starts first), transactions that retry on
 * serialization failures and deadlocks, and LISTEN/NOTIFY so that instances hear each other's
 * changes.
 *
 * URL: `postgres://user:pass@host:port/database?schema=name&pool=10`. `schema` (default `public`)
 * lets several edgeport deployments, or tests, share one database; `pool` caps the connections of
 * this instance (default 10). Every other query parameter is passed to `pg` as is.
 */
import pg from 'pg';
import { backendFull, backendUnavailable, type BackendFault } from '../../core/errors/backend-fault.ts';
import { MIGRATIONS } from '../migrations/index.ts';

export type PgClient = pg.PoolClient;

export interface PgDatabaseOptions {
  url: string;
  /** Epoch ms, recorded with each migration applied. */
  now: number;
  /**
   * The deadline of every statement and of getting a connection (`[db] timeout_ms`, default
   * DEFAULT_TIMEOUT_MS): past it the call fails with a BackendFault instead of waiting on a
   * database that is down, cut off or stuck. Migrations at start have none.
   */
  timeoutMs?: number;
}

/** Far above any statement edgeport runs (milliseconds on an idle database), far below a client's patience. */
export const DEFAULT_TIMEOUT_MS = 10_000;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** SQLSTATEs worth retrying a whole transaction for: serialization_failure, deadlock_detected. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 8;
/** Any number: the lock only serializes migrations of one database. */
const MIGRATION_LOCK = 0x65646770; // "edgp"

/** BIGINT (int8, oid 20) columns hold epoch ms and sizes: safe integers, parsed as numbers. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser,
};

export class PgDatabase {
  readonly schema: string;
  /** The URL opened, without its password: for banners and messages. */
  readonly where: string;
  readonly #pool: pg.Pool;
  readonly #config: pg.ClientConfig;
  /** The config without deadlines, for migrations (which may rightly run long). */
  readonly #migrationConfig: pg.ClientConfig;
  readonly #timeoutMs: number;
  #listener: pg.Client | null = null;
  #connecting: Promise<pg.Client> | null = null;
  readonly #statementNames = new Map<string, string>();
  readonly #channels = new Map<string, Set<(payload: string) => void>>();
  /** Advisory lock classes held shared on the listening connection (holdSharedLock). */
  readonly #sharedLocks = new Set<number>();
  #closed = false;

  private constructor(config: pg.ClientConfig, schema: string, poolSize: number, where: string, timeoutMs: number) {
    this.schema = schema;
    this.where = where;
    this.#timeoutMs = timeoutMs;
    this.#migrationConfig = { ...config, types, options: `-c search_path=${schema}` };
    // Every statement and connection has a deadline: the client gives up (query_timeout) even when
    // the network is cut and no answer can come; the server stops the statement too (statement_timeout).
    // Keep-alive notices a dead peer on idle connections.
    this.#config = {
      ...this.#migrationConfig,
      query_timeout: timeoutMs,
      statement_timeout: timeoutMs,
      connectionTimeoutMillis: timeoutMs,
      keepAlive: true,
    };
    this.#pool = new pg.Pool({ ...this.#config, max: poolSize, idleTimeoutMillis: 30_000 });
    // An idle client that loses its connection must not crash the process; the pool replaces it.
    this.#pool.on('error', () => undefined);
  }

  /** Connects, creates the schema if needed and applies pending migrations. */
  static async open(options: PgDatabaseOptions): Promise<PgDatabase> {
    const { config, schema, poolSize } = parsePgUrl(options.url);
    const db = new PgDatabase(config, schema, poolSize, redact(options.url), options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    try {
      await db.#migrate(options.now);
    } catch (error) {
      await db.#pool.end().catch(() => undefined);
      throw new Error(`Could not open PostgreSQL at ${redact(options.url)}: ${(error as Error).message}`, { cause: error });
    }
    return db;
  }

  /**
   * Runs one statement on a pooled connection, as a prepared statement: parsed and planned once per
   * connection (about 1.5x the rate of a small read). Every text gets a name of its own.
   */
  async query<Row extends object = Record<string, unknown>>(text: string, values: readonly unknown[] = []): Promise<Row[]> {
    try {
      return (await this.#pool.query<Row>(this.#prepared(text), values as unknown[])).rows;
    } catch (error) {
      throw this.#fault(error) ?? error;
    }
  }

  /** One statement that is atomic by itself, run again after a serialization failure or deadlock. */
  async write<Row extends object = Record<string, unknown>>(text: string, values: readonly unknown[] = []): Promise<Row[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.query<Row>(text, values);
      } catch (error) {
        if (!isRetryable(error) || attempt >= MAX_ATTEMPTS) throw error;
        await sleep(Math.random() * 2 ** attempt);
      }
    }
  }

  /** Runs one prepared statement on `client` (inside a transaction of this database). */
  async run<Row extends object = Record<string, unknown>>(client: PgClient, text: string, values: readonly unknown[] = []): Promise<Row[]> {
    return (await client.query<Row>(this.#prepared(text), values as unknown[])).rows;
  }

  /**
   * Runs `work` in one transaction (READ COMMITTED unless `serializable`), committing when it
   * resolves and rolling back when it throws. On a serialization failure or deadlock the whole
   * transaction is retried, so `work` must not have effects outside the database.
   */
  async transaction<T>(work: (client: PgClient) => Promise<T>, options: { serializable?: boolean } = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.#pool.connect().catch((error: unknown) => {
        throw this.#fault(error) ?? error;
      });
      let broken = false;
      try {
        await client.query(options.serializable ? 'BEGIN ISOLATION LEVEL SERIALIZABLE' : 'BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        const fault = this.#fault(error);
        // A connection that failed or timed out is not handed out again.
        if (fault) broken = true;
        if (!isRetryable(error) || attempt >= MAX_ATTEMPTS) throw fault ?? error;
        await sleep(Math.random() * 2 ** attempt);
      } finally {
        client.release(broken);
      }
    }
  }

  /** Publishes `payload` on `channel` (inside `client`'s transaction: delivered when it commits). */
  async notify(channel: string, payload: string, client?: PgClient): Promise<void> {
    try {
      await (client ?? this.#pool).query('SELECT pg_notify($1, $2)', [this.#channelName(channel), payload]);
    } catch (error) {
      throw this.#fault(error) ?? error;
    }
  }

  /** `error` as a BackendFault when it says the database is down, cut off, too slow or full; else undefined. */
  #fault(error: unknown): BackendFault | undefined {
    return pgFault(error, this.#timeoutMs);
  }

  /**
   * Calls `listener` for every notification on `channel`, from any instance (this one too). The
   * listening connection reconnects after a failure; notifications sent while it was down are lost,
   * so callers keep a bounded-staleness fallback (a cache TTL).
   */
  async listen(channel: string, listener: (payload: string) => void): Promise<void> {
    const name = this.#channelName(channel);
    let set = this.#channels.get(name);
    if (!set) {
      set = new Set();
      this.#channels.set(name, set);
      const client = await this.#listenerClient();
      await client.query(`LISTEN ${quoteIdent(name)}`);
    }
    set.add(listener);
  }

  /**
   * Holds the advisory lock (`lockClass`, this schema) shared for as long as the database is open,
   * on the listening connection (taken again when it reconnects); waits while another session holds
   * it exclusively. Ends with close() or the process.
   */
  async holdSharedLock(lockClass: number): Promise<void> {
    if (this.#sharedLocks.has(lockClass)) return;
    const client = await this.#listenerClient();
    await client.query('SELECT pg_advisory_lock_shared($1, hashtext(current_schema()))', [lockClass]);
    this.#sharedLocks.add(lockClass);
  }

  /** The same text always gets the same name, so each connection prepares it once. */
  #prepared(text: string): { name: string; text: string } {
    let name = this.#statementNames.get(text);
    if (name === undefined) {
      name = `edgeport_${this.#statementNames.size}`;
      this.#statementNames.set(text, name);
    }
    return { name, text };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#connecting?.catch(() => undefined);
    const listener = this.#listener;
    this.#listener = null;
    await listener?.end().catch(() => undefined);
    await this.#pool.end();
  }

  #channelName(channel: string): string {
    return `edgeport.${this.schema}.${channel}`;
  }

  /** The one listening connection; concurrent first callers share one connection attempt. */
  #listenerClient(): Promise<pg.Client> {
    if (this.#listener) return Promise.resolve(this.#listener);
    this.#connecting ??= this.#connectListener().finally(() => {
      this.#connecting = null;
    });
    return this.#connecting;
  }

  async #connectListener(): Promise<pg.Client> {
    const client = new pg.Client(this.#config);
    client.on('notification', (message) => {
      for (const listener of this.#channels.get(message.channel) ?? []) listener(message.payload ?? '');
    });
    client.on('error', () => {
      if (this.#listener !== client) return;
      this.#listener = null;
      client.end().catch(() => undefined);
      setTimeout(() => this.#relisten(), 1000).unref();
    });
    await client.connect();
    this.#listener = client;
    return client;
  }

  #relisten(): void {
    if (this.#closed || this.#listener) return;
    this.#listenerClient()
      .then(async (client) => {
        for (const name of this.#channels.keys()) await client.query(`LISTEN ${quoteIdent(name)}`);
        for (const lockClass of this.#sharedLocks) await client.query('SELECT pg_advisory_lock_shared($1, hashtext(current_schema()))', [lockClass]);
        // Whatever was missed while disconnected: tell every listener something may have changed.
        for (const set of this.#channels.values()) for (const listener of set) listener('');
      })
      .catch(() => setTimeout(() => this.#relisten(), 1000).unref());
  }

  async #migrate(now: number): Promise<void> {
    // A connection of its own, without the statements' deadline: a migration of a large table may take a while.
    const client = new pg.Client(this.#migrationConfig);
    await client.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`);
        await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)');
        const applied = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((row) => row.version));
        for (const migration of MIGRATIONS) {
          if (applied.has(migration.version)) continue;
          await client.query('BEGIN');
          try {
            await client.query(migration.postgres);
            await client.query('INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)', [migration.version, migration.name, now]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** Splits edgeport's own parameters (`schema`, `pool`) off a PostgreSQL URL. */
export function parsePgUrl(url: string): { config: pg.ClientConfig; schema: string; poolSize: number } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`Not a PostgreSQL URL: ${JSON.stringify(redact(url))}; expected postgres://user@host:5432/database`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`Not a PostgreSQL URL: ${JSON.stringify(redact(url))}; it must start with postgres://`);
  }
  const schema = parsed.searchParams.get('schema') ?? 'public';
  if (!SCHEMA_NAME.test(schema))
    throw new Error(`Schema ${JSON.stringify(schema)} in the PostgreSQL URL must be lower case letters, digits and _ (at most 63).`);
  const pool = parsed.searchParams.get('pool');
  const poolSize = pool === null ? 10 : Number(pool);
  if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1000)
    throw new Error(`pool=${pool} in the PostgreSQL URL must be a whole number from 1 to 1000.`);
  parsed.searchParams.delete('schema');
  parsed.searchParams.delete('pool');
  return { config: { connectionString: parsed.toString() }, schema, poolSize };
}

/** The URL with its password hidden, for messages. */
export function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Node's codes of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/**
 * SQLSTATEs of a server that cannot serve now: connection exceptions (class 08), shutting down or
 * starting (57P01-57P03), a statement cancelled by statement_timeout (57014), too many connections or
 * out of memory (53300, 53200), a read-only standby after a failover (25006).
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '57014', '53000', '53200', '53300', '25006']);

/**
 * A `pg` error as the backend fault it is (the database down, unreachable, too slow or full), or
 * undefined for any other error (a constraint, a bug). Exported for tests.
 */
export function pgFault(error: unknown, timeoutMs: number): BackendFault | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  const state = typeof code === 'string' ? code : '';
  const details = { ...(state === '' ? {} : { code: state }) };
  if (state === '53100') return backendFull('database', error, details);
  if (NETWORK_CODES.has(state))
    return backendUnavailable('database', state === 'ECONNREFUSED' ? 'refused the connection' : `could not be reached (${state})`, error, details);
  if (/^08/.test(state) || UNAVAILABLE_STATES.has(state)) {
    return backendUnavailable(
      'database',
      state === '57014' ? `did not answer within ${timeoutMs} ms` : `could not serve the request (SQLSTATE ${state})`,
      error,
      details,
    );
  }
  const message = error.message;
  if (/timeout exceeded when trying to connect|Connection terminated due to connection timeout/i.test(message)) {
    return backendUnavailable('database', `gave no connection within ${timeoutMs} ms`, error, details);
  }
  if (/Query read timeout/i.test(message)) return backendUnavailable('database', `did not answer within ${timeoutMs} ms`, error, details);
  if (/Connection terminated|connection error|not queryable|Client was closed/i.test(message))
    return backendUnavailable('database', 'closed the connection', error, details);
  return undefined;
}

function isRetryable(error: unknown): boolean {
  return RETRYABLE.has((error as { code?: string }).code ?? '');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
