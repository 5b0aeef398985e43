import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { ReconError } from '../errors.ts';
import { NOT_EXCEPTIONS, type CurrencyBridge, type OpenException, type RunFacts, type RunReport, type VerdictGroup } from './run-report.ts';

/**
 * The reads behind `recon report`. Each is one set-based statement whose result is bounded by currencies,
 * statuses and days; the open exceptions, which may be most of a million verdicts, come in keyset pages.
 * Amounts are cast to text in SQL so that neither driver turns them into a number on the way.
 */

/** The run named, or the latest finished one. */
export async function loadRunReport(db: Kysely<Schema>, runId?: string): Promise<RunReport> {
  const run = await findRun(db, runId);
  const [bridge, verdictGroups] = await Promise.all([loadBridge(db, run.runId), loadVerdictGroups(db, run.runId)]);
  return { run, bridge, verdictGroups };
}

export async function findRun(db: Kysely<Schema>, runId?: string): Promise<RunFacts> {
  let query = db
    .selectFrom('recon.reconciliation_runs')
    .select([
      sql<string>`run_id::text`.as('run_id'),
      'as_of',
      'scope',
      sql<string>`tolerance_minor::text`.as('tolerance_minor'),
      'grace_hours',
      'started_at',
      'finished_at',
      'orders_in_scope',
      'counts',
      'not_found',
      'suspect',
      'suspect_reason',
    ]);
  // A run is committed whole by reconcile; one without finished_at was cut short and is shown only when named.
  query = runId === undefined
    ? query.where('finished_at', 'is not', null).orderBy('run_id', 'desc').limit(1)
    : query.where('run_id', '=', runId);
  const row = await query.executeTakeFirst();
  if (!row) {
    throw new ReconError(
      'RUN_NOT_FOUND',
      runId === undefined ? 'no reconciliation run yet: run `recon reconcile` first' : `no reconciliation run ${runId}`,
    );
  }
  return {
    runId: row.run_id,
    asOf: row.as_of,
    scope: row.scope,
    toleranceMinor: row.tolerance_minor,
    graceHours: row.grace_hours,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    ordersInScope: row.orders_in_scope,
    counts: row.counts ?? {},
    notFound: row.not_found,
    suspect: row.suspect,
    suspectReason: row.suspect_reason,
  };
}

async function loadBridge(db: Kysely<Schema>, runId: string): Promise<CurrencyBridge[]> {
  const rows = await db
    .selectFrom('recon.run_totals')
    .select([
      'currency',
      'orders',
      'unknown_orders',
      sql<string>`expected_minor::text`.as('expected_minor'),
      sql<string>`settled_minor::text`.as('settled_minor'),
    ])
    .where('run_id', '=', runId)
    .orderBy('currency')
    .execute();
  return rows.map((row) => ({
    currency: row.currency,
    orders: row.orders,
    unknownOrders: row.unknown_orders,
    expectedMinor: row.expected_minor,
    settledMinor: row.settled_minor,
  }));
}

/**
 * One pass over the run's verdicts. An unknown order has no creation date: it is placed on the day of its
 * earliest transaction considered (the only dates it has), so the chart and the totals agree.
 */
async function loadVerdictGroups(db: Kysely<Schema>, runId: string): Promise<VerdictGroup[]> {
  const earliestTransaction = sql<Date | null>`(
    SELECT min(t.occurred_at) FROM recon.transactions t WHERE t.transaction_id = ANY (v.transaction_ids))`;
  const day = sql<string | null>`to_char(coalesce(o.created_at, ${earliestTransaction}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
  const rows = await db
    .selectFrom('recon.verdicts as v')
    .leftJoin('recon.orders as o', (join) => join.onRef('o.order_id', '=', 'v.order_id').on('v.known_order', '=', true))
    .select([day.as('day'), 'v.status', 'v.lifecycle', sql<number>`count(*)::int`.as('verdicts')])
    .where('v.run_id', '=', runId)
    .groupBy([sql`1`, 'v.status', 'v.lifecycle'])
    .orderBy(sql`1`)
    .execute();
  return rows.map((row) => ({ day: row.day, status: row.status, lifecycle: row.lifecycle, verdicts: row.verdicts }));
}

function exceptionsOf(db: Kysely<Schema>, runId: string) {
  return db
    .selectFrom('recon.verdicts')
    .select([
      'order_id',
      'known_order',
      'status',
      'lifecycle',
      sql<string | null>`first_seen_run_id::text`.as('first_seen_run_id'),
      'first_seen_at',
      'currency',
      sql<string>`expected_minor::text`.as('expected_minor'),
      sql<string>`settled_minor::text`.as('settled_minor'),
      sql<string>`delta_minor::text`.as('delta_minor'),
      // The transactions considered, read from their ids as reporting.reconciliation reads them (migration 0009).
      sql<unknown>`explanation || jsonb_build_object('transactions', (
        SELECT coalesce(jsonb_agg(recon.explained_transaction(t, f.name)
            || CASE WHEN t.updated_at > r.started_at THEN '{"changed_after_run": true}'::jsonb ELSE '{}'::jsonb END
          ORDER BY t.occurred_at, t.transaction_id), '[]'::jsonb)
        FROM recon.transactions t LEFT JOIN recon.files f ON f.file_id = t.file_id
        CROSS JOIN recon.reconciliation_runs r
        WHERE t.transaction_id = ANY (recon.verdicts.transaction_ids) AND r.run_id = ${runId}::bigint))`.as('explanation'),
    ])
    .where('run_id', '=', runId)
    .where('status', 'not in', NOT_EXCEPTIONS);
}

type ExceptionRow = Awaited<ReturnType<ReturnType<typeof exceptionsOf>['execute']>>[number];

function toOpenException(row: ExceptionRow): OpenException {
  return {
    orderId: row.order_id,
    knownOrder: row.known_order,
    status: row.status,
    lifecycle: row.lifecycle,
    firstSeenRunId: row.first_seen_run_id,
    firstSeenAt: row.first_seen_at,
    currency: row.currency?.trim() ?? null,
    expectedMinor: row.expected_minor,
    settledMinor: row.settled_minor,
    deltaMinor: row.delta_minor,
    explanation: row.explanation,
  };
}

/**
 * Every open exception of the run by order_id, `pageSize` at a time: each page continues the index of exceptions
 * (run_id, order_id) where the last stopped, so the whole list costs one walk of the run's verdicts and
 * memory holds one page.
 */
export async function* openExceptionPages(
  db: Kysely<Schema>,
  runId: string,
  options: { pageSize?: number; signal?: AbortSignal } = {},
): AsyncGenerator<OpenException[]> {
  const pageSize = options.pageSize ?? 1000;
  let after: string | undefined;
  for (;;) {
    options.signal?.throwIfAborted();
    const rows = await exceptionsOf(db, runId)
      .$if(after !== undefined, (query) => query.where('order_id', '>', after!))
      .orderBy('order_id')
      .limit(pageSize)
      .execute();
    if (rows.length > 0) yield rows.map(toOpenException);
    if (rows.length < pageSize) return;
    after = rows.at(-1)!.order_id;
  }
}

/** The `limit` oldest open exceptions (first seen earliest), for the lists that show only the head. */
export async function oldestOpenExceptions(db: Kysely<Schema>, runId: string, limit: number): Promise<OpenException[]> {
  const rows = await exceptionsOf(db, runId).orderBy('first_seen_at').orderBy('order_id').limit(limit).execute();
  return rows.map(toOpenException);
}
