import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { VERDICT_STATUSES, type Schema, type VerdictStatus } from '../db/schema.ts';
import { scopeToJson, type ReconcileScope } from './reconcile-scope.ts';
import { writeVerdictsSql, type WrittenVerdictGroup } from './verdicts-sql.ts';

export interface ReconcileOptions {
  readonly scope: ReconcileScope;
  /** The instant every age is measured at; now when absent. */
  readonly asOf?: Date;
  readonly toleranceMinor: bigint;
  readonly graceHours: number;
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
  readonly asOf: Date;
  readonly scope: ReconcileScope;
  /** Orders and unknown ORDERIDs given a verdict: the sum of `counts`. */
  readonly ordersInScope: number;
  readonly counts: Readonly<Record<VerdictStatus, number>>;
  readonly lifecycle: { readonly new: number; readonly persisting: number; readonly resolved: number };
  readonly totals: readonly CurrencyTotal[];
  readonly notFound: readonly string[];
  readonly suspect: boolean;
  readonly suspectReason: string | null;
}

/** Two runs at once would each read the other's previous verdicts half-written: runs take turns. */
const RECONCILE_LOCK = 0x7265636f6e01;

/**
 * One reconciliation run: every order in scope gets a verdict, in one transaction whose work is one set-based
 * statement (the facts of the whole scope, the verdicts, the bridge; see verdicts-sql.ts), so a run is all there
 * or not at all and no order is ever loaded into Node.
 */
export async function reconcile(database: Database, options: ReconcileOptions): Promise<RunSummary> {
  const asOf = options.asOf ?? new Date();
  return database.db.transaction().execute(async (trx) => {
    // jsonb renders timestamps in the session's zone: the explanations read the same wherever recon runs.
    await sql`SET LOCAL TIME ZONE 'UTC'`.execute(trx);
    // One statement sorts and hashes the whole scope: with the default 4 MB it spills to disk, which doubled a
    // million-order run. The memory is the server's, for this transaction only.
    await sql`SET LOCAL work_mem = '128MB'`.execute(trx);
    // JIT compiling the verdict statement's expressions took LLVM longer (up to 30 s) than running them.
    await sql`SET LOCAL jit = off`.execute(trx);
    await sql`SELECT pg_advisory_xact_lock(${RECONCILE_LOCK}::bigint)`.execute(trx);
    const run = await trx
      .insertInto('recon.reconciliation_runs')
      .values({
        as_of: asOf,
        scope: JSON.stringify(scopeToJson(options.scope)),
        tolerance_minor: options.toleranceMinor.toString(),
        grace_hours: options.graceHours,
      })
      .returning('run_id')
      .executeTakeFirstOrThrow();
    const runId = String(run.run_id);

    const { rows: groups } = await writeVerdictsSql({ ...options, runId, asOf }).execute(trx);
    const { counts, lifecycle, ordersInScope } = countVerdicts(groups);
    const suspectReason = findSuspectReason(groups);
    const totals = bridgeOf(groups);
    if (totals.length > 0) {
      await trx
        .insertInto('recon.run_totals')
        .values(totals.map((total) => ({
          run_id: runId,
          currency: total.currency,
          orders: total.orders,
          unknown_orders: total.unknownOrders,
          expected_minor: total.expectedMinor,
          settled_minor: total.settledMinor,
        })))
        .execute();
    }
    const notFound = options.scope.kind === 'orders' ? await findNotFound(trx, runId, options.scope.orderIds) : [];
    await trx
      .updateTable('recon.reconciliation_runs')
      .set({
        finished_at: sql<Date>`clock_timestamp()`,
        orders_in_scope: ordersInScope,
        counts: JSON.stringify(counts),
        not_found: notFound,
        suspect: suspectReason !== null,
        suspect_reason: suspectReason,
      })
      .where('run_id', '=', runId)
      .execute();
    return {
      runId,
      asOf,
      scope: options.scope,
      ordersInScope,
      counts,
      lifecycle,
      totals,
      notFound,
      suspect: suspectReason !== null,
      suspectReason,
    };
  });
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
  return `${expecting} order${expecting === 1 ? ' in scope expects' : 's in scope expect'} money but no transaction at all was found for the scope: `
    + 'the exports are probably missing (not ingested yet?), so this run proves nothing';
}

async function findNotFound(trx: Kysely<Schema>, runId: string, orderIds: readonly string[]): Promise<string[]> {
  const { rows } = await sql<{ order_id: string }>`SELECT id AS order_id FROM unnest(${[...new Set(orderIds)]}::text[]) AS id
    WHERE NOT EXISTS (SELECT 1 FROM recon.verdicts v WHERE v.order_id = id AND v.run_id = ${runId}::bigint)
    ORDER BY id`.execute(trx);
  return rows.map((row) => row.order_id);
}
