import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/**
 * The ORDERIDs a nightly run asks the service about: the orders created within the lookback, and every ORDERID
 * whose latest verdict (of a finished reconciliation) is not final (pending, capture_at_risk, any open exception:
 * anything but matched), since those are the ones still moving. Sorted, so the batches of a run are the same
 * whoever computes them.
 */
export async function runOrderIds(db: Kysely<Schema>, asOf: Date, lookbackDays: number): Promise<string[]> {
  const since = new Date(asOf.getTime() - lookbackDays * 86_400_000);
  const latestVerdicts = db
    .selectFrom('recon.verdicts as v')
    .innerJoin('recon.reconciliation_runs as r', (join) => join.onRef('r.run_id', '=', 'v.run_id').on('r.finished_at', 'is not', null))
    .distinctOn('v.order_id')
    .select(['v.order_id', 'v.status'])
    .orderBy('v.order_id')
    .orderBy('v.run_id', 'desc')
    .as('latest');
  const rows = await db
    .selectFrom('recon.orders')
    .select('order_id')
    .where('created_at', '>=', since)
    .where('created_at', '<=', asOf)
    .union(db.selectFrom(latestVerdicts).select('latest.order_id').where('latest.status', '<>', 'matched'))
    .orderBy('order_id')
    .execute();
  return rows.map((row) => row.order_id);
}
