import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { consumeUpload } from './consume-upload.ts';
import type { DeliveryUpload } from './delivery-upload.ts';
import { Refusal } from './refusal.ts';

export interface StoreDeliveryOptions {
  readonly maxFileBytes: number;
  readonly now: () => Date;
  /** Called once the token is claimed and before the body is read (a long upload can be logged as it starts). */
  readonly onReceiving?: (ids: { readonly requestId: string; readonly deliveryId: string }) => void;
}

export interface StoredDelivery {
  /** `stored`: new; `repeated`: the same content as the token's delivery, which is left as it was. */
  readonly outcome: 'stored' | 'repeated';
  readonly requestId: string;
  readonly deliveryId: string;
  readonly sha256: string;
  readonly bytes: number;
}

/**
 * Stores the delivery made to `token`: its bytes in chunks, its sha256 and size, and the request marked delivered,
 * in one transaction, so that the delivery exists whole or not at all (an aborted upload leaves nothing). Throws
 * a Refusal for an unknown or expired token, a token whose delivery had other content, a body over the limit or
 * an empty one.
 *
 * The export request's row is locked first: a second delivery on the same token waits for the first to commit or
 * roll back, and then finds it; request_id UNIQUE in recon.deliveries backs this up.
 */
export async function storeDelivery(
  db: Kysely<Schema>,
  token: string,
  upload: DeliveryUpload,
  options: StoreDeliveryOptions,
): Promise<StoredDelivery> {
  const result = await db.transaction().execute(async (trx) => {
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
    // Compared outside the transaction: reading a repeated upload needs no lock.
    if (earlier) return { kind: 'earlier' as const, earlier, requestId };
    // A late export (its request timed out and was asked again) is still the export: taken while its token lives.
    // A request given up or failed takes no delivery any more, whatever its expiry says.
    if (!(request.state === 'requested' || request.state === 'timed_out') || options.now() > request.expires_at) {
      throw new Refusal(404, 'token_expired', 'token expired');
    }

    const deliveryId = await nextDeliveryId(trx);
    options.onReceiving?.({ requestId, deliveryId });
    let seq = 0;
    const digest = await consumeUpload(upload.bytes, options.maxFileBytes, async (data) => {
      await trx.insertInto('recon.delivery_chunks').values({ delivery_id: deliveryId, seq: seq++, data }).execute();
    });
    const receivedAt = options.now();
    const { contentType, filename, fields } = upload.description;
    // The chunks' foreign key is deferred to the commit: the row is written once, with its sha256 and size.
    await trx
      .insertInto('recon.deliveries')
      .values({
        delivery_id: deliveryId,
        request_id: requestId,
        received_at: receivedAt,
        sha256: digest.sha256,
        bytes: digest.bytes,
        content_type: contentType,
        filename,
        fields: JSON.stringify(fields),
      })
      .execute();
    await trx
      .updateTable('recon.export_requests')
      .set({ state: 'delivered', delivered_at: receivedAt })
      .where('request_id', '=', requestId)
      .execute();
    return { kind: 'stored' as const, stored: { outcome: 'stored' as const, requestId, deliveryId, ...digest } };
  });
  if (result.kind === 'stored') return result.stored;

  const { earlier, requestId } = result;
  const digest = await consumeUpload(upload.bytes, options.maxFileBytes);
  if (digest.sha256 !== earlier.sha256) throw new Refusal(404, 'token_used', 'token already used');
  return { outcome: 'repeated', requestId, deliveryId: String(earlier.delivery_id), ...digest };
}

async function nextDeliveryId(trx: Kysely<Schema>): Promise<string> {
  const { rows } = await sql<{ id: string }>`SELECT nextval(pg_get_serial_sequence('recon.deliveries', 'delivery_id'))::text AS id`.execute(trx);
  return rows[0]!.id;
}
