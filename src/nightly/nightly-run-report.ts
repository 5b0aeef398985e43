import { sql, type Kysely } from 'kysely';
import type { NightlyRunState, Schema } from '../db/schema.ts';

export interface NightlyRunReport {
  readonly nightlyRunId: string;
  readonly runDate: string;
  readonly state: NightlyRunState;
  readonly asOf: string;
  readonly orders: number | null;
  readonly batches: number | null;
  /** Requests by state: requested, delivered, ingested, failed, timed_out, given_up. */
  readonly requests: Readonly<Record<string, number>>;
  readonly reconciliationRunId: string | null;
  readonly failure: string | null;
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

/** Nightly runs, newest first, with their export requests counted by state (`recon runs`, `recon nightly`). */
export async function listNightlyRuns(db: Kysely<Schema>, options: { nightlyRunId?: string; limit?: number } = {}): Promise<NightlyRunReport[]> {
  const { rows } = await sql<{
    nightly_run_id: string; run_date: string; state: NightlyRunState; as_of: Date; orders: number | null; batches: number | null;
    reconciliation_run_id: string | null; failure: string | null; started_at: Date; finished_at: Date | null; requests: Record<string, number> | string | null;
  }>`SELECT n.nightly_run_id, n.run_date::text AS run_date, n.state, n.as_of, n.orders, n.batches, n.reconciliation_run_id,
      n.failure, n.started_at, n.finished_at,
      (SELECT jsonb_object_agg(state, count) FROM (
         SELECT r.state, count(*)::integer AS count FROM recon.export_requests r WHERE r.nightly_run_id = n.nightly_run_id GROUP BY r.state
       ) counted) AS requests
    FROM recon.nightly_runs n
    WHERE ${options.nightlyRunId === undefined ? sql`true` : sql`n.nightly_run_id = ${options.nightlyRunId}::bigint`}
    ORDER BY n.run_date DESC
    LIMIT ${options.limit ?? 100}`.execute(db);
  return rows.map((row) => ({
    nightlyRunId: String(row.nightly_run_id),
    runDate: row.run_date,
    state: row.state,
    asOf: new Date(row.as_of).toISOString(),
    orders: row.orders,
    batches: row.batches,
    requests: (typeof row.requests === 'string' ? JSON.parse(row.requests) : row.requests) ?? {},
    reconciliationRunId: row.reconciliation_run_id === null ? null : String(row.reconciliation_run_id),
    failure: row.failure,
    startedAt: new Date(row.started_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
  }));
}

/** One line per run, for a terminal. */
export function formatNightlyRun(run: NightlyRunReport): string {
  const requests = Object.entries(run.requests).map(([state, count]) => `${count} ${state}`).join(', ') || 'none';
  const reconciliation = run.reconciliationRunId ? `, reconciliation run ${run.reconciliationRunId}` : '';
  const failure = run.failure ? ` (${run.failure})` : '';
  return `${run.runDate}  run ${run.nightlyRunId}  ${run.state}${failure}  orders ${run.orders ?? '-'} in ${run.batches ?? '-'} batch(es); requests: ${requests}${reconciliation}`;
}
