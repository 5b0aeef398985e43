import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { lifecycleAtSql } from './lifecycle-sql.ts';
import type { ReconcileScope } from './reconcile-scope.ts';
import type { WrittenVerdictGroup } from './verdicts-sql.ts';

/**
 * What a run computes. `candidates` null: every order of its scope. Otherwise, for a run over all orders after
 * another one, only these ORDERIDs: the ones whose order, transactions or notifications changed since that run saw
 * its inputs, and the ones whose verdict asked to be looked at again by now (recheck_at: a lifecycle moving on, a
 * grace period or capture window ending). Every other current verdict is what a full run would compute again.
 */
export interface RunPlan {
  /** Every change to the inputs made before this instant is visible to the run (see inputsWatermark). */
  readonly inputsSeenBefore: Date;
  /** Whether any current verdict exists: a first run only inserts. */
  readonly compare: boolean;
  readonly candidates: string[] | null;
  /** The run this one starts from when `candidates` is set: what it did not judge again holds from there. */
  readonly baseRunId: string | null;
  /**
   * The base run, when no transaction was written since it saw its inputs: every ORDERID's transactions, which its
   * verdict considers whole, are those the base read, and so is what each account settled through them.
   */
  readonly transactionsUnchangedSince: string | null;
}

/**
 * Past this share of the current verdicts (and this many), judging the candidates one by one costs more than one
 * ordered pass over everything: the run computes every order.
 */
const MAX_CANDIDATE_SHARE = 0.25;
const MAX_CANDIDATES_ALWAYS = 10_000;

/** What of a run's options the plan reads. */
interface PlanOptions {
  readonly scope: ReconcileScope;
  readonly full?: boolean;
  readonly toleranceMinor: bigint;
  readonly graceHours: number;
}

/** Within the caller's transaction (or session), holding the reconciliation lock. */
export async function planRun(db: Kysely<Schema>, options: PlanOptions, asOf: Date): Promise<RunPlan> {
  const inputsSeenBefore = await inputsWatermark(db);
  // The planner's estimate of the current verdicts is close enough for a threshold, and costs no scan.
  const { rows } = await sql<{ compare: boolean; estimate: number }>`SELECT
      EXISTS (SELECT 1 FROM recon.verdicts) AS compare,
      greatest((SELECT c.reltuples FROM pg_class c WHERE c.oid = 'recon.verdicts'::regclass), 0)::float8 AS estimate`.execute(
    db,
  );
  const { compare, estimate } = rows[0]!;
  const everyOrder = { inputsSeenBefore, compare, candidates: null, baseRunId: null, transactionsUnchangedSince: null };
  if (options.scope.kind !== 'all' || options.full === true || !compare) return everyOrder;
  const base = await incrementalBase(db, options, asOf);
  if (base === null || (await accountsChangedSince(db, base.inputsSeenBefore))) return everyOrder;
  const candidates = await changedSince(
    db,
    base,
    asOf,
    options,
    Math.max(MAX_CANDIDATES_ALWAYS, Math.ceil(estimate * MAX_CANDIDATE_SHARE)),
  );
  if (candidates === null) return everyOrder;
  const transactionsUnchanged = candidates.length === 0 || !(await transactionsWrittenSince(db, base.inputsSeenBefore));
  return {
    inputsSeenBefore,
    compare,
    candidates,
    baseRunId: base.runId,
    transactionsUnchangedSince: transactionsUnchanged ? base.runId : null,
  };
}

/**
 * The instant before which every change to orders, transactions and notifications is visible to statements that
 * start after this one. Those changes are stamped with their transaction's start (now()), so a transaction still
 * open now, and committing later, stamps them no earlier than its start: the watermark is the earliest start of a
 * transaction open in this database, or now. Read from pg_stat_activity, which shows the sessions of recon's own
 * role (every writer of these tables); on PGlite there are none but this one.
 */
async function inputsWatermark(db: Kysely<Schema>): Promise<Date> {
  const { rows } = await sql<{ watermark: Date }>`SELECT least(statement_timestamp(), (
      SELECT min(a.xact_start) FROM pg_stat_activity a
      WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.xact_start IS NOT NULL
    )) AS watermark`.execute(db);
  return rows[0]!.watermark;
}

interface IncrementalBase {
  readonly runId: string;
  readonly inputsSeenBefore: Date;
}

/**
 * The latest finished run over all orders, when a run now may start from it: same tolerance and grace period (the
 * verdicts depend on them), a watermark, and no finished run measured at a later instant (a run replayed at an
 * earlier --as-of computes everything, since time moved backwards for its verdicts).
 */
async function incrementalBase(db: Kysely<Schema>, options: PlanOptions, asOf: Date): Promise<IncrementalBase | null> {
  const latest = await db
    .selectFrom('recon.reconciliation_runs')
    .select([
      // Not named run_id: ORDER BY would sort the text, where '9' comes after '13'.
      sql<string>`run_id::text`.as('base_run_id'),
      'inputs_seen_before',
      sql<string>`tolerance_minor::text`.as('tolerance_minor'),
      'grace_hours',
      'pruned_at',
    ])
    .where('finished_at', 'is not', null)
    .where(sql<string>`scope ->> 'kind'`, '=', 'all')
    .orderBy('run_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (
    !latest ||
    latest.inputs_seen_before === null ||
    // Retention removed its totals, which a run starting from it copies or adds to.
    latest.pruned_at !== null ||
    latest.tolerance_minor !== options.toleranceMinor.toString() ||
    latest.grace_hours !== options.graceHours
  ) {
    return null;
  }
  const later = await db
    .selectFrom('recon.reconciliation_runs')
    .select('run_id')
    .where('finished_at', 'is not', null)
    .where('as_of', '>', asOf)
    .limit(1)
    .executeTakeFirst();
  return later ? null : { runId: latest.base_run_id, inputsSeenBefore: latest.inputs_seen_before };
}

/** Whether the accounts changed (recon.accounts) since `since`: their methods bear on every order's warnings. */
async function accountsChangedSince(db: Kysely<Schema>, since: Date): Promise<boolean> {
  const changed = await db
    .selectFrom('recon.accounts')
    .select('identifier')
    .where('changed_at', '>=', since)
    .limit(1)
    .executeTakeFirst();
  return changed !== undefined;
}

/**
 * Whether any transaction was written (inserted or revised) since `since`, found through the loads that wrote them,
 * as changedSince finds them: whatever its ORDERID, so that one whose ORDERID was revised away counts too.
 */
async function transactionsWrittenSince(db: Kysely<Schema>, since: Date): Promise<boolean> {
  const { rows } = await sql<{ written: boolean }>`SELECT EXISTS (
      SELECT 1 FROM recon.transactions t WHERE ${transactionWrittenSinceSql(sql`${since.toISOString()}::timestamptz`)}
    ) AS written`.execute(db);
  return rows[0]!.written;
}

/**
 * A row written since `since` by a load that finished since, or has not finished (its lineage: the file of a
 * transaction, the import of an order). The planner cannot know how few rows were written after the last ANALYZE and
 * scans every row for them: the uncorrelated EXISTS runs first, once, and skips that scan when no load finished since
 * (a re-run, a quiet night).
 */
function writtenSinceSql(
  row: { readonly lineage: RawBuilder<unknown>; readonly updatedAt: RawBuilder<unknown> },
  load: { readonly table: RawBuilder<unknown>; readonly id: RawBuilder<unknown> },
  since: RawBuilder<unknown>,
): RawBuilder<boolean> {
  const loads = sql`FROM ${load.table} l WHERE coalesce(l.finished_at, 'infinity') >= ${since}`;
  return sql<boolean>`EXISTS (SELECT 1 ${loads}) AND ${row.lineage} IN (SELECT ${load.id} ${loads})
    AND ${row.updatedAt} >= ${since}`;
}

/** A transaction row `t` written since `since`, through the file that wrote it. */
function transactionWrittenSinceSql(since: RawBuilder<unknown>): RawBuilder<boolean> {
  return writtenSinceSql(
    { lineage: sql.ref('t.file_id'), updatedAt: sql.ref('t.updated_at') },
    { table: sql.table('recon.files'), id: sql.ref('l.file_id') },
    since,
  );
}

/**
 * The ORDERIDs to judge again, or null when there are more than `limit`. A changed transaction or order carries the
 * file or import that changed it (its lineage) and that load's start (updated_at): the loads finished since the
 * watermark lead to the rows, through their indexes, without reading the others. Verdicts written since the base by
 * a run with other settings are judged again too.
 */
async function changedSince(
  db: Kysely<Schema>,
  base: IncrementalBase,
  asOf: Date,
  options: PlanOptions,
  limit: number,
): Promise<string[] | null> {
  const since = sql`${base.inputsSeenBefore.toISOString()}::timestamptz`;
  const { rows } = await sql<{ order_id: string }>`
    SELECT t.order_id FROM recon.transactions t WHERE ${transactionWrittenSinceSql(since)} AND t.order_id IS NOT NULL
    UNION
    SELECT o.order_id FROM recon.orders o
    WHERE ${writtenSinceSql(
      { lineage: sql.ref('o.import_id'), updatedAt: sql.ref('o.updated_at') },
      { table: sql.table('recon.order_imports'), id: sql.ref('l.import_id') },
      since,
    )}
    UNION
    SELECT t.order_id FROM recon.notifications n JOIN recon.transactions t ON t.transaction_id = n.transaction_id
    WHERE n.received_at >= ${since} AND t.order_id IS NOT NULL
    UNION
    SELECT v.order_id FROM recon.verdicts v WHERE v.recheck_at <= ${asOf.toISOString()}::timestamptz
    UNION
    SELECT v.order_id FROM recon.verdicts v
    WHERE v.run_id IN (SELECT r.run_id FROM recon.reconciliation_runs r
                       WHERE r.run_id > ${base.runId}::bigint
                         AND (r.tolerance_minor <> ${options.toleranceMinor.toString()}::bigint OR r.grace_hours <> ${options.graceHours}))
    LIMIT ${limit + 1}`.execute(db);
  return rows.length > limit ? null : rows.map((row) => row.order_id);
}

/**
 * The groups of every current verdict, lifecycles as of run `runId`: a run over all orders that computed only
 * what changed judged all of them.
 */
export async function currentGroups(db: Kysely<Schema>, runId: string): Promise<WrittenVerdictGroup[]> {
  const { rows } =
    await sql<WrittenVerdictGroup>`SELECT status, ${lifecycleAtSql('v', sql`${runId}::bigint`)} AS lifecycle,
      coalesce(currency, 'XXX') AS currency, known_order, count(*)::integer AS verdicts,
      sum(cardinality(transaction_ids))::integer AS transactions, sum(expected_minor)::text AS expected_minor,
      sum(settled_minor)::text AS settled_minor, sum(delta_minor)::text AS delta_minor,
      coalesce(sum(at_risk_minor), 0)::text AS at_risk_minor,
      count(*) FILTER (WHERE at_risk_minor IS NULL)::integer AS at_risk_unknown, 0 AS changed
    FROM recon.verdicts v
    GROUP BY 1, 2, 3, 4`.execute(db);
  return rows;
}
