import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeNotification, encodeNotification } from '@recon/protocol';
import { migrate } from '../../src/db/migrate.ts';
import { recordNotification } from '../../src/notifications/record-notification.ts';
import { BACKENDS, createTestDatabaseBefore, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const RECEIPTS_MIGRATION = '0030_notification_receipts.sql';
const ACCOUNT = { identifier: 'SHOP', secret: 'shop-secret' };

function signed(transactionId: string): Record<string, string> {
  return decodeNotification(
    encodeNotification(
      {
        IDENTIFIER: ACCOUNT.identifier,
        OPERATIONTYPE: 'capture',
        TRANSACTIONID: transactionId,
        ORDERID: `O-${transactionId}`,
        EXECCODE: '0000',
        AMOUNT: '1000',
        CURRENCY: 'EUR',
      },
      ACCOUNT.secret,
    ),
  );
}

/**
 * Before notifications were stored once, every copy the service sent again was a row of its own. Migrating folds the
 * copies of each notification into its first row, counted, with its first and last receipt.
 */
describe.each(BACKENDS)('migrating notifications to receipts on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabaseBefore(backend, RECEIPTS_MIGRATION);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)('folds the copies of each notification into its first row and counts them', async () => {
    const { db } = testDb.database;
    const a = signed('TX-A');
    // The same fields written in another order are the same notification.
    const aReordered = Object.fromEntries(Object.entries(a).reverse());
    const b = signed('TX-B');
    const insert = (fields: Record<string, string>, receivedAt: string, valid: boolean) =>
      sql<{ id: string }>`INSERT INTO recon.notifications
          (received_at, transaction_id, hash_valid, invalid_reason, params, raw)
        VALUES (${receivedAt}::timestamptz, ${fields['TRANSACTIONID']}, ${valid},
          ${valid ? null : 'hash_mismatch'}, ${JSON.stringify(fields)}::jsonb, ${Buffer.from(receivedAt)})
        RETURNING notification_id::text AS id`
        .execute(db)
        .then((result) => result.rows[0]!.id);
    const firstA = await insert(a, '2026-11-01T10:00:00Z', true);
    await insert(aReordered, '2026-11-01T10:05:00Z', true);
    await insert(a, '2026-11-02T08:00:00Z', true);
    // The same fields found untrusted (an account changed since) stay a notification of their own.
    const untrustedA = await insert(a, '2026-11-03T08:00:00Z', false);
    const onlyB = await insert(b, '2026-11-01T11:00:00Z', true);

    expect(await migrate(testDb.database)).toContain(RECEIPTS_MIGRATION);

    const rows = await db
      .selectFrom('recon.notifications')
      .select([
        sql<string>`notification_id::text`.as('id'),
        'hash_valid',
        'receipts',
        'received_at',
        'last_received_at',
        'raw',
      ])
      .orderBy('notification_id')
      .execute();
    expect(rows.map(({ raw, ...row }) => ({ ...row, raw: Buffer.from(raw!).toString() }))).toEqual([
      {
        id: firstA,
        hash_valid: true,
        receipts: '3',
        received_at: new Date('2026-11-01T10:00:00Z'),
        last_received_at: new Date('2026-11-02T08:00:00Z'),
        raw: '2026-11-01T10:00:00Z',
      },
      {
        id: untrustedA,
        hash_valid: false,
        receipts: '1',
        received_at: new Date('2026-11-03T08:00:00Z'),
        last_received_at: new Date('2026-11-03T08:00:00Z'),
        raw: '2026-11-03T08:00:00Z',
      },
      {
        id: onlyB,
        hash_valid: true,
        receipts: '1',
        received_at: new Date('2026-11-01T11:00:00Z'),
        last_received_at: new Date('2026-11-01T11:00:00Z'),
        raw: '2026-11-01T11:00:00Z',
      },
    ]);

    // A copy received after the migration finds the folded row: the digest is the one the insert computes.
    const again = await recordNotification(db, a, {
      accounts: [ACCOUNT],
      receivedAt: new Date('2026-11-04T09:00:00Z'),
    });
    expect(again).toEqual({ notificationId: firstA, hashValid: true, invalidReason: null, receipts: 4 });
  });
});
