import { sql, type Kysely, type Transaction } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { ReconError } from '../errors.ts';

/** How a previous attempt ended when the next one finds it still open: no live job holds a delivery twice. */
export const WORKER_DIED = 'its ingest stopped before the end (the worker was killed or ran out of memory)';

export type AttemptStart =
  /** Ingest it now: the attempt is recorded as open. */
  | { readonly kind: 'ingest'; readonly nightlyRunId: string | null }
  /** Nothing to do: ingested, failed or quarantined already. */
  | { readonly kind: 'done'; readonly nightlyRunId: string | null }
  /** Its previous attempts ended the same bad way twice: given up now, its export request failed. */
  | { readonly kind: 'quarantined'; readonly nightlyRunId: string | null; readonly reason: string };

/**
 * Opens an ingest attempt of a delivery, committed before the ingest starts, so that an attempt whose worker dies
 * (out of memory, killed) is found still open by the next one. A delivery whose attempts died twice is quarantined
 * instead of ingested a third time: a file that kills its worker would otherwise kill every worker, forever.
 * Call it from the only job that holds the delivery (the ingest queue runs one job per delivery at a time).
 */
export async function startIngestAttempt(db: Kysely<Schema>, deliveryId: string): Promise<AttemptStart> {
  return db.transaction().execute(async (trx) => {
    const delivery = await lockDelivery(trx, deliveryId);
    const nightlyRunId = delivery.nightly_run_id === null ? null : String(delivery.nightly_run_id);
    if (delivery.state !== 'received') return { kind: 'done', nightlyRunId };
    const lastFailure = delivery.attempt_open ? WORKER_DIED : delivery.failure;
    if (delivery.attempt_open && delivery.failure === WORKER_DIED) {
      const reason = `quarantined after ${delivery.attempts} attempts: ${WORKER_DIED}, twice`;
      await quarantine(trx, deliveryId, String(delivery.request_id), reason);
      return { kind: 'quarantined', nightlyRunId, reason };
    }
    await trx
      .updateTable('recon.deliveries')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), attempt_open: true, failure: lastFailure }))
      .where('delivery_id', '=', deliveryId)
      .execute();
    return { kind: 'ingest', nightlyRunId };
  });
}

/**
 * Closes an attempt that threw. The same failure as the attempt before quarantines the delivery (returns the
 * reason); a new one is recorded for the next attempt to compare with. A transient failure (the database went
 * away) is not the delivery's: the attempt is closed without being held against it.
 */
export async function endFailedAttempt(
  db: Kysely<Schema>,
  deliveryId: string,
  failure: string,
  transient: boolean,
): Promise<string | undefined> {
  return db.transaction().execute(async (trx) => {
    const delivery = await lockDelivery(trx, deliveryId);
    if (delivery.state !== 'received') return undefined;
    if (!transient && delivery.failure === failure) {
      const reason = `quarantined after ${delivery.attempts} attempts failing the same way: ${failure}`;
      await quarantine(trx, deliveryId, String(delivery.request_id), reason);
      return reason;
    }
    await trx
      .updateTable('recon.deliveries')
      .set(transient ? { attempt_open: false } : { attempt_open: false, failure })
      .where('delivery_id', '=', deliveryId)
      .execute();
    return undefined;
  });
}

async function lockDelivery(trx: Transaction<Schema>, deliveryId: string) {
  const delivery = await trx
    .selectFrom('recon.deliveries as d')
    .innerJoin('recon.export_requests as r', 'r.request_id', 'd.request_id')
    .select(['d.state', 'd.request_id', 'd.attempts', 'd.attempt_open', 'd.failure', 'r.nightly_run_id'])
    .where('d.delivery_id', '=', deliveryId)
    .forUpdate('d')
    .executeTakeFirst();
  if (!delivery) throw new ReconError('DELIVERY_NOT_FOUND', `delivery ${deliveryId} does not exist`);
  return delivery;
}

/** Failed for good: no sweep or job takes it again, and its export request fails, so the batch is asked for again. */
async function quarantine(
  trx: Transaction<Schema>,
  deliveryId: string,
  requestId: string,
  reason: string,
): Promise<void> {
  await trx
    .updateTable('recon.deliveries')
    .set({
      state: 'failed',
      attempt_open: false,
      failure: reason,
      quarantined_at: sql<Date>`now()`,
      failed_at: sql<Date>`now()`,
    })
    .where('delivery_id', '=', deliveryId)
    .execute();
  await trx
    .updateTable('recon.export_requests')
    .set({ state: 'failed', failure: `delivery ${deliveryId} ${reason}` })
    .where('request_id', '=', requestId)
    .where('state', '=', 'delivered')
    .execute();
}
