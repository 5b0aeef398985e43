import type { DeliveryState } from '../db/schema.ts';
import { ReconError } from '../errors.ts';

/**
 * What anything that wants a delivery's bytes after retention deleted them gets: a ReconError DELIVERY_PRUNED in one
 * line, with the day (UTC) they went and the retention that let them go (a failed delivery has its own).
 */
export function deliveryBytesPruned(deliveryId: string, prunedAt: Date, state: DeliveryState): ReconError {
  const day = prunedAt.toISOString().slice(0, 10);
  const retention = state === 'failed' ? 'RECON_FAILED_DELIVERY_RETENTION_DAYS' : 'RECON_DELIVERY_RETENTION_DAYS';
  return new ReconError(
    'DELIVERY_PRUNED',
    `the bytes of delivery ${deliveryId} were pruned on ${day} after ${retention}`,
  );
}
