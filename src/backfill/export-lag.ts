import type { VerdictStatus } from '../db/schema.ts';

/**
 * The service's exports lag behind its operations (service-facts.md: its own SDK's tests export an old transaction
 * "because of ETL delay"), so a payment made moments ago may be absent from the answer to a backfill. An order the
 * service returned nothing for is then not yet evidence of anything: the backfill says so instead of letting
 * `pending` or `missing_at_provider` read as the service's last word.
 *
 * The note applies to an order that is not matched, has no transaction in recon at all, and was created within the
 * grace period, or within the last hour when the grace period is shorter (RECON_GRACE_HOURS=0 makes a fresh order
 * missing_at_provider at once, which is exactly when the lag matters most).
 */
export interface LagFacts {
  readonly status: VerdictStatus;
  /** Transactions recon holds for the ORDERID, whatever their source. */
  readonly transactions: number;
  /** Null for an ORDERID without an order. */
  readonly orderCreatedAt: Date | null;
}

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

export function exportMayLag(facts: LagFacts, asOf: Date, graceHours: number): boolean {
  if (facts.status === 'matched' || facts.transactions > 0 || facts.orderCreatedAt === null) return false;
  return asOf.getTime() - facts.orderCreatedAt.getTime() < Math.max(graceHours, 1) * HOUR_MS;
}

/** One sentence for an order `exportMayLag` holds for. */
export function exportLagNote(orderId: string, orderCreatedAt: Date, asOf: Date): string {
  return (
    `${orderId} was created ${describeAge(asOf.getTime() - orderCreatedAt.getTime())} and the service returned no` +
    ' transaction for it: its export may lag behind very recent operations, so backfill it again later before' +
    ' taking it as missing'
  );
}

function describeAge(ms: number): string {
  if (ms < MINUTE_MS) return 'less than a minute ago';
  if (ms < HOUR_MS) {
    const minutes = Math.floor(ms / MINUTE_MS);
    return `${minutes} minute${minutes === 1 ? '' : 's'} ago`;
  }
  const hours = Math.floor(ms / HOUR_MS);
  return `${hours} hour${hours === 1 ? '' : 's'} ago`;
}
