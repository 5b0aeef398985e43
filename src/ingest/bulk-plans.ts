import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';

/**
 * Planner settings for the statements that join a freshly COPYed temporary table to recon.transactions, for the
 * rest of the load's transaction. The planner knows nothing of a temporary table until it is analyzed, and guessed
 * a few rows where there were a million: a nested loop of a million index probes instead of a hash join. A
 * statistics target of 1 samples 300 rows (milliseconds) and is enough for the row count and null fractions. JIT
 * compiling these statements' expressions cost more than running them. On PostgreSQL the joins get memory enough to
 * hash a million ids in one batch (the server's memory, for this transaction); PGlite keeps its defaults, as its
 * memory is recon's own process's. A table known to hold fewer than ANALYZE_MIN_ROWS rows (a nightly delivery of a
 * few hundred) is not analyzed: an index probe per row is the right plan for it, and the one the planner takes from
 * the table's size alone. The settings are made in one statement: each is a round trip, and a night loads
 * thousands of small files.
 */
export async function planBulkJoins(connection: Connection, table: string, rows?: number): Promise<void> {
  const settings: [string, string][] = [
    ['jit', 'off'],
    ...(connection.kind === 'postgres' ? [['work_mem', '64MB'] as [string, string]] : []),
    ['default_statistics_target', '1'],
  ];
  await sql`SELECT ${sql.join(settings.map(([name, value]) => sql`set_config(${name}, ${value}, true)`))}`.execute(
    connection.db,
  );
  if (rows === undefined || rows >= ANALYZE_MIN_ROWS) await analyzeStaged(connection, table);
}

/** Fewer staged rows than this are merged without statistics (planBulkJoins). */
const ANALYZE_MIN_ROWS = 10_000;

/** Statistics of the table as it is now, under the settings planBulkJoins made: again after each chunk's COPY. */
export async function analyzeStaged(connection: Connection, table: string): Promise<void> {
  await sql`ANALYZE ${sql.table(table)}`.execute(connection.db);
}
