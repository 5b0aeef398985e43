import type { Kysely } from 'kysely';
import type { OrdersTable, Schema } from '../db/schema.ts';
import { COPY_NULL, escapeCopyText } from '../ingest/copy-text.ts';
import type { OrderRow } from './order-row.ts';

/**
 * The per-import staging table of orders: it lives for one transaction (ON COMMIT DROP), so a failed import
 * leaves nothing behind. Accepted and rejected rows share it, in source order, so one COPY stream carries the
 * whole source: a row with a `reject_reason` is a rejected one and only its `raw` text matters.
 * `line` is the csv line, or the row's position in the result of the orders query.
 */
export const ORDER_STAGING_TABLE = 'recon_order_staging';

/** recon_order_staging as Kysely sees it: the values of recon.orders, or a rejected row's reason and text. */
export interface OrderStagingTable {
  line: number;
  order_id: string | null;
  amount_minor: string | null;
  currency: string | null;
  status: OrdersTable['status'] | null;
  refunded_minor: string | null;
  payment_method: OrdersTable['payment_method'] | null;
  created_at: Date | null;
  reject_reason: string | null;
  raw: string | null;
}

/** Kysely on the import's connection, knowing its staging table too. */
export function withOrderStaging(db: Kysely<Schema>): Kysely<Schema & { [ORDER_STAGING_TABLE]: OrderStagingTable }> {
  return db.withTables<{ [ORDER_STAGING_TABLE]: OrderStagingTable }>();
}

/** Same types as recon.orders, so a value that would not fit fails at COPY, before the upsert. */
export async function createOrderStagingTable(db: Kysely<Schema>): Promise<void> {
  await db.schema
    .createTable(ORDER_STAGING_TABLE)
    .temporary()
    .onCommit('drop')
    .addColumn('line', 'integer', (column) => column.notNull())
    .addColumn('order_id', 'text')
    .addColumn('amount_minor', 'bigint')
    .addColumn('currency', 'char(3)')
    .addColumn('status', 'text')
    .addColumn('refunded_minor', 'bigint')
    .addColumn('payment_method', 'text')
    .addColumn('created_at', 'timestamptz')
    .addColumn('reject_reason', 'text')
    .addColumn('raw', 'text')
    .execute();
}

export const ORDER_STAGING_COPY_SQL = `COPY ${ORDER_STAGING_TABLE} (line, order_id, amount_minor, currency, status, refunded_minor, payment_method, created_at, reject_reason, raw) FROM STDIN`;

const REJECTED_NULLS = `\t${COPY_NULL}`.repeat(7);

/** The COPY text line of an accepted order, in the column order of ORDER_STAGING_COPY_SQL. */
export function encodeAcceptedOrder(row: OrderRow, line: number): string {
  // Only order_id is free text; the other values come out of the rules in a form that needs no escaping.
  return `${line}\t${escapeCopyText(row.order_id)}\t${row.amount_minor}\t${row.currency}\t${row.status}\t${row.refunded_minor}\t${row.payment_method}\t${row.created_at}\t${COPY_NULL}\t${COPY_NULL}\n`;
}

/** The COPY text line of a rejected row: its position, the reason and the row as the source wrote it. */
export function encodeRejectedOrder(line: number, raw: string, reason: string): string {
  return `${line}${REJECTED_NULLS}\t${escapeCopyText(reason)}\t${escapeCopyText(raw)}\n`;
}
