import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { operationSql } from './order-facts-sql.ts';
import type { ReconcileScope } from './reconcile-scope.ts';
import { verdictInScope } from './verdicts-in-scope.ts';

/**
 * A run's bridge per processing account and currency, written in the transaction that finishes it: what each
 * account settled through the succeeded transactions its verdicts considered, as they stood when it finished, so
 * that the run reads the same later (a transaction revised afterwards belongs to a later run's figures). Read by
 * reporting.run_account_totals; an order is counted once per account and currency it moved money through.
 */
export async function writeRunAccountTotals(trx: Kysely<Schema>, runId: string, scope: ReconcileScope): Promise<void> {
  const op = operationSql(sql.ref('t.operation_type'));
  // Grouped per order first: two small hash aggregates cost less than count(DISTINCT order_id), which sorts.
  await sql`INSERT INTO recon.run_account_totals (run_id, identifier, currency, orders, transactions, paid_minor,
      refunded_minor)
    SELECT ${runId}::bigint, identifier, currency, count(*)::integer, sum(transactions)::integer,
      coalesce(sum(paid), 0)::bigint, coalesce(sum(refunded), 0)::bigint
    FROM (
      SELECT t.order_id, t.identifier, t.currency, count(*) AS transactions,
        sum(t.amount_minor) FILTER (WHERE ${op} IN ('payment', 'capture')) AS paid,
        sum(t.amount_minor) FILTER (WHERE ${op} = 'refund') AS refunded
      FROM recon.verdicts v
      CROSS JOIN LATERAL unnest(v.transaction_ids) AS considered (transaction_id)
      JOIN recon.transactions t ON t.transaction_id = considered.transaction_id
      WHERE ${verdictInScope(scope)} AND t.exec_code = '0000'
      GROUP BY t.order_id, t.identifier, t.currency
    ) per_order
    GROUP BY identifier, currency`.execute(trx);
}
