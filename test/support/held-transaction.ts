import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { Schema } from '../../src/db/schema.ts';

/**
 * A session of the test's own with a transaction left open on what `statements` took (a row, a table lock):
 * whoever needs it next waits there, at a known point, until `release`. How the multi-process tests force a race
 * or catch a process mid-transaction without relying on timing.
 */
export interface HeldTransaction {
  readonly pid: number;
  /** Rolls back what was held and ends the session. */
  release(): Promise<void>;
  /** Commits what was held instead (the holder won a race) and ends the session. */
  commit(): Promise<void>;
}

export async function holdTransaction(databaseUrl: string, statements: readonly string[]): Promise<HeldTransaction> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'recon-test-holder' });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await client.query('BEGIN');
  for (const statement of statements) await client.query(statement);
  let released = false;
  const end = async (statement: 'ROLLBACK' | 'COMMIT') => {
    if (released) return;
    released = true;
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  return { pid: rows[0]!.pid, release: () => end('ROLLBACK'), commit: () => end('COMMIT') };
}

/** A backend of the database, waiting for a lock. */
export interface LockWaiter {
  readonly pid: number;
  readonly applicationName: string;
  readonly query: string;
  /** The table it waits to lock (`recon.transactions`), or null when it waits on a row, a transaction or an advisory lock. */
  readonly relation: string | null;
}

/** The backends of `db`'s database waiting for a lock right now. */
export async function lockWaiters(db: Kysely<Schema>): Promise<LockWaiter[]> {
  const { rows } = await sql<LockWaiter>`SELECT a.pid, a.application_name AS "applicationName", a.query,
      (SELECT l.relation::regclass::text FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted AND l.locktype = 'relation' LIMIT 1) AS relation
    FROM pg_stat_activity a
    WHERE a.datname = current_database() AND a.wait_event_type = 'Lock' ORDER BY a.pid`.execute(db);
  return rows;
}

/** Whether backend `pid` still exists (a killed client's backend lingers until it next talks to the client). */
export async function backendExists(db: Kysely<Schema>, pid: number): Promise<boolean> {
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE pid = ${pid}`.execute(db);
  return rows.length > 0;
}

/** `databaseUrl` with an application_name, which pg_stat_activity shows: tells the test's processes apart. */
export function withApplicationName(databaseUrl: string, name: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', name);
  return url.toString();
}
