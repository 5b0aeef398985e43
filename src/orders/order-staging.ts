import { COPY_NULL, escapeCopyText } from '../load/copy-text.ts';
import type { OrderRow } from './order-row.ts';

/**
 * The per-import staging table of orders: it lives for one transaction (ON COMMIT DROP), so a failed import
 * leaves nothing behind. Accepted and rejected rows share it, in source order, so one COPY stream carries the
 * whole source: a row with a `reject_reason` is a rejected one and only its `raw` text matters.
 * `line` is the csv line, or the row's position in the result of the orders query.
 */
export const ORDER_STAGING_TABLE = 'recon_order_staging';

/** Same types as recon.orders, so a value that would not fit fails at COPY, before the upsert. */
export const CREATE_ORDER_STAGING_TABLE_SQL = `CREATE TEMP TABLE ${ORDER_STAGING_TABLE} (
  line integer NOT NULL,
  order_id text,
  amount_minor bigint,
  currency char(3),
  status text,
  refunded_minor bigint,
  payment_method text,
  created_at timestamptz,
  reject_reason text,
  raw text
) ON COMMIT DROP`;

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
