import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { ReconError } from '../errors.ts';
import { packageRoot } from '../package-root.ts';
import type { Database } from './database.ts';

/**
 * Applies the numbered SQL files of sql/migrations in order, each once, each in its own transaction.
 * Files are frozen in time: a change to the schema is a new file, never an edit of an applied one.
 * An advisory lock makes concurrent starts (two cron runs, a CLI beside a server) apply them once.
 * A file whose first line is `-- recon:postgres-only` (roles, grants: PGlite has a single user) is recorded
 * as applied on PGlite without running, so that the numbering stays the same on both backends.
 */
export const MIGRATION_LOCK = 0x7265636f6e; // "recon"
const POSTGRES_ONLY = '-- recon:postgres-only';

export function migrationsDir(): string {
  return path.join(packageRoot(), 'sql', 'migrations');
}

export async function migrate(database: Database, dir = migrationsDir()): Promise<string[]> {
  const files = (await readdir(dir)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort();
  // Every command migrates at start: in the usual case, one read finds every file applied and nothing more runs.
  const appliedBefore = await appliedMigrations(database);
  const newlyApplied: string[] = [];
  // One transaction per pending file, each under the lock and reading afresh what is applied: a failing file
  // leaves the files before it applied, and a concurrent migrator that got there first is seen, file by file.
  for (const name of files.filter((file) => !appliedBefore.has(file))) {
    const applied = await database.transaction(async (connection) => {
      if (database.kind === 'postgres')
        await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(connection.db);
      await connection.exec(`
        CREATE SCHEMA IF NOT EXISTS recon;
        CREATE TABLE IF NOT EXISTS recon.schema_migrations (
          name text PRIMARY KEY,
          applied_at timestamptz NOT NULL DEFAULT now()
        );`);
      const done = await connection.db
        .selectFrom('recon.schema_migrations')
        .select('name')
        .where('name', '=', name)
        .executeTakeFirst();
      if (done) return false;
      const script = await readFile(path.join(dir, name), 'utf8');
      const skip = database.kind === 'pglite' && script.split('\n', 1)[0]?.trim() === POSTGRES_ONLY;
      try {
        if (!skip) await connection.exec(script);
      } catch (error) {
        throw new ReconError('MIGRATION', `migration ${name} failed: ${(error as Error).message}`, { cause: error });
      }
      await connection.db.insertInto('recon.schema_migrations').values({ name }).execute();
      return true;
    });
    if (applied) newlyApplied.push(name);
  }
  return newlyApplied;
}

/** The migrations applied so far; none on a database that has never been migrated. */
async function appliedMigrations(database: Database): Promise<Set<string>> {
  // Kysely only, yet on recon's own transaction like the scripts after it: this is the first query of every
  // command, and a server out of reach fails it as ReconError DATABASE naming PostgreSQL, not a bare pg error.
  return database.transaction(async (connection) => {
    const {
      rows: [table],
    } = await sql<{ present: boolean }>`SELECT to_regclass('recon.schema_migrations') IS NOT NULL AS present`.execute(
      connection.db,
    );
    if (!table?.present) return new Set<string>();
    const rows = await connection.db.selectFrom('recon.schema_migrations').select('name').execute();
    return new Set(rows.map((row) => row.name));
  });
}
