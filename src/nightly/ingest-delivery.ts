import { sql } from 'kysely';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import type { IngestLimits } from '../config/config.ts';
import type { Database } from '../db/database.ts';
import { ReconError } from '../errors.ts';
import { spoolDelivery } from '../receive/spool-delivery.ts';

export interface IngestDeliveryOptions {
  readonly timezone: string;
  readonly limits: IngestLimits;
}


/**
 * A stored delivery through the ingest path: its bytes, read back from the database, become a local file (a zip
 * needs random access), which `ingestFiles` loads in one transaction as any export.
 * Run again after a crash at any point, it loads the same rows: identical bytes are recognised by their sha256,
 * and a load that did not commit left nothing behind. Returns the nightly run the delivery answers, if any.
 */
export async function ingestDelivery(database: Database, deliveryId: string, options: IngestDeliveryOptions): Promise<string | null> {
  const delivery = await database.db
    .selectFrom('recon.deliveries as d')
    .innerJoin('recon.export_requests as r', 'r.request_id', 'd.request_id')
    .select(['d.state', 'd.request_id', 'r.nightly_run_id'])
    .where('d.delivery_id', '=', deliveryId)
    .executeTakeFirst();
  if (!delivery) throw new ReconError('DELIVERY_NOT_FOUND', `delivery ${deliveryId} does not exist`);
  const nightlyRunId = delivery.nightly_run_id === null ? null : String(delivery.nightly_run_id);
  if (delivery.state !== 'received') return nightlyRunId;

  const spooled = await spoolDelivery(database.db, deliveryId);
  try {
    const [result] = await ingestFiles(database, [spooled.path], options);
    const failure = result!.status === 'failed' ? result! : undefined;
    // The database failed, not the file: the job is retried (by pg-boss, or the worker's sweep) and loads it then.
    if (failure?.errorCode === 'DATABASE_TRANSIENT') throw new ReconError('DATABASE', `delivery ${deliveryId}: ${failure.error}`);
    await database.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('recon.deliveries')
        .set({ state: failure ? 'failed' : 'ingested', file_id: result!.fileId })
        .where('delivery_id', '=', deliveryId)
        .execute();
      await trx
        .updateTable('recon.export_requests')
        .set(failure ? { state: 'failed', failure: failure.error } : { state: 'ingested', ingested_at: sql<Date>`now()`, failure: null })
        .where('request_id', '=', delivery.request_id)
        .where('state', '=', 'delivered')
        .execute();
    });
    return nightlyRunId;
  } finally {
    await spooled.remove();
  }
}
