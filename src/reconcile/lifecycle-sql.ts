import { sql, type RawBuilder } from 'kysely';
import type { Lifecycle } from '../db/schema.ts';

/**
 * A version's lifecycle in run `runId`, one that the version held at: an exception is new in the run that first saw
 * it and persisting in every later one; a verdict that resolved an exception is resolved in the run that wrote it
 * only. Read this way, a lifecycle moving on costs no new version (`alias` is the version's table alias).
 */
export function lifecycleAtSql(alias: string, runId: RawBuilder<unknown>): RawBuilder<Lifecycle | null> {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  return sql<Lifecycle | null>`CASE
    WHEN ${column('status')} NOT IN ('matched', 'pending')
      THEN CASE WHEN ${column('first_seen_run_id')} = ${runId} THEN 'new' ELSE 'persisting' END
    WHEN ${column('lifecycle')} = 'resolved' AND ${column('run_id')} = ${runId} THEN 'resolved'
  END`;
}
