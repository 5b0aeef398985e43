import { formatCsv } from '../export/csv-writer.ts';
import { formatMinorUnits } from '../export/format-export-value.ts';
import type { ScenarioOrder } from './scenario-orders.ts';

/** The columns `recon import-orders` reads (README, src/orders/order-csv.ts), in its documented order. */
const ORDER_COLUMNS = ['order_id', 'amount', 'currency', 'status', 'refunded_amount', 'payment_method', 'created_at'];

/**
 * A scenario's orders as a csv that `recon import-orders` loads, the orders left out on purpose not written:
 * `;`-separated with a header, amounts in major units with a dot (exact, by the currency's minor unit), created_at in
 * ISO 8601 UTC to the second.
 */
export function formatOrdersCsv(orders: readonly ScenarioOrder[]): string {
  return formatCsv(
    ORDER_COLUMNS,
    orders
      .flatMap(({ order }) => (order ? [order] : []))
      .map((order) => ({
        order_id: order.orderId,
        amount: formatMinorUnits(order.amount, order.currency),
        currency: order.currency,
        status: order.status,
        refunded_amount: formatMinorUnits(order.refunded, order.currency),
        payment_method: order.paymentMethod,
        created_at: order.createdAt.toISOString().replace(/\.000Z$/, 'Z'),
      })),
  );
}
