import { sql, type Kysely } from 'kysely';
import type { Lifecycle, Schema, VerdictStatus } from '../db/schema.ts';

/**
 * The current verdict of each of a few orders, as an operator reads it after a backfill: from
 * reporting.reconciliation, the one place that assembles a matched verdict's explanation, with what the lag note
 * needs (the order's creation, the transactions recon holds for it). Amounts are strings of minor units.
 */
export interface CurrentVerdict {
  readonly orderId: string;
  readonly knownOrder: boolean;
  readonly status: VerdictStatus;
  readonly lifecycle: Lifecycle | null;
  readonly expectedMinor: string;
  readonly settledMinor: string;
  readonly deltaMinor: string;
  readonly currency: string | null;
  /** The explanation's sentence; null only if a stored explanation lacks one. */
  readonly reason: string | null;
  /** What does not change the status but deserves a look (a payment on the wrong account...); empty when none. */
  readonly warnings: readonly string[];
  /** The run from which the verdict holds: the run that found it (later runs that judged the order found the same). */
  readonly runId: string;
  readonly orderCreatedAt: Date | null;
  readonly transactions: number;
}

/** ORDERIDs without any verdict yet are absent from the result; the others come in no particular order. */
export async function loadCurrentVerdicts(db: Kysely<Schema>, orderIds: readonly string[]): Promise<CurrentVerdict[]> {
  const rows = await db
    .selectFrom('reporting.reconciliation as r')
    .leftJoin('recon.orders as o', 'o.order_id', 'r.order_id')
    .select([
      'r.order_id',
      'r.known_order',
      'r.status',
      'r.lifecycle',
      sql<string>`r.expected_minor::text`.as('expected_minor'),
      sql<string>`r.settled_minor::text`.as('settled_minor'),
      sql<string>`r.delta_minor::text`.as('delta_minor'),
      'r.currency',
      sql<string | null>`r.explanation->>'reason'`.as('reason'),
      sql<string[]>`ARRAY(SELECT jsonb_array_elements_text(coalesce(r.explanation->'warnings', '[]'::jsonb)))`.as(
        'warnings',
      ),
      sql<string>`r.run_id::text`.as('run_id'),
      'o.created_at',
      sql<number>`(SELECT count(*)::integer FROM recon.transactions t WHERE t.order_id = r.order_id)`.as(
        'transactions',
      ),
    ])
    // One array parameter, whatever the number of ids (a list of them would meet the 65,535 parameters limit).
    .where(sql<boolean>`r.order_id = ANY (${[...orderIds]}::text[])`)
    .execute();
  return rows.map((row) => ({
    orderId: row.order_id,
    knownOrder: row.known_order,
    status: row.status,
    lifecycle: row.lifecycle,
    expectedMinor: row.expected_minor,
    settledMinor: row.settled_minor,
    deltaMinor: row.delta_minor,
    currency: row.currency?.trim() ?? null,
    reason: row.reason,
    warnings: row.warnings,
    runId: row.run_id,
    orderCreatedAt: row.created_at,
    transactions: row.transactions,
  }));
}
