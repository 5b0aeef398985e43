import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeNotification } from '@recon/protocol';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { send, startTestReceiver, type TestReceiver } from './receiver-harness.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const INSTALMENT = { identifier: 'SHOP-INSTALMENT', secret: 'instalment-account-secret' };
const WALLET = { identifier: 'SHOP-WALLET', secret: 'wallet-account-secret' };

function notification(identifier: string | undefined, transactionId: string): Record<string, string> {
  return {
    ...(identifier === undefined ? {} : { IDENTIFIER: identifier }),
    OPERATIONTYPE: 'payment',
    TRANSACTIONID: transactionId,
    ORDERID: `ORDER-${transactionId}`,
    EXECCODE: '0000',
    AMOUNT: '4990',
    CURRENCY: 'EUR',
    VERSION: '3.0',
  };
}

/** A merchant with two accounts: each notification is checked with the secret of the account its IDENTIFIER names. */
describe.each(BACKENDS)('notifications of several accounts on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: TestReceiver;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    receiver = await startTestReceiver(testDb.database, { accounts: [INSTALMENT, WALLET] });
  });
  afterAll(async () => {
    await receiver?.close();
    await testDb?.drop();
  });

  const post = (body: string) => send(`${receiver.url}/notify`, { headers: FORM, body });

  async function stored(transactionId: string) {
    return testDb.database.db
      .selectFrom('recon.notifications')
      .select(['hash_valid', 'invalid_reason', 'params', 'raw'])
      .where('transaction_id', '=', transactionId)
      .execute();
  }

  it.skipIf(skip)("verifies each account's notification with that account's own secret", async () => {
    expect(await post(encodeNotification(notification(INSTALMENT.identifier, 'TX-I'), INSTALMENT.secret))).toEqual(
      expect.objectContaining({ status: 200, text: 'OK' }),
    );
    expect(await post(encodeNotification(notification(WALLET.identifier, 'TX-W'), WALLET.secret))).toEqual(
      expect.objectContaining({ status: 200, text: 'OK' }),
    );
    for (const id of ['TX-I', 'TX-W']) {
      expect(await stored(id)).toEqual([expect.objectContaining({ hash_valid: true, invalid_reason: null })]);
    }
  });

  it.skipIf(skip)("refuses one signed with the other account's secret, and keeps it as a wrong HASH", async () => {
    const crossed = encodeNotification(notification(WALLET.identifier, 'TX-CROSSED'), INSTALMENT.secret);
    expect(await post(crossed)).toMatchObject({
      status: 400,
      text: 'HASH does not match (notification kept, not trusted)',
    });
    const [row] = await stored('TX-CROSSED');
    expect(row).toMatchObject({ hash_valid: false, invalid_reason: 'hash_mismatch' });
    expect(Buffer.from(row!.raw!).toString('latin1')).toBe(crossed);
  });

  it.skipIf(skip)('refuses an unknown or missing IDENTIFIER with 400, and keeps it raw with why', async () => {
    // Signed with a secret recon holds: the IDENTIFIER decides which secret checks it, never any secret that fits.
    const unknown = encodeNotification(notification('SOMEONE-ELSE', 'TX-UNKNOWN'), WALLET.secret);
    expect(await post(unknown)).toMatchObject({
      status: 400,
      text: "IDENTIFIER names none of the merchant's accounts (notification kept, not trusted)",
    });
    const missing = encodeNotification(notification(undefined, 'TX-MISSING'), WALLET.secret);
    expect(await post(missing)).toMatchObject({
      status: 400,
      text: 'IDENTIFIER is missing (notification kept, not trusted)',
    });
    const [unknownRow] = await stored('TX-UNKNOWN');
    expect(unknownRow).toMatchObject({
      hash_valid: false,
      invalid_reason: 'unknown_identifier',
      params: expect.objectContaining({ IDENTIFIER: 'SOMEONE-ELSE' }),
    });
    expect(Buffer.from(unknownRow!.raw!).toString('latin1')).toBe(unknown);
    expect(await stored('TX-MISSING')).toEqual([
      expect.objectContaining({ hash_valid: false, invalid_reason: 'missing_identifier' }),
    ]);
  });

  it.skipIf(skip)('tells the reasons apart in its events and metrics, and names no secret', async () => {
    const outcomes = receiver.events
      .filter((event) => event.type === 'notification')
      .map((event) => event.invalidReason ?? 'valid');
    expect(outcomes).toEqual(['valid', 'valid', 'hash_mismatch', 'unknown_identifier', 'missing_identifier']);
    const metrics = await receiver.metrics.metrics();
    expect(metrics).toContain('recon_notifications_total{hash="valid"} 2\n');
    expect(metrics).toContain('recon_notifications_total{hash="invalid"} 1\n');
    expect(metrics).toContain('recon_notifications_total{hash="unknown_identifier"} 1\n');
    expect(metrics).toContain('recon_notifications_total{hash="missing_identifier"} 1\n');
    const said = JSON.stringify(receiver.events) + metrics;
    for (const secret of [INSTALMENT.secret, WALLET.secret]) expect(said).not.toContain(secret);
  });
});
