/**
 * The words of a reconciliation the scenario's oracle speaks, as recon's reconcile defines them (recon's test suite
 * checks that the two lists agree): the merchant's order statuses, payment methods, verdict statuses and run scopes.
 */
export type OrderStatus = 'paid' | 'authorized' | 'cancelled' | 'refunded' | 'partially_refunded';
export type PaymentMethod = 'instalment' | 'wallet';
export const VERDICT_STATUSES = [
  'currency_mismatch',
  'notification_conflict',
  'duplicate_payment',
  'over_refunded',
  'status_mismatch',
  'amount_mismatch',
  'approval_expired',
  'capture_expired',
  'capture_at_risk',
  'pending',
  'missing_at_provider',
  'matched',
  'unknown_order',
] as const;
export type VerdictStatus = (typeof VERDICT_STATUSES)[number];

/** The orders a run judges: all (with unknown ORDERIDs), those named (with unknown ones among them), or by creation. */
export type RunScope =
  | { readonly kind: 'all' }
  | { readonly kind: 'orders'; readonly orderIds: readonly string[] }
  | { readonly kind: 'created_since'; readonly since: Date };
