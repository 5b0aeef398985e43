import { sql, type Kysely, type Transaction } from 'kysely';
import type { Schema } from '../db/schema.ts';

/** What deleting delivered bytes freed, or would free in a dry run. */
export interface DeliveriesPruned {
  /** Deliveries whose bytes were deleted. */
  readonly deliveries: number;
  /** Bytes of their stored chunks. */
  readonly bytes: number;
}

/**
 * Which deliveries lose their bytes: `ingested` ones whose file finished loading, and which arrived, before the
 * cutoff (RECON_DELIVERY_RETENTION_DAYS); `failed` ones, quarantined or not, that failed before it
 * (RECON_FAILED_DELIVERY_RETENTION_DAYS).
 */
export type DeliveriesToPrune = 'ingested' | 'failed';

export interface PruneDeliveriesOptions {
  readonly which: DeliveriesToPrune;
  readonly cutoff: Date;
  /** Recorded as each delivery's bytes_pruned_at. */
  readonly now: Date;
  readonly dryRun: boolean;
  /** Deliveries per transaction. */
  readonly batchSize: number;
  /** Checked between batches: what committed stays pruned. */
  readonly signal?: AbortSignal;
  /** After each batch committed, with the totals so far. */
  readonly onBatch?: (soFar: DeliveriesPruned) => void;
}

/**
 * A batch waits at most this long for a lock (a chunk another transaction holds): a prune never queues behind a
 * stuck transaction; it fails, and the next one tries again.
 */
const LOCK_TIMEOUT = '10s';

/**
 * Deletes the stored bytes of deliveries ingested, or failed, before the cutoff, keeping their rows: the delivery
 * (its failure too), its file (name, sha256, size) and the lineage of its transactions stay, and bytes_pruned_at says
 * when the bytes went.
 *
 * Never a delivery still `received`: it is waiting for (or in) its ingest. A failed one is the evidence of what the
 * service sent, kept for its own retention. A duplicate delivery points at the file of an earlier one: it keeps its
 * bytes until it is itself past the retention too (received_at).
 *
 * Each batch is a short transaction of its own: it picks its deliveries FOR NO KEY UPDATE SKIP LOCKED, so a
 * delivery whose row another transaction holds (its ingest recording its outcome) is left for the next prune, and
 * nothing waits on it; NO KEY, so that a file row being inserted with a reference to the delivery does not block it.
 */
export async function pruneDeliveryBytes(
  db: Kysely<Schema>,
  options: PruneDeliveriesOptions,
): Promise<DeliveriesPruned> {
  if (options.dryRun) return countPrunable(db, options.which, options.cutoff);
  let total: DeliveriesPruned = { deliveries: 0, bytes: 0 };
  for (;;) {
    options.signal?.throwIfAborted();
    const batch = await db.transaction().execute((trx) => pruneBatch(trx, options));
    total = { deliveries: total.deliveries + batch.deliveries, bytes: total.bytes + batch.bytes };
    if (batch.deliveries > 0) options.onBatch?.(total);
    // A short batch: nothing else is due, or what is left is locked by someone else.
    if (batch.deliveries < options.batchSize) return total;
  }
}

async function pruneBatch(trx: Transaction<Schema>, options: PruneDeliveriesOptions): Promise<DeliveriesPruned> {
  await sql`SET LOCAL lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(trx);
  const picked = await prunable(trx, options.which, options.cutoff)
    .orderBy(options.which === 'failed' ? 'd.failed_at' : 'd.received_at')
    .orderBy('d.delivery_id')
    .limit(options.batchSize)
    .forNoKeyUpdate('d')
    .skipLocked()
    .execute();
  if (picked.length === 0) return { deliveries: 0, bytes: 0 };
  const ids = picked.map((row) => row.delivery_id);
  // octet_length of a stored chunk reads its size from the TOAST pointer, not its bytes.
  const { bytes } = await trx
    .with('deleted', (qb) =>
      qb
        .deleteFrom('recon.delivery_chunks')
        .where('delivery_id', 'in', ids)
        .returning(sql<number>`octet_length(data)`.as('size')),
    )
    .selectFrom('deleted')
    .select(sql<string>`coalesce(sum(size), 0)::text`.as('bytes'))
    .executeTakeFirstOrThrow();
  await trx
    .updateTable('recon.deliveries')
    .set({ bytes_pruned_at: options.now })
    .where('delivery_id', 'in', ids)
    .execute();
  return { deliveries: ids.length, bytes: Number(bytes) };
}

/** What a prune now would delete, read without a lock. */
async function countPrunable(db: Kysely<Schema>, which: DeliveriesToPrune, cutoff: Date): Promise<DeliveriesPruned> {
  const counted = await db
    .selectFrom(prunable(db, which, cutoff).as('d'))
    .leftJoin('recon.delivery_chunks as c', 'c.delivery_id', 'd.delivery_id')
    .select([
      sql<string>`count(DISTINCT d.delivery_id)::text`.as('deliveries'),
      sql<string>`coalesce(sum(octet_length(c.data)), 0)::text`.as('bytes'),
    ])
    .executeTakeFirstOrThrow();
  return { deliveries: Number(counted.deliveries), bytes: Number(counted.bytes) };
}

/**
 * Deliveries whose bytes are still stored and due: ingested ones that arrived and whose file finished loading before
 * `cutoff`, or failed ones that failed before it. Each read through its partial index (migrations 0020 and 0031).
 */
function prunable(db: Kysely<Schema>, which: DeliveriesToPrune, cutoff: Date) {
  const stored = db.selectFrom('recon.deliveries as d').select('d.delivery_id').where('d.bytes_pruned_at', 'is', null);
  if (which === 'failed') return stored.where('d.state', '=', 'failed').where('d.failed_at', '<', cutoff);
  return stored
    .where('d.state', '=', 'ingested')
    .where('d.received_at', '<', cutoff)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('recon.files as f')
          .select('f.file_id')
          .whereRef('f.file_id', '=', 'd.file_id')
          .where('f.finished_at', '<', cutoff),
      ),
    );
}
