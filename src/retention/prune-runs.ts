import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { markJudgedByRunOverAll } from '../reconcile/judged-again.ts';
import { latestRunOverAllSql } from '../reconcile/latest-run-over-all-sql.ts';
import { RECONCILE_LOCK } from '../reconcile/reconcile-lock.ts';

export interface RunPruneOptions {
  /** Runs started before this instant are pruned. */
  readonly cutoff: Date;
  readonly dryRun: boolean;
  /**
   * Runs per transaction, and a hundred times as many verdict versions: each batch is short, and a reconciliation
   * waits at most one batch.
   */
  readonly batchSize: number;
  readonly signal?: AbortSignal;
}

export interface RunPruneCounts {
  /** Runs older than the cutoff whose history was pruned (removed, or kept as a row a current verdict holds from). */
  readonly runs: number;
  readonly verdictVersions: number;
  readonly runTotals: number;
  readonly scopeOrders: number;
}

/**
 * A superseded version an acknowledgement's lapse rests on: one of another status than the acknowledged one, held
 * after the acknowledged version (reporting.exceptions, migration 0023). Pruned, the exception that changed status
 * and came back would read as acknowledged again; people's actions are few, so these versions cost little to keep.
 */
const keptForAcknowledgement = sql<boolean>`(EXISTS (SELECT 1 FROM recon.exception_actions a
  WHERE a.order_id = recon.verdict_history.order_id AND a.action = 'ack'
    AND a.run_id < recon.verdict_history.run_id AND a.status <> recon.verdict_history.status))`;

/**
 * Removes what only runs older than the cutoff need. Which runs those are is decided once, at the start, in one
 * snapshot, from finished runs only: the first run kept is the oldest run that is unfinished or started at or after
 * the cutoff. A run in flight (a sliced run's row is committed before it finishes) and every run after it are kept,
 * with the versions they replaced, however long the prune then waits for its turn; a run that starts later has a
 * higher id. A version that held only before the first kept run goes (its until_run_id is no later than that run,
 * or earlier than it when that run is still in flight), so every retained run still reports exactly; a current
 * verdict stays whatever its age, and so does its first_seen, which it carries itself. An old run's bridge and named
 * orders go; its row goes too unless a remaining version holds from it (reporting.reconciliation reads its as_of), in
 * which case it is marked pruned. Batches run in turns with reconciliation (its lock), each in its own short
 * transaction.
 */
export async function pruneRuns(db: Kysely<Schema>, options: RunPruneOptions): Promise<RunPruneCounts> {
  const { firstKept, lastVersionRun } = await firstKeptRun(db, options.cutoff);
  // Every run below firstKept had finished when it was decided; none can start below it afterwards.
  const oldRuns = (executor: Kysely<Schema> = db) =>
    executor
      .selectFrom('recon.reconciliation_runs')
      .select('run_id')
      .where('run_id', '<', firstKept)
      .where('finished_at', 'is not', null)
      .where('pruned_at', 'is', null);
  if (options.dryRun) {
    const count = async (query: Promise<{ n: number } | undefined>) => (await query)?.n ?? 0;
    const n = sql<number>`count(*)::integer`.as('n');
    return {
      runs: await count(oldRuns().clearSelect().select(n).executeTakeFirst()),
      verdictVersions: await count(
        db
          .selectFrom('recon.verdict_history')
          .select(n)
          .where('until_run_id', '<=', lastVersionRun)
          .where((eb) => eb.not(keptForAcknowledgement))
          .executeTakeFirst(),
      ),
      runTotals:
        (await count(db.selectFrom('recon.run_totals').select(n).where('run_id', 'in', oldRuns()).executeTakeFirst())) +
        (await count(
          db.selectFrom('recon.run_status_totals').select(n).where('run_id', 'in', oldRuns()).executeTakeFirst(),
        )) +
        (await count(
          db.selectFrom('recon.run_account_totals').select(n).where('run_id', 'in', oldRuns()).executeTakeFirst(),
        )) +
        (await count(
          db.selectFrom('recon.run_currency_moves').select(n).where('run_id', 'in', oldRuns()).executeTakeFirst(),
        )),
      scopeOrders: await count(
        db.selectFrom('recon.run_scope_orders').select(n).where('run_id', 'in', oldRuns()).executeTakeFirst(),
      ),
    };
  }
  const inBatches = async (batchSize: number, remove: (trx: Kysely<Schema>) => Promise<number>): Promise<number> => {
    let removed = 0;
    for (;;) {
      options.signal?.throwIfAborted();
      const n = await db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${RECONCILE_LOCK}::bigint)`.execute(trx);
        return remove(trx);
      });
      removed += n;
      if (n < batchSize) return removed;
    }
  };
  const versionBatch = options.batchSize * 100;
  const verdictVersions = await inBatches(versionBatch, async (trx) => {
    const { numAffectedRows } = await sql`DELETE FROM recon.verdict_history WHERE ctid IN (
        SELECT ctid FROM recon.verdict_history WHERE until_run_id <= ${lastVersionRun}::bigint
          AND NOT ${keptForAcknowledgement} LIMIT ${versionBatch})`.execute(trx);
    return Number(numAffectedRows ?? 0);
  });
  let runTotals = 0;
  let scopeOrders = 0;
  const runs = await inBatches(options.batchSize, async (trx) => {
    const batch = (await oldRuns(trx).orderBy('run_id').limit(options.batchSize).execute()).map((row) => row.run_id);
    if (batch.length === 0) return 0;
    for (const table of [
      'recon.run_totals',
      'recon.run_status_totals',
      'recon.run_account_totals',
      'recon.run_currency_moves',
    ] as const) {
      runTotals += Number((await trx.deleteFrom(table).where('run_id', 'in', batch).executeTakeFirst()).numDeletedRows);
    }
    scopeOrders += Number(
      (await trx.deleteFrom('recon.run_scope_orders').where('run_id', 'in', batch).executeTakeFirst()).numDeletedRows,
    );
    const held = sql<boolean>`(EXISTS (SELECT 1 FROM recon.verdicts v WHERE v.run_id = recon.reconciliation_runs.run_id)
      OR EXISTS (SELECT 1 FROM recon.verdict_history h WHERE h.run_id = recon.reconciliation_runs.run_id))`;
    await markWhatTheLastRunOverAllJudged(trx, batch, held);
    await trx
      .updateTable('recon.reconciliation_runs')
      .set({ pruned_at: sql<Date>`now()` })
      .where('run_id', 'in', batch)
      .where(held)
      .execute();
    await trx
      .deleteFrom('recon.reconciliation_runs')
      .where('run_id', 'in', batch)
      .where((eb) => eb.not(held))
      .execute();
    return batch.length;
  });
  return { runs, verdictVersions, runTotals, scopeOrders };
}

/**
 * The latest finished run over all orders stands for the marks it did not write (src/reconcile/judged-again.ts):
 * before its row goes, they are written, so that the verdicts it judged again still read as such. Seldom: only a
 * run that no current or former version holds from goes, and only when no run over all orders came since the cutoff.
 */
async function markWhatTheLastRunOverAllJudged(
  trx: Kysely<Schema>,
  batch: readonly string[],
  held: RawBuilder<boolean>,
): Promise<void> {
  const going = await trx
    .selectFrom('recon.reconciliation_runs')
    .select('run_id')
    .where('run_id', 'in', batch)
    .where('run_id', '=', latestRunOverAllSql())
    .where((eb) => eb.not(held))
    .executeTakeFirst();
  if (going) await markJudgedByRunOverAll(trx, going.run_id);
}

interface PruneBoundary {
  /** Runs below it are old: the oldest run unfinished or started at or after the cutoff, or past the newest run. */
  readonly firstKept: string;
  /**
   * A version whose until_run_id is at most this held only at old runs: firstKept itself when it is a finished run
   * (what it replaced held before it), one below it otherwise (what a run in flight replaced is still current).
   */
  readonly lastVersionRun: string;
}

/** Decided in one statement, so in one snapshot of the runs. */
async function firstKeptRun(db: Kysely<Schema>, cutoff: Date): Promise<PruneBoundary> {
  const { rows } = await sql<{ first_kept: string; finished: boolean }>`SELECT k.run_id::text AS first_kept,
      EXISTS (SELECT 1 FROM recon.reconciliation_runs r WHERE r.run_id = k.run_id AND r.finished_at IS NOT NULL) AS finished
    FROM (SELECT coalesce(
      (SELECT min(run_id) FROM recon.reconciliation_runs
       WHERE finished_at IS NULL OR started_at >= ${cutoff.toISOString()}::timestamptz),
      (SELECT coalesce(max(run_id), 0) + 1 FROM recon.reconciliation_runs)) AS run_id) k`.execute(db);
  const { first_kept: firstKept, finished } = rows[0]!;
  return { firstKept, lastVersionRun: finished ? firstKept : (BigInt(firstKept) - 1n).toString() };
}
