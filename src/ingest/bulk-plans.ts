import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';

/**
 * Planner settings for the statements that join a freshly COPYed temporary table to recon.transactions, for the
 * rest of the load's transaction. The planner knows nothing of a temporary table until it is analyzed, and guessed
 * a few rows where there were a million: a nested loop of a million index probes instead of a hash join. A
 * statistics target of 1 samples 300 rows (milliseconds) and is enough for the row count and null fractions. JIT
 * compiling these statements' expressions cost more than running them. On PostgreSQL the joins get memory enough to
 * hash a million ids in one batch (the server's memory, for this transaction); PGlite keeps its defaults, as its
 * memory is recon's own process's.
 */
export async function planBulkJoins(connection: Connection, table: string): Promise<void> {
  await sql`SET LOCAL jit = off`.execute(connection.db);
  if (connection.kind === 'postgres') await sql`SET LOCAL work_mem = '64MB'`.execute(connection.db);
  await sql`SET LOCAL default_statistics_target = 1`.execute(connection.db);
  await analyzeStaged(connection, table);
}

/** Statistics of the table as it is now, under the settings planBulkJoins made: again after each chunk's COPY. */
export async function analyzeStaged(connection: Connection, table: string): Promise<void> {
  await sql`ANALYZE ${sql.table(table)}`.execute(connection.db);
}
