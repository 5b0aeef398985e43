import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { verifyHash } from '../protocol/hash.ts';
import { notificationColumns } from './notification-row.ts';

export interface RecordedNotification {
  readonly notificationId: string;
  readonly hashValid: boolean;
}

/**
 * What the notification receiver calls for every notification, valid or not: it checks the HASH with the
 * account's secret and stores the notification raw, unknown fields included. One with a bad HASH is stored with
 * hash_valid false (evidence of what arrived) and is never believed by a reconciliation.
 */
export async function recordNotification(
  db: Kysely<Schema>,
  fields: Readonly<Record<string, string>>,
  options: { readonly secret: string; readonly receivedAt?: Date },
): Promise<RecordedNotification> {
  const hashValid = verifyHash(options.secret, fields);
  const row = await db
    .insertInto('recon.notifications')
    .values({
      ...notificationColumns(fields),
      hash_valid: hashValid,
      params: JSON.stringify(fields),
      ...(options.receivedAt ? { received_at: options.receivedAt } : {}),
    })
    .returning('notification_id')
    .executeTakeFirstOrThrow();
  return { notificationId: String(row.notification_id), hashValid };
}
