import { sql } from 'kysely';
import type { Database } from '../db/database.ts';

/**
 * What autovacuum would do after a run, done by recon where nothing else does it: PGlite has no autovacuum, and a
 * PostgreSQL server may have it off (for the whole server or for recon.verdicts). Without it the rows a run replaced
 * stay dead night after night, and the accountants' questions are planned without statistics of the verdicts.
 */
export async function upkeepAfterRun(
  database: Database,
  verdictsChanged: number,
  mayHaveReplaced: boolean,
): Promise<void> {
  if (verdictsChanged === 0) return;
  if (database.kind === 'pglite') {
    await sql`VACUUM (ANALYZE) recon.verdicts, recon.verdict_history`.execute(database.db);
    return;
  }
  const { rows } = await sql<{ off: boolean; rows: number }>`SELECT
      current_setting('autovacuum') = 'off'
        OR coalesce('autovacuum_enabled=false' = ANY (c.reloptions), false) AS off,
      greatest(c.reltuples, 0)::float8 AS rows
    FROM pg_class c WHERE c.oid = 'recon.verdicts'::regclass`.execute(database.db);
  const table = rows[0];
  if (!table?.off) return;
  // autovacuum's own thresholds: analyze past 10% of the rows changed, vacuum past half a percent (the setting
  // migration 0019 gives recon.verdicts), each plus its base count.
  if (mayHaveReplaced && verdictsChanged > 1000 + 0.005 * table.rows && table.rows > 0) {
    await sql`VACUUM (ANALYZE) recon.verdicts, recon.verdict_history`.execute(database.db);
  } else if (verdictsChanged > 50 + 0.1 * table.rows) {
    await sql`ANALYZE recon.verdicts, recon.verdict_history`.execute(database.db);
  }
}
