import { ReconError } from '../errors.ts';
import { createOrderNormalizer, type OrderNormalizeResult, type RawOrder } from './order-normalizer.ts';

/** The columns RECON_ORDERS_QUERY returns, by the field of RawOrder each fills; refunded_minor may be left out. */
const ORDER_QUERY_COLUMNS: { readonly [field in keyof RawOrder]: string } = {
  orderId: 'order_id',
  amount: 'amount_minor',
  currency: 'currency',
  status: 'status',
  refunded: 'refunded_minor',
  paymentMethod: 'payment_method',
  createdAt: 'created_at',
};

const REQUIRED_COLUMNS = Object.values(ORDER_QUERY_COLUMNS).filter((column) => column !== 'refunded_minor');

/** A row of the orders query as the source connection hands it over: every value text, or null for NULL. */
export type OrderQueryRow = Record<string, unknown>;

/**
 * A query that lacks a column would reject every row for the same reason; it is the query that is wrong, so the
 * sync fails (ReconError ORDERS_SOURCE) with the columns it does return. Names match exactly, as PostgreSQL
 * folds unquoted names to lower case.
 */
export function checkQueryColumns(columns: readonly string[], sourceName: string): void {
  const missing = REQUIRED_COLUMNS.filter((column) => !columns.includes(column));
  if (missing.length === 0) return;
  const what = missing.length === 1 ? `column ${missing[0]}` : `columns ${missing.join(', ')}`;
  throw new ReconError(
    'ORDERS_SOURCE',
    `${sourceName}: RECON_ORDERS_QUERY returns no ${what} (it returns: ${columns.join(', ') || 'no column'})`,
  );
}

/** The order rules for a row of the query: amounts in minor units, reasons naming the query's columns. */
export function createQueryRowNormalizer(): (row: OrderQueryRow) => OrderNormalizeResult {
  const normalize = createOrderNormalizer(ORDER_QUERY_COLUMNS, 'minor');
  const text = (row: OrderQueryRow, column: string): string | null => {
    const value = row[column];
    return typeof value === 'string' ? value : null;
  };
  return (row) =>
    normalize({
      orderId: text(row, ORDER_QUERY_COLUMNS.orderId),
      amount: text(row, ORDER_QUERY_COLUMNS.amount),
      currency: text(row, ORDER_QUERY_COLUMNS.currency),
      status: text(row, ORDER_QUERY_COLUMNS.status),
      refunded: text(row, ORDER_QUERY_COLUMNS.refunded),
      paymentMethod: text(row, ORDER_QUERY_COLUMNS.paymentMethod),
      createdAt: text(row, ORDER_QUERY_COLUMNS.createdAt),
    });
}
