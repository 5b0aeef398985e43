import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { operationSql } from './order-facts-sql.ts';
import type { ReconcileScope } from './reconcile-scope.ts';
import { verdictInScope } from './verdicts-in-scope.ts';

/**
 * The money of a run's verdicts that its bridge does not count in the currency it was paid in, written in the
 * transaction that finishes the run, as the transactions stood then: that of currency_mismatch orders (in another
 * currency than the order's: in no bridge), of unknown ORDERIDs (all of it in the currency of their first
 * transaction), and transactions without a CURRENCY (in their order's). reporting.received_to_bridge goes with it
 * from the money received (recon.run_account_totals) to the bridge's settled (recon.run_totals).
 *
 * Cheap whatever the run's size: the first two are read through their own partial index (migration 0043); the third
 * are transactions without a currency, read through theirs (migration 0034). A few rows a run.
 */
export async function writeRunCurrencyMoves(
  trx: Kysely<Schema>,
  runId: string,
  scope: ReconcileScope,
  unchangedSince: string | null,
): Promise<void> {
  if (unchangedSince !== null) {
    // The verdicts and transactions are those the base run left and read: its moves are this run's.
    await sql`INSERT INTO recon.run_currency_moves (run_id, currency, verdict_currency, known_order, orders,
        transactions, paid_minor, refunded_minor)
      SELECT ${runId}::bigint, currency, verdict_currency, known_order, orders, transactions, paid_minor, refunded_minor
      FROM recon.run_currency_moves WHERE run_id = ${unchangedSince}::bigint`.execute(trx);
    return;
  }
  const op = operationSql(sql.ref('t.operation_type'));
  const inScope = verdictInScope(scope);
  await sql`INSERT INTO recon.run_currency_moves (run_id, currency, verdict_currency, known_order, orders,
      transactions, paid_minor, refunded_minor)
    SELECT ${runId}::bigint, currency, verdict_currency, known_order, count(DISTINCT order_id)::integer,
      count(*)::integer, coalesce(sum(amount_minor) FILTER (WHERE op IN ('payment', 'capture')), 0)::bigint,
      coalesce(sum(amount_minor) FILTER (WHERE op = 'refund'), 0)::bigint
    FROM (
      SELECT v.order_id, v.known_order, coalesce(v.currency, 'XXX') AS verdict_currency, t.currency, t.amount_minor,
        ${op} AS op
      FROM recon.verdicts v
      JOIN recon.transactions t ON t.order_id = v.order_id AND t.transaction_id = ANY (v.transaction_ids)
      WHERE ${inScope} AND v.status IN ('currency_mismatch', 'unknown_order') AND t.exec_code = '0000'
        AND t.currency IS DISTINCT FROM coalesce(v.currency, 'XXX')
      UNION ALL
      SELECT v.order_id, v.known_order, coalesce(v.currency, 'XXX'), t.currency, t.amount_minor, ${op}
      FROM recon.transactions t
      JOIN recon.verdicts v ON v.order_id = t.order_id AND t.transaction_id = ANY (v.transaction_ids)
      WHERE t.currency IS NULL AND t.exec_code = '0000' AND ${inScope}
        AND v.status NOT IN ('currency_mismatch', 'unknown_order')
    ) moved
    GROUP BY currency, verdict_currency, known_order`.execute(trx);
}
