import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSandbox,
  createSandboxClock,
  instalmentAndWalletAccounts,
  INSTALMENT_ACCOUNT_IDENTIFIER,
  WALLET_ACCOUNT_IDENTIFIER,
  type Sandbox,
} from '@recon/sandbox';
import { startTestReceiver, type TestReceiver } from '../receive/receiver-harness.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * The seeded scenario on two accounts, one per method, each signing its notifications with its own secret, sent to
 * recon's receiver over loopback: a receiver that knows both accounts trusts every one; one that knows only the
 * wallet account keeps the instalment account's as unknown, and trusts the wallet's.
 */
const SEEDED_AT = new Date('2026-11-02T06:00:00Z');
const ACCOUNTS = instalmentAndWalletAccounts({ instalment: 'instalment-secret', wallet: 'wallet-secret' });

describe.each(BACKENDS)('the scenario on two accounts notifies recon, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: TestReceiver;
  let sandbox: Sandbox | undefined;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  /** Seeds the scenario into a sandbox notifying a receiver that knows `known`; returns the rows stored. */
  async function notifyReceiverKnowing(known: typeof ACCOUNTS | [(typeof ACCOUNTS)[1]]) {
    await testDb.database.db.deleteFrom('recon.notifications').execute();
    receiver = await startTestReceiver(testDb.database, { accounts: known });
    try {
      sandbox = createSandbox({
        accounts: ACCOUNTS,
        seed: 5,
        clock: createSandboxClock({ start: SEEDED_AT, ticking: false }),
        notifyUrl: `${receiver.url}/notify`,
        // A notification answered 400 is given up at once: the receiver will never take it.
        notificationRetry: { attempts: 1 },
      });
      await sandbox.notifications.idle();
      const deliveries = sandbox.notifications.deliveries();
      const rows = await testDb.database.db
        .selectFrom('recon.notifications')
        .select(['transaction_id', 'hash_valid', 'invalid_reason', 'params'])
        .execute();
      return { deliveries, rows };
    } finally {
      await sandbox?.close();
      await receiver.close();
    }
  }

  it.skipIf(skip)("trusts each account's notifications, checked with that account's secret", async () => {
    const { deliveries, rows } = await notifyReceiverKnowing(ACCOUNTS);
    const identifiers = new Set(deliveries.map((delivery) => delivery.fields['IDENTIFIER']));
    expect(identifiers).toEqual(new Set([INSTALMENT_ACCOUNT_IDENTIFIER, WALLET_ACCOUNT_IDENTIFIER]));
    expect(deliveries.filter((delivery) => delivery.state !== 'delivered')).toEqual([]);
    expect(rows).toHaveLength(deliveries.length);
    expect(rows.filter((row) => !row.hash_valid)).toEqual([]);
  });

  it.skipIf(skip)("keeps another account's notifications as unknown, refused, and trusts its own", async () => {
    const { deliveries, rows } = await notifyReceiverKnowing([ACCOUNTS[1]]);
    expect(rows).toHaveLength(deliveries.length);
    for (const row of rows) {
      const wallet = row.params['IDENTIFIER'] === WALLET_ACCOUNT_IDENTIFIER;
      expect(row).toMatchObject(
        wallet
          ? { hash_valid: true, invalid_reason: null }
          : { hash_valid: false, invalid_reason: 'unknown_identifier' },
      );
    }
    const refused = deliveries.filter((delivery) => delivery.state === 'failed');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((delivery) => delivery.fields['IDENTIFIER'] === INSTALMENT_ACCOUNT_IDENTIFIER)).toBe(true);
    expect(refused.every((delivery) => delivery.lastError?.startsWith('HTTP 400'))).toBe(true);
  });
});
