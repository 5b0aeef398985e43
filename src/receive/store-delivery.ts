import { createReadStream } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { Refusal } from './refusal.ts';
import type { SpooledUpload } from './spool-upload.ts';

/** Pieces of about 1 MiB: few rows per file, and little memory on either side of the database. */
const CHUNK_BYTES = 1024 * 1024;
/** A second delivery on a token waits this long at most for the first one's transaction. */
const TOKEN_LOCK_TIMEOUT = '120s';

export interface StoredDelivery {
  /** `stored`: new; `repeated`: the same content as the token's delivery, which is left as it was. */
  readonly outcome: 'stored' | 'repeated';
  readonly requestId: string;
  readonly deliveryId: string;
  readonly sha256: string;
  readonly bytes: number;
}

/**
 * Whether `token` may take a delivery, before its body is read: an unknown token, or one expired with no delivery,
 * is refused at once (404) and its body never spooled. storeDelivery checks again under the token's lock.
 */
export async function checkDeliveryToken(
  db: Kysely<Schema>,
  token: string,
  now: Date,
): Promise<{ readonly requestId: string }> {
  const request = await db
    .selectFrom('recon.export_requests as r')
    .leftJoin('recon.deliveries as d', 'd.request_id', 'r.request_id')
    .select(['r.request_id', 'r.state', 'r.expires_at', 'd.delivery_id'])
    .where('r.token', '=', token)
    .executeTakeFirst();
  if (!request) throw new Refusal(404, 'unknown_token', 'unknown token');
  // A delivery repeated after expiry is still acknowledged (once its content is compared).
  if (request.delivery_id === null && !isOpen(request, now)) throw new Refusal(404, 'token_expired', 'token expired');
  return { requestId: String(request.request_id) };
}

/**
 * Stores the delivery made to `token` from its spooled file: its bytes in chunks, its sha256 and size, and the
 * request marked delivered, in one short transaction, so that the delivery exists whole or not at all. Throws a
 * Refusal for an unknown or expired token, or a token whose delivery had other content.
 *
 * The export request's row is locked first: a second delivery on the same token waits for the first to commit or
 * roll back, and then finds it; request_id UNIQUE in recon.deliveries backs this up.
 */
export async function storeDelivery(
  db: Kysely<Schema>,
  token: string,
  upload: SpooledUpload,
  options: { readonly now: () => Date },
): Promise<StoredDelivery> {
  const digest = { sha256: upload.sha256, bytes: upload.bytes };
  return db.transaction().execute(async (trx) => {
    await sql`SET LOCAL lock_timeout = ${sql.lit(TOKEN_LOCK_TIMEOUT)}`.execute(trx);
    const request = await trx
      .selectFrom('recon.export_requests')
      .select(['request_id', 'state', 'expires_at'])
      .where('token', '=', token)
      .forUpdate()
      .executeTakeFirst();
    if (!request) throw new Refusal(404, 'unknown_token', 'unknown token');
    const requestId = String(request.request_id);
    const earlier = await trx
      .selectFrom('recon.deliveries')
      .select(['delivery_id', 'sha256'])
      .where('request_id', '=', requestId)
      .executeTakeFirst();
    if (earlier) {
      if (earlier.sha256 !== upload.sha256) throw new Refusal(404, 'token_used', 'token already used');
      return { outcome: 'repeated' as const, requestId, deliveryId: String(earlier.delivery_id), ...digest };
    }
    if (!isOpen(request, options.now())) throw new Refusal(404, 'token_expired', 'token expired');

    const receivedAt = options.now();
    // The row first, with its sha256 and size from the spooled file: its id comes back with it, and the chunks follow.
    const { delivery_id: deliveryId } = await trx
      .insertInto('recon.deliveries')
      .values({
        request_id: requestId,
        received_at: receivedAt,
        ...digest,
        content_type: upload.contentType,
        filename: upload.filename,
        fields: JSON.stringify(upload.fields),
      })
      .returning('delivery_id')
      .executeTakeFirstOrThrow();
    let seq = 0;
    // A read stream allocates its whole highWaterMark for every read, whatever the file holds: a buffer of 1 MiB
    // per 10 kB delivery grew the process's external memory so fast that V8 ran a full collection every few of them.
    const readBytes = Math.min(CHUNK_BYTES, upload.bytes);
    for await (const data of createReadStream(upload.path, { highWaterMark: readBytes })) {
      await trx
        .insertInto('recon.delivery_chunks')
        .values({ delivery_id: deliveryId, seq: seq++, data: data as Buffer })
        .execute();
    }
    await trx
      .updateTable('recon.export_requests')
      .set({ state: 'delivered', delivered_at: receivedAt })
      .where('request_id', '=', requestId)
      .execute();
    return { outcome: 'stored' as const, requestId, deliveryId: String(deliveryId), ...digest };
  });
}

/**
 * A late export (its request timed out and was asked again) is still the export: taken while its token lives. A
 * request given up or failed takes no delivery any more, whatever its expiry says.
 */
function isOpen(request: { state: string; expires_at: Date }, now: Date): boolean {
  return (request.state === 'requested' || request.state === 'timed_out') && now <= new Date(request.expires_at);
}
