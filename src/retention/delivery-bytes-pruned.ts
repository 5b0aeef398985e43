import { ReconError } from '../errors.ts';

/**
 * What anything that wants a delivery's bytes after retention deleted them gets: a ReconError DELIVERY_PRUNED in one
 * line, with the day (UTC) they went.
 */
export function deliveryBytesPruned(deliveryId: string, prunedAt: Date): ReconError {
  const day = prunedAt.toISOString().slice(0, 10);
  return new ReconError(
    'DELIVERY_PRUNED',
    `the bytes of delivery ${deliveryId} were pruned on ${day} after RECON_DELIVERY_RETENTION_DAYS`,
  );
}
