import type { Kysely } from 'kysely';
import type { NotificationInvalidReason, Schema } from '../db/schema.ts';
import { checkNotificationHash, type SigningAccount } from './check-notification-hash.ts';
import { notificationColumns, storableFields } from './notification-row.ts';

export interface RecordedNotification {
  readonly notificationId: string;
  readonly hashValid: boolean;
  /** Why it is not trusted; null when its HASH verified with its account's secret. */
  readonly invalidReason: NotificationInvalidReason | null;
}

/**
 * What the notification receiver calls for every notification, valid or not: it checks the HASH with the secret of
 * the account its IDENTIFIER names and stores the notification raw, unknown fields included (and its bytes, when
 * given). One that fails (a HASH that does not match, an IDENTIFIER missing or of no account of the merchant) is
 * stored with hash_valid false and its invalid_reason (evidence of what arrived) and is never believed by a
 * reconciliation.
 */
export async function recordNotification(
  db: Kysely<Schema>,
  fields: Readonly<Record<string, string>>,
  options: { readonly accounts: readonly SigningAccount[]; readonly receivedAt?: Date; readonly raw?: Buffer },
): Promise<RecordedNotification> {
  const invalidReason = checkNotificationHash(options.accounts, fields);
  const storable = storableFields(fields);
  const row = await db
    .insertInto('recon.notifications')
    .values({
      ...notificationColumns(storable),
      hash_valid: invalidReason === null,
      invalid_reason: invalidReason,
      params: JSON.stringify(storable),
      raw: options.raw ?? null,
      ...(options.receivedAt ? { received_at: options.receivedAt } : {}),
    })
    .returning('notification_id')
    .executeTakeFirstOrThrow();
  return { notificationId: String(row.notification_id), hashValid: invalidReason === null, invalidReason };
}
