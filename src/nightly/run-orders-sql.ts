import { sql, type RawBuilder } from 'kysely';

/**
 * The ORDERIDs a nightly run asks the service about: the orders created within the lookback, and every ORDERID
 * whose latest verdict is not final (pending, capture_at_risk, any open exception: anything but matched), since
 * those are the ones still moving. Sorted, so the batches of a run are the same whoever computes them.
 */
export function runOrderIdsSql(asOf: Date, lookbackDays: number): RawBuilder<{ order_id: string }> {
  const since = new Date(asOf.getTime() - lookbackDays * 86_400_000).toISOString();
  return sql<{ order_id: string }>`
    SELECT order_id FROM recon.orders WHERE created_at >= ${since}::timestamptz AND created_at <= ${asOf.toISOString()}::timestamptz
    UNION
    SELECT latest.order_id FROM (
      SELECT DISTINCT ON (v.order_id) v.order_id, v.status
      FROM recon.verdicts v JOIN recon.reconciliation_runs r ON r.run_id = v.run_id AND r.finished_at IS NOT NULL
      ORDER BY v.order_id, v.run_id DESC
    ) latest
    WHERE latest.status <> 'matched'
    ORDER BY 1`;
}
