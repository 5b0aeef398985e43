import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
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
 * Removes what only runs older than the cutoff need. The first run kept is the oldest finished one started at or
 * after the cutoff; a version that held only before it goes (its until_run_id is no later than that run), so every
 * retained run still reports exactly; a current verdict stays whatever its age, and so does its first_seen, which
 * it carries itself. An old run's bridge and named orders go; its row goes too unless a remaining version holds from
 * it (reporting.reconciliation reads its as_of), in which case it is marked pruned. Batches run in turns with
 * reconciliation (its lock), each in its own short transaction.
 */
export async function pruneRuns(db: Kysely<Schema>, options: RunPruneOptions): Promise<RunPruneCounts> {
  const firstKept = await firstKeptRun(db, options.cutoff);
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
          .where('until_run_id', '<=', firstKept)
          .where((eb) => eb.not(keptForAcknowledgement))
          .executeTakeFirst(),
      ),
      runTotals: await count(
        db.selectFrom('recon.run_totals').select(n).where('run_id', 'in', oldRuns()).executeTakeFirst(),
      ),
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
        SELECT ctid FROM recon.verdict_history WHERE until_run_id <= ${firstKept}::bigint
          AND NOT ${keptForAcknowledgement} LIMIT ${versionBatch})`.execute(trx);
    return Number(numAffectedRows ?? 0);
  });
  let runTotals = 0;
  let scopeOrders = 0;
  const runs = await inBatches(options.batchSize, async (trx) => {
    const batch = (await oldRuns(trx).orderBy('run_id').limit(options.batchSize).execute()).map((row) => row.run_id);
    if (batch.length === 0) return 0;
    runTotals += Number(
      (await trx.deleteFrom('recon.run_totals').where('run_id', 'in', batch).executeTakeFirst()).numDeletedRows,
    );
    scopeOrders += Number(
      (await trx.deleteFrom('recon.run_scope_orders').where('run_id', 'in', batch).executeTakeFirst()).numDeletedRows,
    );
    const held = sql<boolean>`(EXISTS (SELECT 1 FROM recon.verdicts v WHERE v.run_id = recon.reconciliation_runs.run_id)
      OR EXISTS (SELECT 1 FROM recon.verdict_history h WHERE h.run_id = recon.reconciliation_runs.run_id))`;
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

/** The oldest finished run started at or after the cutoff, or past the newest run when every run is older. */
async function firstKeptRun(db: Kysely<Schema>, cutoff: Date): Promise<string> {
  const { rows } = await sql<{ run_id: string }>`SELECT coalesce(
      (SELECT min(run_id) FROM recon.reconciliation_runs WHERE finished_at IS NOT NULL AND started_at >= ${cutoff.toISOString()}::timestamptz),
      (SELECT coalesce(max(run_id), 0) + 1 FROM recon.reconciliation_runs))::text AS run_id`.execute(db);
  return rows[0]!.run_id;
}
