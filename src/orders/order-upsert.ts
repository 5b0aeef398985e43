import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { ORDER_STAGING_TABLE, withOrderStaging } from './order-staging.ts';

/** The values of an order that an upsert writes and compares. */
const ORDER_VALUES = ['amount_minor', 'currency', 'status', 'refunded_minor', 'payment_method', 'created_at'] as const;

export interface UpsertedOrderCounts {
  readonly distinct: number;
  readonly inserted: number;
  readonly updated: number;
}

/**
 * Upserts the import's accepted staged orders, in one statement built with Kysely on the import's own connection.
 *
 * The upsert keys on order_id. The last staged row of an order wins (a csv that lists an order twice: its later
 * line; a query that returns it twice: its later row); the earlier ones are superseded. An order whose values
 * all equal the stored ones is left alone, so a re-import writes nothing and its lineage (import_id, line) keeps
 * pointing at the import that last changed it; `xmax = 0` in RETURNING tells an insert from an update.
 * Unlike ingest, orders are always deduplicated first: one sort per import, and the counts stay exact even when
 * a repeated order leaves the stored row unchanged (a case the direct form cannot see).
 * `keepLines`: whether `line` is a csv line worth keeping as lineage
 * (false for a database sync, whose positions mean nothing once the query runs again).
 */
export async function upsertStagedOrders(
  schemaDb: Kysely<Schema>,
  importId: string,
  keepLines: boolean,
): Promise<UpsertedOrderCounts> {
  const db = withOrderStaging(schemaDb);
  const stored = (name: (typeof ORDER_VALUES)[number]) => sql.ref(`recon.orders.${name}`);
  const excluded = (name: (typeof ORDER_VALUES)[number]) => sql.ref(`excluded.${name}`);
  const counts = await db
    .with('latest', (qb) =>
      qb
        .selectFrom(ORDER_STAGING_TABLE)
        .distinctOn('order_id')
        .select(['order_id', ...ORDER_VALUES, 'line'])
        .where('reject_reason', 'is', null)
        .orderBy('order_id')
        .orderBy('line', 'desc'),
    )
    .with('written', (qb) =>
      qb
        .insertInto('recon.orders')
        .columns(['order_id', ...ORDER_VALUES, 'import_id', 'line'])
        .expression(
          qb
            .selectFrom('latest')
            .select([
              'order_id',
              ...ORDER_VALUES,
              sql<string>`${importId}::bigint`.as('import_id'),
              (keepLines ? sql<number | null>`line` : sql<null>`NULL::integer`).as('line'),
            ]),
        )
        .onConflict((conflict) =>
          conflict
            .column('order_id')
            .doUpdateSet((eb) => ({
              amount_minor: eb.ref('excluded.amount_minor'),
              currency: eb.ref('excluded.currency'),
              status: eb.ref('excluded.status'),
              refunded_minor: eb.ref('excluded.refunded_minor'),
              payment_method: eb.ref('excluded.payment_method'),
              created_at: eb.ref('excluded.created_at'),
              import_id: eb.ref('excluded.import_id'),
              line: eb.ref('excluded.line'),
              updated_at: sql`now()`,
            }))
            .where(
              sql<boolean>`(${sql.join(ORDER_VALUES.map(stored))}) IS DISTINCT FROM (${sql.join(ORDER_VALUES.map(excluded))})`,
            ),
        )
        .returning(sql<boolean>`xmax = 0`.as('inserted')),
    )
    .selectFrom('written')
    .select((eb) => [
      eb.selectFrom('latest').select(eb.fn.countAll<string>().as('n')).as('distinct_orders'),
      eb.fn.countAll<string>().filterWhere('inserted', '=', true).as('inserted'),
      eb.fn.countAll<string>().filterWhere('inserted', '=', false).as('updated'),
    ])
    .executeTakeFirstOrThrow();
  return {
    distinct: Number(counts.distinct_orders),
    inserted: Number(counts.inserted),
    updated: Number(counts.updated),
  };
}

/** Moves the staged rejected rows into recon.rejected_order_rows. */
export async function moveRejectedOrderRows(schemaDb: Kysely<Schema>, importId: string): Promise<void> {
  const db = withOrderStaging(schemaDb);
  await db
    .insertInto('recon.rejected_order_rows')
    .columns(['import_id', 'line', 'raw', 'reason'])
    .expression(
      db
        .selectFrom(ORDER_STAGING_TABLE)
        .select([
          sql<string>`${importId}::bigint`.as('import_id'),
          'line',
          sql<string>`raw`.as('raw'),
          sql<string>`reject_reason`.as('reason'),
        ])
        .where('reject_reason', 'is not', null)
        .orderBy('line'),
    )
    .execute();
}
