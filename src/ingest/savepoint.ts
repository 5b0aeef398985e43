import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';

/**
 * Runs `work` in a savepoint of the load's transaction: its result, or undefined when it failed on a unique
 * violation (an id stored already), nothing of it written then and the transaction still usable. Any other error
 * is thrown.
 */
export async function unlessUniqueViolation<T>(
  connection: Connection,
  name: string,
  work: () => Promise<T>,
): Promise<T | undefined> {
  const savepoint = sql.id(name);
  await sql`SAVEPOINT ${savepoint}`.execute(connection.db);
  try {
    const result = await work();
    await sql`RELEASE SAVEPOINT ${savepoint}`.execute(connection.db);
    return result;
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    await sql`ROLLBACK TO SAVEPOINT ${savepoint}`.execute(connection.db);
    return undefined;
  }
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === '23505';
}
