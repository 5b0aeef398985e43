import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { verifyHash } from '@recon/protocol';
import { notificationColumns, storableFields } from './notification-row.ts';

export interface RecordedNotification {
  readonly notificationId: string;
  readonly hashValid: boolean;
}

/**
 * What the notification receiver calls for every notification, valid or not: it checks the HASH with the
 * account's secret and stores the notification raw, unknown fields included (and its bytes, when given). One with a bad HASH is stored with
 * hash_valid false (evidence of what arrived) and is never believed by a reconciliation.
 */
export async function recordNotification(
  db: Kysely<Schema>,
  fields: Readonly<Record<string, string>>,
  options: { readonly secret: string; readonly receivedAt?: Date; readonly raw?: Buffer },
): Promise<RecordedNotification> {
  // Checked on the fields as sent: the HASH was computed over them, NUL bytes included.
  const hashValid = verifyHash(options.secret, fields);
  const storable = storableFields(fields);
  const row = await db
    .insertInto('recon.notifications')
    .values({
      ...notificationColumns(storable),
      hash_valid: hashValid,
      params: JSON.stringify(storable),
      raw: options.raw ?? null,
      ...(options.receivedAt ? { received_at: options.receivedAt } : {}),
    })
    .returning('notification_id')
    .executeTakeFirstOrThrow();
  return { notificationId: String(row.notification_id), hashValid };
}
