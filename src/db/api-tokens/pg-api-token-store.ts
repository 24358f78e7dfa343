/**
 * ApiTokenStore on PostgreSQL (a PgDatabase shared with the instance's other stores). Every
 * instance reads the same rows, so a deleted or disabled token is refused everywhere at once. The
 * per-account limit holds across instances: creates of one account take a transaction lock on it.
 */
import type { PgDatabase } from '../postgres/pg-database.ts';
import { checkedPlan, fromApiTokenRow, toApiTokenRow, type ApiTokenRecord, type ApiTokenRow, type ApiTokenStore } from './api-token-store.ts';

const SQL = {
  lockAccount: "SELECT pg_advisory_xact_lock(hashtextextended('api_tokens:' || $1, 0))",
  count: 'SELECT count(*)::int AS n FROM api_tokens WHERE account_id = $1',
  insert: 'INSERT INTO api_tokens (id, account_id, value_hash, token, created) VALUES ($1, $2, $3, $4, $5)',
  list: 'SELECT * FROM api_tokens WHERE account_id = $1 ORDER BY created, id COLLATE "C"',
  get: 'SELECT * FROM api_tokens WHERE id = $1 AND account_id = $2',
  getForUpdate: 'SELECT * FROM api_tokens WHERE id = $1 AND account_id = $2 FOR UPDATE',
  byValueHash: 'SELECT * FROM api_tokens WHERE value_hash = $1',
  update: 'UPDATE api_tokens SET value_hash = $2, token = $3 WHERE id = $1',
  delete: 'DELETE FROM api_tokens WHERE id = $1 AND account_id = $2 RETURNING id',
} as const;

export class PgApiTokenStore implements ApiTokenStore {
  readonly #db: PgDatabase;

  constructor(database: PgDatabase) {
    this.#db = database;
  }

  async create(token: ApiTokenRecord, maxPerAccount: number): Promise<'created' | 'limit'> {
    return this.#db.transaction(async (client) => {
      await this.#db.run(client, SQL.lockAccount, [token.accountId]);
      const [count] = await this.#db.run<{ n: number }>(client, SQL.count, [token.accountId]);
      if (count!.n >= maxPerAccount) return 'limit';
      const row = toApiTokenRow(token);
      await this.#db.run(client, SQL.insert, [row.id, row.account_id, row.value_hash, row.token, row.created]);
      return 'created';
    });
  }

  async list(accountId: string): Promise<ApiTokenRecord[]> {
    return (await this.#db.query<ApiTokenRow>(SQL.list, [accountId])).map(fromApiTokenRow);
  }

  async get(accountId: string, id: string): Promise<ApiTokenRecord | null> {
    const [row] = await this.#db.query<ApiTokenRow>(SQL.get, [id, accountId]);
    return row ? fromApiTokenRow(row) : null;
  }

  async findByValueHash(valueHash: string): Promise<ApiTokenRecord | null> {
    const [row] = await this.#db.query<ApiTokenRow>(SQL.byValueHash, [valueHash]);
    return row ? fromApiTokenRow(row) : null;
  }

  async update(accountId: string, id: string, plan: (current: ApiTokenRecord) => ApiTokenRecord): Promise<ApiTokenRecord | null> {
    return this.#db.transaction(async (client) => {
      const [row] = await this.#db.run<ApiTokenRow>(client, SQL.getForUpdate, [id, accountId]);
      if (!row) return null;
      const current = fromApiTokenRow(row);
      const next = checkedPlan(current, plan(current));
      const stored = toApiTokenRow(next);
      await this.#db.run(client, SQL.update, [id, stored.value_hash, stored.token]);
      return next;
    });
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return (await this.#db.write(SQL.delete, [id, accountId])).length === 1;
  }
}
