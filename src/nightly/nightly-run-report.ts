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
  let query = db
    .selectFrom('recon.nightly_runs as n')
    .select([
      'n.nightly_run_id', sql<string>`n.run_date::text`.as('run_date'), 'n.state', 'n.as_of', 'n.orders', 'n.batches',
      'n.reconciliation_run_id', 'n.failure', 'n.started_at', 'n.finished_at',
    ])
    .select((eb) => eb
      .selectFrom((counting) => counting
        .selectFrom('recon.export_requests as r')
        .select(['r.state', (count) => count.fn.countAll<number>().as('count')])
        .whereRef('r.nightly_run_id', '=', 'n.nightly_run_id')
        .groupBy('r.state')
        .as('counted'))
      .select(sql<Record<string, number> | string | null>`jsonb_object_agg(counted.state, counted.count)`.as('requests'))
      .as('requests'))
    .orderBy('n.run_date', 'desc')
    .limit(options.limit ?? 100);
  if (options.nightlyRunId !== undefined) query = query.where('n.nightly_run_id', '=', options.nightlyRunId);
  const rows = await query.execute();
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
