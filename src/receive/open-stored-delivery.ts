import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { ReconError } from '../errors.ts';
import { deliveryBytesPruned } from '../retention/delivery-bytes-pruned.ts';

export interface StoredDeliveryFile {
  readonly deliveryId: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly contentType: string | null;
  readonly filename: string | null;
  /** The delivered bytes, one chunk in memory at a time; errors with DELIVERY_CORRUPT if they do not hash to `sha256`. */
  readonly content: Readable;
}

/**
 * A stored delivery's file, read back chunk by chunk by any worker that can reach the database. Throws
 * ReconError DELIVERY_NOT_FOUND for an unknown id, and DELIVERY_PRUNED for one whose bytes retention deleted (the
 * stream fails so too when they go while it reads).
 */
export async function openStoredDelivery(db: Kysely<Schema>, deliveryId: string): Promise<StoredDeliveryFile> {
  const delivery = await db
    .selectFrom('recon.deliveries')
    .select(['sha256', 'bytes', 'content_type', 'filename', 'state', 'bytes_pruned_at'])
    .where('delivery_id', '=', deliveryId)
    .executeTakeFirst();
  if (!delivery) throw new ReconError('DELIVERY_NOT_FOUND', `delivery ${deliveryId} does not exist`);
  if (delivery.bytes_pruned_at) throw deliveryBytesPruned(deliveryId, delivery.bytes_pruned_at, delivery.state);
  return {
    deliveryId,
    sha256: delivery.sha256,
    bytes: Number(delivery.bytes),
    contentType: delivery.content_type,
    filename: delivery.filename,
    content: Readable.from(chunks(db, deliveryId, delivery.sha256, Number(delivery.bytes)), { objectMode: false }),
  };
}

async function* chunks(db: Kysely<Schema>, deliveryId: string, sha256: string, bytes: number): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  let read = 0;
  // One query per chunk: a cursor would not work on PGlite, and a chunk is large enough for its query not to matter.
  // Once the delivery's size is read there is nothing more to ask for: a delivery of one chunk is one query.
  for (let seq = 0; read < bytes; seq++) {
    const row = await db
      .selectFrom('recon.delivery_chunks')
      .select('data')
      .where('delivery_id', '=', deliveryId)
      .where('seq', '=', seq)
      .executeTakeFirst();
    if (!row) break;
    const data = Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength);
    hash.update(data);
    read += data.length;
    yield data;
  }
  if (read !== bytes || hash.digest('hex') !== sha256) {
    // Gone while being read: a prune is not corruption.
    const pruned = await db
      .selectFrom('recon.deliveries')
      .select(['state', 'bytes_pruned_at'])
      .where('delivery_id', '=', deliveryId)
      .executeTakeFirst();
    if (pruned?.bytes_pruned_at) throw deliveryBytesPruned(deliveryId, pruned.bytes_pruned_at, pruned.state);
    throw new ReconError(
      'DELIVERY_CORRUPT',
      `delivery ${deliveryId}: stored chunks (${read} bytes) do not match its size (${bytes} bytes) and sha256`,
    );
  }
}
