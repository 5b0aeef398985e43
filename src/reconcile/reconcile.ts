import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { VERDICT_STATUSES, type Schema, type VerdictStatus } from '../db/schema.ts';
import { createOrderFactsSql, ORDER_FACTS_TABLE } from './order-facts-sql.ts';
import { scopeToJson, type ReconcileScope } from './reconcile-scope.ts';
import { insertVerdictsSql } from './verdicts-sql.ts';

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
 * One reconciliation run: every order in scope gets a verdict, in one transaction of set-based statements (the
 * facts of the whole scope, then the verdicts, then the bridge), so a run is all there or not at all and no order
 * is ever loaded into Node.
 */
export async function reconcile(database: Database, options: ReconcileOptions): Promise<RunSummary> {
  const asOf = options.asOf ?? new Date();
  return database.db.transaction().execute(async (trx) => {
    // jsonb renders timestamps in the session's zone: the explanations read the same wherever recon runs.
    await sql`SET LOCAL TIME ZONE 'UTC'`.execute(trx);
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

    await createOrderFactsSql(options.scope).execute(trx);
    await insertVerdictsSql({ runId, asOf, toleranceMinor: options.toleranceMinor, graceHours: options.graceHours }).execute(trx);
    await sql`INSERT INTO recon.latest_verdicts (order_id, run_id)
      SELECT order_id, run_id FROM recon.verdicts WHERE run_id = ${runId}::bigint
      ON CONFLICT (order_id) DO UPDATE SET run_id = excluded.run_id`.execute(trx);
    await sql`INSERT INTO recon.run_totals (run_id, currency, orders, unknown_orders, expected_minor, settled_minor)
      SELECT run_id, coalesce(currency, 'XXX'), count(*) FILTER (WHERE known_order), count(*) FILTER (WHERE NOT known_order),
        sum(expected_minor), sum(settled_minor)
      FROM recon.verdicts WHERE run_id = ${runId}::bigint
      GROUP BY run_id, coalesce(currency, 'XXX')`.execute(trx);

    const { counts, lifecycle, ordersInScope } = await countVerdicts(trx, runId);
    const suspectReason = await findSuspectReason(trx);
    const notFound = options.scope.kind === 'orders' ? await findNotFound(trx, options.scope.orderIds) : [];
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
    const totals = await trx
      .selectFrom('recon.run_totals')
      .select(['currency', 'orders', 'unknown_orders', 'expected_minor', 'settled_minor'])
      .where('run_id', '=', runId)
      .orderBy('currency')
      .execute();
    return {
      runId,
      asOf,
      scope: options.scope,
      ordersInScope,
      counts,
      lifecycle,
      totals: totals.map((row) => ({
        currency: row.currency,
        orders: row.orders,
        unknownOrders: row.unknown_orders,
        expectedMinor: String(row.expected_minor),
        settledMinor: String(row.settled_minor),
      })),
      notFound,
      suspect: suspectReason !== null,
      suspectReason,
    };
  });
}

async function countVerdicts(trx: Transaction<Schema>, runId: string) {
  const rows = await trx
    .selectFrom('recon.verdicts')
    .select(['status', 'lifecycle', sql<number>`count(*)::integer`.as('n')])
    .where('run_id', '=', runId)
    .groupBy(['status', 'lifecycle'])
    .execute();
  const counts = Object.fromEntries(VERDICT_STATUSES.map((status) => [status, 0])) as Record<VerdictStatus, number>;
  const lifecycle = { new: 0, persisting: 0, resolved: 0 };
  let ordersInScope = 0;
  for (const row of rows) {
    counts[row.status] += row.n;
    if (row.lifecycle) lifecycle[row.lifecycle] += row.n;
    ordersInScope += row.n;
  }
  return { counts, lifecycle, ordersInScope };
}

/**
 * An empty source must never read as reconciled: when orders in scope expect money and not one transaction was
 * found for the whole scope, the exports most likely did not arrive, not the money.
 */
async function findSuspectReason(trx: Kysely<Schema>): Promise<string | null> {
  const { rows } = await sql<{ expecting: number; transactions: number }>`SELECT
      count(*) FILTER (WHERE status IN ('paid', 'partially_refunded', 'refunded', 'authorized'))::integer AS expecting,
      coalesce(sum(tx_count), 0)::integer AS transactions
    FROM ${sql.raw(ORDER_FACTS_TABLE)}`.execute(trx);
  const { expecting, transactions } = rows[0]!;
  if (expecting === 0 || transactions > 0) return null;
  return `${expecting} order${expecting === 1 ? ' in scope expects' : 's in scope expect'} money but no transaction at all was found for the scope: `
    + 'the exports are probably missing (not ingested yet?), so this run proves nothing';
}

async function findNotFound(trx: Kysely<Schema>, orderIds: readonly string[]): Promise<string[]> {
  const { rows } = await sql<{ order_id: string }>`SELECT id AS order_id FROM unnest(${[...new Set(orderIds)]}::text[]) AS id
    WHERE NOT EXISTS (SELECT 1 FROM ${sql.raw(ORDER_FACTS_TABLE)} f WHERE f.order_id = id)
    ORDER BY id`.execute(trx);
  return rows.map((row) => row.order_id);
}
