import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { WHOLE_RANGE, type OrderIdRange } from './order-facts-sql.ts';

/** Below this many orders a slice of its own (a statement planned and started once more) costs more than it saves. */
export const MIN_ORDERS_PER_SLICE = 50_000;

/**
 * Up to `slices` ranges that partition the ORDERID space into parts of about as many orders, cut at the quantiles
 * PostgreSQL's statistics already hold for recon.orders.order_id (free to read, and balance is all they serve:
 * every ORDERID falls in exactly one range whatever the cuts). Without statistics, or for few orders, the whole
 * space is one range.
 */
export async function sliceRanges(
  db: Kysely<Schema>,
  slices: number,
  minOrdersPerSlice = MIN_ORDERS_PER_SLICE,
): Promise<OrderIdRange[]> {
  const { rows } = await sql<{ orders: number; bounds: string[] | null }>`
    SELECT c.reltuples::float8 AS orders,
      (SELECT s.histogram_bounds::text::text[] FROM pg_stats s
       WHERE s.schemaname = 'recon' AND s.tablename = 'orders' AND s.attname = 'order_id') AS bounds
    FROM pg_class c WHERE c.oid = 'recon.orders'::regclass`.execute(db);
  const { orders, bounds } = rows[0] ?? { orders: 0, bounds: null };
  const count = Math.min(slices, Math.floor(orders / minOrdersPerSlice), bounds ? bounds.length - 1 : 1);
  if (count < 2 || !bounds) return [WHOLE_RANGE];
  const cuts = [
    ...new Set(
      Array.from({ length: count - 1 }, (_, i) => bounds[Math.round(((i + 1) * (bounds.length - 1)) / count)]!),
    ),
  ];
  return [null, ...cuts].map((from, i) => ({ from, below: cuts[i] ?? null }));
}
