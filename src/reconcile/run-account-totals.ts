import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { operationSql } from './order-facts-sql.ts';
import type { ReconcileScope } from './reconcile-scope.ts';
import { verdictInScope } from './verdicts-in-scope.ts';

/**
 * A run's bridge per processing account and currency, written in the transaction that finishes it: what each
 * account settled through the succeeded transactions its verdicts considered, so that the run reads the same later
 * (a transaction revised afterwards belongs to a later run's figures). Read by reporting.run_account_totals; an order
 * is counted once per account and currency it moved money through. The fees of those transactions beside (migration
 * 0034): the money received, from which reporting.received_to_bridge starts. A run that judged every order of its
 * scope sums the parts its verdict statements wrote, as they read the transactions (verdicts-sql.ts); a run that
 * judged only the changed orders copies its base run's when no transaction was written since, and otherwise reads
 * the whole current set here.
 */
export async function writeRunAccountTotals(
  trx: Kysely<Schema>,
  runId: string,
  scope: ReconcileScope,
  how: {
    /** The run's verdict statements wrote their parts (recon.run_account_parts): summed here, then deleted. */
    readonly fromParts: boolean;
    /** The base run when no transaction was written since it read them: its totals are copied. */
    readonly unchangedSince: string | null;
  },
): Promise<void> {
  const { unchangedSince } = how;
  if (how.fromParts) {
    // Each ORDERID is in one slice: the parts of an account and currency add up. GROUP BY takes nulls as one group.
    await sql`WITH parts AS (DELETE FROM recon.run_account_parts WHERE run_id = ${runId}::bigint RETURNING *)
      INSERT INTO recon.run_account_totals (run_id, identifier, currency, orders, transactions, paid_minor,
        refunded_minor, fees_minor)
      SELECT ${runId}::bigint, identifier, currency, sum(orders), sum(transactions), sum(paid_minor),
        sum(refunded_minor), sum(fees_minor)
      FROM parts GROUP BY identifier, currency`.execute(trx);
    return;
  }
  if (unchangedSince !== null) {
    // Every ORDERID's transactions are those the base run read, and each verdict considers all of its ORDERID's:
    // whatever the orders or notifications changed, the base's totals are this run's, to the unit.
    await sql`INSERT INTO recon.run_account_totals (run_id, identifier, currency, orders, transactions, paid_minor,
        refunded_minor, fees_minor)
      SELECT ${runId}::bigint, identifier, currency, orders, transactions, paid_minor, refunded_minor, fees_minor
      FROM recon.run_account_totals WHERE run_id = ${unchangedSince}::bigint`.execute(trx);
    return;
  }
  // Over a million orders the planner, which cannot count what `= ANY (transaction_ids)` keeps, chose a lookup per
  // transaction and sorts spilled to disk (13 s); joined on the ORDERID by hash and grouped in memory it takes a
  // fraction of that (JIT is off for recon's database: migration 0033). The setting ends with the transaction.
  await sql`SET LOCAL work_mem = '128MB'`.execute(trx);
  // Read, then inserted: PostgreSQL 15 plans an INSERT ... SELECT on one core, and the SELECT alone takes two (1.0 s
  // against 0.5 s over a million orders); what comes back is a row per account and currency.
  const { rows } = await sql<AccountTotal>`SELECT identifier, currency, orders, transactions,
      paid_minor::text AS paid_minor, refunded_minor::text AS refunded_minor, fees_minor::text AS fees_minor
    FROM (${accountTotalsSql(perOrderAccountsSql(sql`recon.verdicts v`, verdictInScope(scope)))}) totals`.execute(trx);
  if (rows.length === 0) return;
  await trx
    .insertInto('recon.run_account_totals')
    .values(rows.map((row) => ({ run_id: runId, ...row })))
    .execute();
}

/**
 * What the succeeded transactions of each ORDERID moved through each account and currency: one row per ORDERID,
 * account and currency, with their count, payments and captures, refunds and fees. `from` is aliased `v` and has
 * `order_id` and `transaction_ids` (the transactions considered); `where` says which of its rows count.
 */
export function perOrderAccountsSql(from: RawBuilder<unknown>, where: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`SELECT ${accountSumsSql()}
    FROM ${from}
    JOIN recon.transactions t ON t.order_id = v.order_id AND t.transaction_id = ANY (v.transaction_ids)
    WHERE ${where} AND t.exec_code = '0000'
    GROUP BY v.order_id, t.identifier, t.currency`;
}

/**
 * The columns of a row per ORDERID, account and currency over transactions `t`, grouped by them: `identifier`,
 * `currency`, `transactions`, `paid` (payments and captures), `refunded`, `fees`. sum_minor keeps a bigint where sum
 * builds a numeric for every row (migration 0012).
 */
export function accountSumsSql(): RawBuilder<unknown> {
  const op = operationSql(sql.ref('t.operation_type'));
  return sql`t.identifier, t.currency, count(*) AS transactions,
      recon.sum_minor(t.amount_minor) FILTER (WHERE ${op} IN ('payment', 'capture')) AS paid,
      recon.sum_minor(t.amount_minor) FILTER (WHERE ${op} = 'refund') AS refunded,
      recon.sum_minor(t.fees_minor) AS fees`;
}

/**
 * The totals per account and currency of rows per ORDERID, account and currency (`identifier`, `currency`,
 * `transactions`, `paid`, `refunded`, `fees`): an order is counted once per account and currency it moved money
 * through. Grouped per order first, then per account: two small hash aggregates cost less than count(DISTINCT
 * order_id), which sorts. Every figure is a bigint: sum_minor adds them without a numeric per row (migration 0012).
 */
export function accountTotalsSql(perOrder: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`SELECT identifier, currency, count(*)::integer AS orders, recon.sum_minor(transactions)::integer AS transactions,
      coalesce(recon.sum_minor(paid), 0) AS paid_minor, coalesce(recon.sum_minor(refunded), 0) AS refunded_minor,
      coalesce(recon.sum_minor(fees), 0) AS fees_minor
    FROM (${perOrder}) per_order
    GROUP BY identifier, currency`;
}

interface AccountTotal {
  identifier: string | null;
  currency: string | null;
  orders: number;
  transactions: number;
  paid_minor: string;
  refunded_minor: string;
  fees_minor: string;
}
