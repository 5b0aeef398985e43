import { sql, type Kysely } from 'kysely';
import type { NotificationInvalidReason, Schema } from '../db/schema.ts';
import { checkNotificationHash, type SigningAccount } from './check-notification-hash.ts';
import { notificationColumns, storableFields } from './notification-row.ts';

export interface RecordedNotification {
  readonly notificationId: string;
  readonly hashValid: boolean;
  /** Why it is not trusted; null when its HASH verified with its account's secret. */
  readonly invalidReason: NotificationInvalidReason | null;
  /** How many times this notification has been received, this time included: 1 the first time. */
  readonly receipts: number;
}

/**
 * What the notification receiver calls for every notification, valid or not: it checks the HASH with the secret of
 * the account its IDENTIFIER names and stores the notification raw, unknown fields included (and its bytes, when
 * given). One that fails (a HASH that does not match, an IDENTIFIER missing or of no account of the merchant) is
 * stored with hash_valid false and its invalid_reason (evidence of what arrived) and is never believed by a
 * reconciliation.
 *
 * A notification received again (the service's own retry, a replay: the same fields, HASH included) is the row
 * already stored, its receipts counted and its last receipt time moved on; its first bytes are kept. Two copies
 * received at once on two connections meet at the unique key, where the second waits for the first and counts.
 */
export async function recordNotification(
  db: Kysely<Schema>,
  fields: Readonly<Record<string, string>>,
  options: { readonly accounts: readonly SigningAccount[]; readonly receivedAt?: Date; readonly raw?: Buffer },
): Promise<RecordedNotification> {
  const invalidReason = checkNotificationHash(options.accounts, fields);
  const storable = storableFields(fields);
  const params = JSON.stringify(storable);
  const receivedAt = options.receivedAt ?? sql<Date>`now()`;
  const row = await db
    .insertInto('recon.notifications')
    .values({
      ...notificationColumns(storable),
      hash_valid: invalidReason === null,
      invalid_reason: invalidReason,
      params,
      // As migration 0030 computed it for the notifications stored before: jsonb text is the same for the same fields.
      params_digest: sql<Uint8Array>`sha256(convert_to(${params}::jsonb::text, 'UTF8'))`,
      raw: options.raw ?? null,
      received_at: receivedAt,
      last_received_at: receivedAt,
    })
    .onConflict((conflict) =>
      conflict.columns(['params_digest', 'hash_valid']).doUpdateSet({
        receipts: sql<string>`recon.notifications.receipts + 1`,
        received_at: sql<Date>`least(recon.notifications.received_at, excluded.received_at)`,
        last_received_at: sql<Date>`greatest(recon.notifications.last_received_at, excluded.last_received_at)`,
      }),
    )
    .returning(['notification_id', 'receipts'])
    .executeTakeFirstOrThrow();
  return {
    notificationId: String(row.notification_id),
    hashValid: invalidReason === null,
    invalidReason,
    receipts: Number(row.receipts),
  };
}
