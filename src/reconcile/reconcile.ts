import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { VERDICT_STATUSES, type RunKind, type Schema, type VerdictStatus } from '../db/schema.ts';
import { describeRun, scopeToJson, type ReconcileScope, type RunOrigin } from './reconcile-scope.ts';
import { WHOLE_RANGE, type OrderIdRange } from './order-facts-sql.ts';
import { inTurns } from './in-turns.ts';
import { markJudgedAgain } from './judged-again.ts';
import { sliceRanges } from './slice-ranges.ts';
import { currentGroups, planRun, type RunPlan } from './run-plan.ts';
import { RECONCILE_LOCK } from './reconcile-lock.ts';
import { upkeepAfterRun } from './after-run-upkeep.ts';
import { writeRunAccountTotals } from './run-account-totals.ts';
import { writeRunCurrencyMoves } from './run-currency-moves.ts';
import { statusTotalsOf } from './run-status-totals.ts';
import {
  applyStagedChangesSql,
  writeVerdictsSql,
  type VerdictParameters,
  type WrittenVerdictGroup,
} from './verdicts-sql.ts';

export interface ReconcileOptions {
  readonly scope: ReconcileScope;
  /** What started the run (recorded as its kind, with a description of its scope); `manual` when absent. */
  readonly origin?: RunOrigin;
  /** The instant every age is measured at; now when absent. */
  readonly asOf?: Date;
  readonly toleranceMinor: bigint;
  readonly graceHours: number;
  /**
   * How many connections write the verdicts of a large run at the same time (RECON_RECONCILE_CONNECTIONS); 1, or
   * absent, writes every run in one transaction. PGlite has one connection whatever this says.
   */
  readonly connections?: number;
  /**
   * Compute every order's verdict in scope, even where an earlier run over all orders lets a run over all orders
   * look only at what changed since (an operator's edit by hand to recon's tables is a change recon cannot see).
   */
  readonly full?: boolean;
  /** Fewer orders than this per slice and the run is cut into fewer slices, or none (see slice-ranges.ts); lower in tests. */
  readonly minOrdersPerSlice?: number;
}

/** One currency's line of the bridge: money is never added up across currencies. */
export interface CurrencyTotal {
  readonly currency: string;
  readonly orders: number;
  readonly unknownOrders: number;
  /** Minor units, as decimal strings (bigint on the way, never a float). */
  readonly expectedMinor: string;
  readonly settledMinor: string;
}

export interface RunSummary {
  readonly runId: string;
  readonly kind: RunKind;
  /** The scope in words ('nightly run of 2026-11-26: 19,999 orders'), never its ORDERIDs. */
  readonly description: string;
  readonly asOf: Date;
  readonly scope: ReconcileScope;
  /** Orders and unknown ORDERIDs given a verdict: the sum of `counts`. */
  readonly ordersInScope: number;
  readonly counts: Readonly<Record<VerdictStatus, number>>;
  readonly lifecycle: { readonly new: number; readonly persisting: number; readonly resolved: number };
  readonly totals: readonly CurrencyTotal[];
  /** The first NOT_FOUND_KEPT ORDERIDs named that are neither an order nor an ORDERID with transactions. */
  readonly notFound: readonly string[];
  readonly notFoundCount: number;
  readonly suspect: boolean;
  readonly suspectReason: string | null;
  /** Verdicts computed afresh: every order in scope, or only those that changed since the previous run over all orders. */
  readonly verdictsComputed: number;
  /** Verdicts that differed from the current ones and were written (new, changed, or no longer judged). */
  readonly verdictsChanged: number;
}

/** A run keeps this many of its not-found ORDERIDs (and counts them all): a run row never lists a large scope. */
export const NOT_FOUND_KEPT = 100;

/**
 * One reconciliation run: every order in scope gets a verdict, set-based (see verdicts-sql.ts): no order is ever
 * loaded into Node, and the run is all there or not at all.
 *
 * A run over many orders is split into slices of the ORDERID space, written by several connections at the same time
 * (PostgreSQL 15 runs an INSERT ... SELECT on one core whatever the server has), each taking the next slice as it
 * finishes one (see SLICES_PER_CONNECTION). Its run row is committed first,
 * unfinished, and every reader of verdicts ignores an unfinished run's; the run is finished in one last
 * transaction, or removed with its verdicts when a slice fails. A run cut short by a crash is removed by the
 * next one. A run over few orders is one transaction, as its statement is.
 */
export async function reconcile(database: Database, options: ReconcileOptions): Promise<RunSummary> {
  const planned: { plan?: RunPlan } = {};
  const summary = await runReconciliation(database, options, planned);
  // A run that had nothing to compare with only inserted: it left no dead row.
  await upkeepAfterRun(database, summary.verdictsChanged, planned.plan?.compare ?? true);
  return summary;
}

async function runReconciliation(
  database: Database,
  options: ReconcileOptions,
  planned: { plan?: RunPlan },
): Promise<RunSummary> {
  const asOf = options.asOf ?? new Date();
  const connections = options.connections ?? 1;
  const splittable = database.kind === 'postgres' && connections > 1 && options.scope.kind !== 'orders';
  if (!splittable) {
    return database.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${RECONCILE_LOCK}::bigint)`.execute(trx);
      await removeUnfinishedRuns(trx);
      const plan = await planRun(trx, options, asOf);
      planned.plan = plan;
      return runInOneTransaction(trx, options, asOf, plan);
    });
  }
  return database.db.connection().execute(async (coordinator) => {
    await sql`SELECT pg_advisory_lock(${RECONCILE_LOCK}::bigint)`.execute(coordinator);
    try {
      await coordinator.transaction().execute(removeUnfinishedRuns);
      const plan = await planRun(coordinator, options, asOf);
      planned.plan = plan;
      const ranges =
        plan.candidates === null
          ? await sliceRanges(database.db, connections * SLICES_PER_CONNECTION, options.minOrdersPerSlice)
          : [WHOLE_RANGE];
      if (ranges.length === 1) {
        return await coordinator.transaction().execute((trx) => runInOneTransaction(trx, options, asOf, plan));
      }
      const runId = await startRun(coordinator, options, asOf);
      try {
        // Current verdicts to replace: the slices keep their changes apart, applied when the run finishes.
        const parameters = verdictParameters(options, runId, asOf, plan, { staged: plan.compare });
        const groups = await inTurns(ranges, connections, (range) =>
          database.db.transaction().execute((trx) => writeSlice(trx, parameters, range)),
        );
        return await coordinator.transaction().execute(async (trx) => {
          if (parameters.staged) await applyStagedChangesSql(runId).execute(trx);
          return finishRun(trx, runId, options, asOf, plan, groups, groups);
        });
      } catch (error) {
        // Should the removal fail too (the server gone), the next run removes this one: the first error is the story.
        await coordinator
          .transaction()
          .execute((trx) => removeRun(trx, runId))
          .catch(() => undefined);
        throw error;
      }
    } finally {
      // A session lock outlives a failed statement, not the session: a lost connection has released it already.
      await sql`SELECT pg_advisory_unlock(${RECONCILE_LOCK}::bigint)`.execute(coordinator).catch(() => undefined);
    }
  });
}

async function runInOneTransaction(
  trx: Kysely<Schema>,
  options: ReconcileOptions,
  asOf: Date,
  plan: RunPlan,
): Promise<RunSummary> {
  const runId = await startRun(trx, options, asOf);
  const parameters = verdictParameters(options, runId, asOf, plan, { staged: false });
  const written =
    plan.candidates !== null && plan.candidates.length === 0 ? [] : await writeSlice(trx, parameters, WHOLE_RANGE);
  // Only the changed orders were judged: the run's verdicts are the whole current set, as it now stands.
  const groups = plan.candidates === null ? written : await currentGroups(trx, runId);
  return finishRun(trx, runId, options, asOf, plan, written, groups);
}

function verdictParameters(
  options: ReconcileOptions,
  runId: string,
  asOf: Date,
  plan: RunPlan,
  { staged }: { staged: boolean },
): VerdictParameters {
  return {
    staged,
    runId,
    asOf,
    toleranceMinor: options.toleranceMinor,
    graceHours: options.graceHours,
    scope: plan.candidates === null ? options.scope : { kind: 'orders', orderIds: plan.candidates },
    compare: plan.compare,
    accountParts: plan.candidates === null,
  };
}

/**
 * A run is cut into a few slices per connection, not one: slices of as many orders still take unequal times (the
 * slice below another inserts into the middle of the verdicts' order_id index, splitting its pages in halves where
 * the last one appends; a burst of other work on the server slows one connection), and with one slice each the
 * run waits for the slowest while the other connections sit idle.
 */
const SLICES_PER_CONNECTION = 4;

/** The session settings of a verdict statement, for its transaction only, then the statement for one slice. */
async function writeSlice(
  trx: Kysely<Schema>,
  parameters: VerdictParameters,
  range: OrderIdRange,
): Promise<WrittenVerdictGroup[]> {
  // jsonb renders timestamps in the session's zone: the explanations read the same wherever recon runs.
  await sql`SET LOCAL TIME ZONE 'UTC'`.execute(trx);
  // One statement sorts and hashes a whole slice: with the default 4 MB it spills to disk, which doubled a
  // million-order run. The memory is the server's, for this transaction only.
  await sql`SET LOCAL work_mem = '128MB'`.execute(trx);
  // JIT compiling the verdict statement's expressions took LLVM longer (up to 30 s) than running them.
  await sql`SET LOCAL jit = off`.execute(trx);
  const { rows } = await writeVerdictsSql(parameters, range).execute(trx);
  return rows;
}

async function startRun(db: Kysely<Schema>, options: ReconcileOptions, asOf: Date): Promise<string> {
  const origin = originOf(options);
  const scope = scopeToJson(options.scope);
  const run = await db
    .insertInto('recon.reconciliation_runs')
    .values({
      as_of: asOf,
      scope: JSON.stringify(scope),
      kind: origin.kind,
      nightly_run_id: origin.kind === 'nightly' ? origin.nightlyRunId : null,
      description: describeRun(origin, scope),
      tolerance_minor: options.toleranceMinor.toString(),
      grace_hours: options.graceHours,
    })
    .returning('run_id')
    .executeTakeFirstOrThrow();
  const runId = String(run.run_id);
  // A nightly run's ORDERIDs are its export requests' already; any other named scope keeps its own.
  if (options.scope.kind === 'orders' && origin.kind !== 'nightly') {
    await db
      .insertInto('recon.run_scope_orders')
      .columns(['run_id', 'order_id'])
      .expression(sql`SELECT ${runId}::bigint, id FROM unnest(${[...new Set(options.scope.orderIds)]}::text[]) AS id`)
      .execute();
  }
  return runId;
}

function originOf(options: ReconcileOptions): RunOrigin {
  return options.origin ?? { kind: 'manual' };
}

async function finishRun(
  trx: Kysely<Schema>,
  runId: string,
  options: ReconcileOptions,
  asOf: Date,
  plan: RunPlan,
  written: readonly WrittenVerdictGroup[],
  groups: readonly WrittenVerdictGroup[],
): Promise<RunSummary> {
  const judged = groups.filter((group) => group.status !== null);
  const { counts, lifecycle, ordersInScope } = countVerdicts(judged);
  const suspectReason = findSuspectReason(judged);
  const totals = bridgeOf(judged);
  const verdictsComputed = written.reduce((sum, group) => sum + (group.status === null ? 0 : group.verdicts), 0);
  const verdictsChanged = written.reduce((sum, group) => sum + group.changed, 0);
  if (totals.length > 0) {
    await trx
      .insertInto('recon.run_totals')
      .values(
        totals.map((total) => ({
          run_id: runId,
          currency: total.currency,
          orders: total.orders,
          unknown_orders: total.unknownOrders,
          expected_minor: total.expectedMinor,
          settled_minor: total.settledMinor,
        })),
      )
      .execute();
  }
  const statusTotals = statusTotalsOf(judged);
  if (statusTotals.length > 0) {
    await trx
      .insertInto('recon.run_status_totals')
      .values(
        statusTotals.map((total) => ({
          run_id: runId,
          currency: total.currency,
          status: total.status,
          verdicts: total.verdicts,
          orders: total.orders,
          unknown_orders: total.unknownOrders,
          expected_minor: total.expectedMinor,
          settled_minor: total.settledMinor,
          delta_minor: total.deltaMinor,
          at_risk_minor: total.atRiskMinor,
          at_risk_unknown: total.atRiskUnknown,
        })),
      )
      .execute();
  }
  const unchangedSince = await currentSetUnchangedSince(trx, plan, runId, verdictsChanged);
  await writeRunAccountTotals(trx, runId, options.scope, {
    fromParts: plan.candidates === null,
    unchangedSince: plan.transactionsUnchangedSince,
  });
  await writeRunCurrencyMoves(trx, runId, options.scope, unchangedSince);
  await markJudgedAgain(trx, runId, options.scope);
  const notFound =
    options.scope.kind === 'orders' ? await findNotFound(trx, options.scope.orderIds) : { first: [], count: 0 };
  await trx
    .updateTable('recon.reconciliation_runs')
    .set({
      finished_at: sql<Date>`clock_timestamp()`,
      orders_in_scope: ordersInScope,
      counts: JSON.stringify(counts),
      not_found: notFound.first,
      not_found_count: notFound.count,
      suspect: suspectReason !== null,
      suspect_reason: suspectReason,
      inputs_seen_before: plan.inputsSeenBefore,
      verdicts_computed: verdictsComputed,
      verdicts_changed: verdictsChanged,
    })
    .where('run_id', '=', runId)
    .execute();
  const origin = originOf(options);
  return {
    runId,
    kind: origin.kind,
    description: describeRun(origin, scopeToJson(options.scope)),
    asOf,
    scope: options.scope,
    ordersInScope,
    counts,
    lifecycle,
    totals,
    notFound: notFound.first,
    notFoundCount: notFound.count,
    suspect: suspectReason !== null,
    suspectReason,
    verdictsComputed,
    verdictsChanged,
  };
}

/**
 * Runs left unfinished by a process that died with them (the caller holds the lock, so none is still going):
 * their verdicts were never part of anything, and they go. Within the caller's transaction.
 */
async function removeUnfinishedRuns(db: Kysely<Schema>): Promise<void> {
  const unfinished = await db
    .selectFrom('recon.reconciliation_runs')
    .select('run_id')
    .where('finished_at', 'is', null)
    .execute();
  for (const { run_id } of unfinished) await removeRun(db, String(run_id));
}

/** Within the caller's transaction. */
async function removeRun(trx: Kysely<Schema>, runId: string): Promise<void> {
  // What an unfinished run committed: a first run's verdicts, or a run's changes kept apart. It replaced nothing.
  await trx.deleteFrom('recon.verdicts').where('run_id', '=', runId).execute();
  await trx.deleteFrom('recon.run_verdict_changes').where('run_id', '=', runId).execute();
  await trx.deleteFrom('recon.run_totals').where('run_id', '=', runId).execute();
  await trx.deleteFrom('recon.run_status_totals').where('run_id', '=', runId).execute();
  await trx.deleteFrom('recon.run_account_totals').where('run_id', '=', runId).execute();
  await trx.deleteFrom('recon.run_account_parts').where('run_id', '=', runId).execute();
  await trx.deleteFrom('recon.run_currency_moves').where('run_id', '=', runId).execute();
  await trx.deleteFrom('recon.reconciliation_runs').where('run_id', '=', runId).execute();
}

function countVerdicts(groups: readonly WrittenVerdictGroup[]) {
  const counts = Object.fromEntries(VERDICT_STATUSES.map((status) => [status, 0])) as Record<VerdictStatus, number>;
  const lifecycle = { new: 0, persisting: 0, resolved: 0 };
  let ordersInScope = 0;
  for (const group of groups) {
    counts[group.status as VerdictStatus] += group.verdicts;
    if (group.lifecycle) lifecycle[group.lifecycle] += group.verdicts;
    ordersInScope += group.verdicts;
  }
  return { counts, lifecycle, ordersInScope };
}

/**
 * The base run, when the current verdicts are the ones it left and the transactions the ones it read: no candidate,
 * or no transaction written and no verdict changed by this run or by one since the base (a run over named orders).
 * What the base computed from them holds to the unit.
 */
async function currentSetUnchangedSince(
  trx: Kysely<Schema>,
  plan: RunPlan,
  runId: string,
  verdictsChanged: number,
): Promise<string | null> {
  const base = plan.baseRunId;
  if (base === null || plan.candidates === null) return null;
  if (plan.candidates.length > 0 && (plan.transactionsUnchangedSince === null || verdictsChanged > 0)) return null;
  const changedBetween = await trx
    .selectFrom('recon.reconciliation_runs')
    .select('run_id')
    .where('run_id', '>', base)
    .where('run_id', '<', runId)
    .where((eb) => eb.or([eb('verdicts_changed', 'is', null), eb('verdicts_changed', '>', 0)]))
    .limit(1)
    .executeTakeFirst();
  return changedBetween ? null : base;
}

/** The bridge per currency from the groups written; money is added as bigint, currencies never mixed. */
function bridgeOf(groups: readonly WrittenVerdictGroup[]): CurrencyTotal[] {
  const byCurrency = new Map<string, { orders: number; unknownOrders: number; expected: bigint; settled: bigint }>();
  for (const group of groups) {
    const total = byCurrency.get(group.currency) ?? { orders: 0, unknownOrders: 0, expected: 0n, settled: 0n };
    if (group.known_order) total.orders += group.verdicts;
    else total.unknownOrders += group.verdicts;
    total.expected += BigInt(group.expected_minor);
    total.settled += BigInt(group.settled_minor);
    byCurrency.set(group.currency, total);
  }
  return [...byCurrency.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([currency, total]) => ({
      currency,
      orders: total.orders,
      unknownOrders: total.unknownOrders,
      expectedMinor: total.expected.toString(),
      settledMinor: total.settled.toString(),
    }));
}

/**
 * An empty source must never read as reconciled: when orders in scope expect money and not one transaction was
 * found for the whole scope, the exports most likely did not arrive, not the money. Without any transaction, an
 * order that expects money is pending (in its grace period) or missing_at_provider, and any other is matched.
 */
function findSuspectReason(groups: readonly WrittenVerdictGroup[]): string | null {
  const transactions = groups.reduce((sum, group) => sum + group.transactions, 0);
  const expecting = groups
    .filter((group) => group.status === 'pending' || group.status === 'missing_at_provider')
    .reduce((sum, group) => sum + group.verdicts, 0);
  if (expecting === 0 || transactions > 0) return null;
  return (
    `${expecting} order${expecting === 1 ? ' in scope expects' : 's in scope expect'} money but no transaction at all was found for the scope: ` +
    'the exports are probably missing (not ingested yet?), so this run proves nothing'
  );
}

async function findNotFound(
  trx: Kysely<Schema>,
  orderIds: readonly string[],
): Promise<{ first: string[]; count: number }> {
  const { rows } = await sql<{
    order_id: string;
    count: number;
  }>`SELECT id AS order_id, count(*) OVER ()::integer AS count
    FROM unnest(${[...new Set(orderIds)]}::text[]) AS id
    WHERE NOT EXISTS (SELECT 1 FROM recon.verdicts v WHERE v.order_id = id)
    ORDER BY id LIMIT ${NOT_FOUND_KEPT}`.execute(trx);
  return { first: rows.map((row) => row.order_id), count: rows[0]?.count ?? 0 };
}
