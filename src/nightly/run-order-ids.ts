import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/**
 * The ORDERIDs a nightly run asks the service about: the orders created within the lookback, every ORDERID
 * whose current verdict (of a finished reconciliation) is not final (pending, capture_at_risk, any open exception:
 * anything but matched), since those are the ones still moving, and every ORDERID of a notification with a valid
 * HASH received within the lookback that is not an order: the service exports by ORDERID, so money whose order is
 * missing from the merchant's books is found only by asking for its ORDERID, which only its notification gives.
 * Sorted, so the batches of a run are the same whoever computes them.
 */
export async function runOrderIds(db: Kysely<Schema>, asOf: Date, lookbackDays: number): Promise<string[]> {
  const since = new Date(asOf.getTime() - lookbackDays * 86_400_000);
  const rows = await db
    .selectFrom('recon.orders')
    .select('order_id')
    .where('created_at', '>=', since)
    .where('created_at', '<=', asOf)
    .union(db.selectFrom('recon.current_verdicts').select('order_id').where('status', '<>', 'matched'))
    .union(
      db
        .selectFrom('recon.notifications as n')
        .select(sql<string>`n.order_id`.as('order_id'))
        .where('n.hash_valid', '=', true)
        .where('n.order_id', 'is not', null)
        // What a request can carry (checkOrderId): a stranger's field must not fail a whole batch.
        .where(sql<boolean>`char_length(n.order_id) <= 40 AND strpos(n.order_id, ';') = 0`)
        .where('n.received_at', '>=', since)
        .where('n.received_at', '<=', asOf)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb.selectFrom('recon.orders as o').select('o.order_id').whereRef('o.order_id', '=', 'n.order_id'),
            ),
          ),
        ),
    )
    .orderBy('order_id')
    .execute();
  return rows.map((row) => row.order_id);
}
