/** ApiTokenStore on SQLite: the control store's connection and write queue (group-committed, durable writes). */
import type { Database } from 'better-sqlite3';
import type { WriteQueue } from '../sqlite/write-queue.ts';
import { checkedPlan, fromApiTokenRow, toApiTokenRow, type ApiTokenRecord, type ApiTokenRow, type ApiTokenStore } from './api-token-store.ts';

function prepareStatements(db: Database) {
  return {
    insert: db.prepare('INSERT INTO api_tokens (id, account_id, value_hash, token, created) VALUES (@id, @account_id, @value_hash, @token, @created)'),
    count: db.prepare('SELECT count(*) FROM api_tokens WHERE account_id = ?').pluck(),
    list: db.prepare('SELECT * FROM api_tokens WHERE account_id = ? ORDER BY created, id'),
    get: db.prepare('SELECT * FROM api_tokens WHERE id = ? AND account_id = ?'),
    byValueHash: db.prepare('SELECT * FROM api_tokens WHERE value_hash = ?'),
    update: db.prepare('UPDATE api_tokens SET value_hash = @value_hash, token = @token WHERE id = @id'),
    delete: db.prepare('DELETE FROM api_tokens WHERE id = ? AND account_id = ?'),
  };
}

export class SqliteApiTokenStore implements ApiTokenStore {
  readonly #sql: ReturnType<typeof prepareStatements>;
  readonly #writes: WriteQueue;

  constructor(db: Database, writes: WriteQueue) {
    this.#sql = prepareStatements(db);
    this.#writes = writes;
  }

  async create(token: ApiTokenRecord, maxPerAccount: number): Promise<'created' | 'limit'> {
    return this.#writes.run(() => {
      if ((this.#sql.count.get(token.accountId) as number) >= maxPerAccount) return 'limit';
      this.#sql.insert.run(toApiTokenRow(token));
      return 'created';
    });
  }

  async list(accountId: string): Promise<ApiTokenRecord[]> {
    return (this.#sql.list.all(accountId) as ApiTokenRow[]).map(fromApiTokenRow);
  }

  async get(accountId: string, id: string): Promise<ApiTokenRecord | null> {
    const row = this.#sql.get.get(id, accountId) as ApiTokenRow | undefined;
    return row ? fromApiTokenRow(row) : null;
  }

  async findByValueHash(valueHash: string): Promise<ApiTokenRecord | null> {
    const row = this.#sql.byValueHash.get(valueHash) as ApiTokenRow | undefined;
    return row ? fromApiTokenRow(row) : null;
  }

  async update(accountId: string, id: string, plan: (current: ApiTokenRecord) => ApiTokenRecord): Promise<ApiTokenRecord | null> {
    return this.#writes.run(() => {
      const row = this.#sql.get.get(id, accountId) as ApiTokenRow | undefined;
      if (!row) return null;
      const current = fromApiTokenRow(row);
      const next = checkedPlan(current, plan(current));
      const { value_hash, token } = toApiTokenRow(next);
      this.#sql.update.run({ id, value_hash, token });
      return next;
    });
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return this.#writes.run(() => this.#sql.delete.run(id, accountId).changes === 1);
  }
}
