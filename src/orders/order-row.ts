import type { OrderStatus, PaymentMethod } from '../db/schema.ts';

/** The values recon.orders accepts (its CHECK constraints), in the order docs/orders.md lists them. */
export const ORDER_STATUSES = [
  'paid',
  'authorized',
  'cancelled',
  'refunded',
  'partially_refunded',
] as const satisfies readonly OrderStatus[];
export const PAYMENT_METHODS = ['instalment', 'wallet'] as const satisfies readonly PaymentMethod[];

/** One normalized order, as staged for recon.orders. */
export interface OrderRow {
  /** The service's ORDERID, kept as written. */
  readonly order_id: string;
  readonly amount_minor: bigint;
  /** ISO 4217, upper-case. */
  readonly currency: string;
  readonly status: OrderStatus;
  /** 0 when the source says nothing was refunded; never above amount_minor. */
  readonly refunded_minor: bigint;
  readonly payment_method: PaymentMethod;
  /** ISO 8601 instant in UTC, e.g. '2024-05-01T10:00:00Z' or '2024-05-01T10:00:00.123456Z'. */
  readonly created_at: string;
}
