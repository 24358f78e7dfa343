/** Applies pending migrations to a SQLite database, each in its own transaction. */
import type { Database } from 'better-sqlite3';
import { MIGRATIONS, type Migration } from '../migrations/index.ts';

/** Applies `migrations` (every migration by default; tests pass a prefix to build an older schema). */
export function migrateSqlite(db: Database, now: number, migrations: readonly Migration[] = MIGRATIONS): number[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)');
  const applied = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
  const ran: number[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sqlite);
      db.prepare('INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)').run(migration.version, migration.name, now);
    }).immediate();
    ran.push(migration.version);
  }
  return ran;
}
