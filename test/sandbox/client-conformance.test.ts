import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentClient, ServiceError, type PaymentClient } from '../../src/client/index.ts';
import { verifyHash } from '../../src/protocol/hash.ts';
import { decodeNotification } from '../../src/protocol/notification-encoding.ts';
import { parseNotification } from '../../src/protocol/notification-schemas.ts';
import { startNotificationReceiver, type NotificationReceiver } from './support/notification-receiver.ts';
import { CART, IDENTIFIER, nextOrderId, SECRET, startHarness, type Harness } from './support/sandbox-harness.ts';

/** The project's own client against the sandbox over loopback: the two halves of issue 3 agree. */
describe('sandbox driven by the payment client', () => {
  let receiver: NotificationReceiver;
  let h: Harness;
  let client: PaymentClient;

  beforeAll(async () => {
    receiver = await startNotificationReceiver({ refuseFirst: 1 });
    h = await startHarness({ notifyUrl: receiver.url });
    client = createPaymentClient({ baseUrl: h.baseUrl, identifier: IDENTIFIER, secret: SECRET, timeoutMs: 5_000, retry: { attempts: 2, baseDelayMs: 10 } });
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  const buyer = {
    CLIENTIDENT: 'client-7', CLIENTEMAIL: 'buyer@example.org', CLIENTUSERAGENT: 'Mozilla/5.0', CLIENTIP: '198.51.100.4',
    DESCRIPTION: 'Living room',
  };

  async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
    const error = await promise.then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceError);
    return error as ServiceError;
  }

  it('instalment: authorization, cardholder validation, capture, refunds, export rows and notifications', async () => {
    const ORDERID = nextOrderId();
    const started = await client.authorization({ method: 'instalment', ORDERID, AMOUNT: 125_000n, PAYMENTOPTION: 'instalpay-4x', CART, ...buyer });
    expect(started).toMatchObject({ EXECCODE: '0002', OPERATIONTYPE: 'authorization' });
    const page = await fetch(h.pageUrl(started as Record<string, string>), { method: 'POST', body: new URLSearchParams({ outcome: 'validated' }) });
    expect(page.status).toBe(200);
    const AUTHORIZATION = started.TRANSACTIONID!;

    const tooMuch = await rejection(client.capture({ TRANSACTIONID: AUTHORIZATION, ORDERID, DESCRIPTION: 'ship', AMOUNT: 125_001n }));
    expect(tooMuch.execCode).toBe('2007');
    const captured = await client.capture({ TRANSACTIONID: AUTHORIZATION, ORDERID, DESCRIPTION: 'ship' });
    expect(captured.EXECCODE).toBe('0000');
    expect((await rejection(client.capture({ TRANSACTIONID: AUTHORIZATION, ORDERID, DESCRIPTION: 'again' }))).execCode).toBe('2005');

    const CAPTURE = captured.TRANSACTIONID!;
    expect((await client.refund({ TRANSACTIONID: CAPTURE, ORDERID, DESCRIPTION: 'one cushion', AMOUNT: 2_500n })).EXECCODE).toBe('0000');
    expect((await rejection(client.refund({ TRANSACTIONID: CAPTURE, ORDERID, DESCRIPTION: 'x', AMOUNT: 122_501n }))).execCode).toBe('2008');
    expect((await rejection(client.refund({ TRANSACTIONID: AUTHORIZATION, ORDERID, DESCRIPTION: 'x' }))).execCode).toBe('2004');

    const rows = await client.getTransactions({ ORDERID: [ORDERID], COLUMNS: ['TRANSACTIONID', 'OPERATIONTYPE', 'AMOUNT', 'EXECCODE', 'SCHEDULE'] });
    // SCHEDULE of the other rows is the export half's reading; the capture's plan position is this half's.
    expect(rows).toEqual([
      { TRANSACTIONID: AUTHORIZATION, OPERATIONTYPE: 'authorization', AMOUNT: '1250.00', EXECCODE: '0', SCHEDULE: expect.any(String) },
      { TRANSACTIONID: CAPTURE, OPERATIONTYPE: 'capture', AMOUNT: '1250.00', EXECCODE: '0', SCHEDULE: '[1-4]' },
      { TRANSACTIONID: expect.any(String), OPERATIONTYPE: 'refund', AMOUNT: '25.00', EXECCODE: '0', SCHEDULE: expect.any(String) },
    ]);

    await h.sandbox.notifications.idle();
    const kinds = receiver.accepted()
      .map((body) => decodeNotification(body))
      .filter((fields) => fields['ORDERID'] === ORDERID)
      .map((fields) => {
        expect(verifyHash(SECRET, fields)).toBe(true);
        return parseNotification(fields).kind;
      });
    expect(kinds.sort()).toEqual(['instalment-authorization', 'instalment-capture', 'instalment-refund']);
  });

  it('instalment: the service\'s amount range and the 7-day capture window, moved by the clock endpoint', async () => {
    const outOfRange = await rejection(client.authorization({ method: 'instalment', ORDERID: nextOrderId(), AMOUNT: 14_999n, PAYMENTOPTION: 'instalpay-3x', ...buyer }));
    expect(outOfRange.execCode).toBe('1002');
    expect(outOfRange.message).toContain('AMOUNT');

    const ORDERID = nextOrderId();
    const started = await client.authorization({ method: 'instalment', ORDERID, AMOUNT: 20_000n, PAYMENTOPTION: 'instalpay-3x', ...buyer });
    await fetch(h.pageUrl(started as Record<string, string>), { method: 'POST', body: new URLSearchParams({ outcome: 'validated' }) });
    const moved = await fetch(`${h.baseUrl}/sandbox/clock`, { method: 'POST', body: JSON.stringify({ advanceDays: 8 }) });
    expect(moved.status).toBe(200);
    const late = await rejection(client.capture({ TRANSACTIONID: started.TRANSACTIONID!, ORDERID, DESCRIPTION: 'late' }));
    expect(late.execCode).toBe('2009');
  });

  it('wallet: payment refused on the page cannot be refunded; a validated one can, in full by default', async () => {
    const refusedOrder = nextOrderId();
    const refused = await client.payment({ ORDERID: refusedOrder, AMOUNT: 1_999n, ...buyer });
    await fetch(h.pageUrl(refused as Record<string, string>), { method: 'POST', body: new URLSearchParams({ outcome: 'refused' }) });
    expect((await rejection(client.refund({ TRANSACTIONID: refused.TRANSACTIONID!, ORDERID: refusedOrder, DESCRIPTION: 'x' }))).execCode).toBe('2004');

    const ORDERID = nextOrderId();
    const paid = await client.payment({ ORDERID, AMOUNT: 1_999n, ...buyer });
    await fetch(h.pageUrl(paid as Record<string, string>), { method: 'POST', body: new URLSearchParams({ outcome: 'validated' }) });
    const refund = await client.refund({ TRANSACTIONID: paid.TRANSACTIONID!, ORDERID, DESCRIPTION: 'returned' });
    expect(h.sandbox.store.get(refund.TRANSACTIONID!)).toMatchObject({ amount: 1_999n, operationType: 'refund' });
    expect((await rejection(client.capture({ TRANSACTIONID: 'SBX000404404', ORDERID, DESCRIPTION: 'x' }))).execCode).toBe('2002');
  });

  it('refuses a client with the wrong secret (1003) or account (3001)', async () => {
    const options = { baseUrl: h.baseUrl, timeoutMs: 5_000, retry: { attempts: 1, baseDelayMs: 10 } };
    const wrongSecret = createPaymentClient({ ...options, identifier: IDENTIFIER, secret: 'guess' });
    expect((await rejection(wrongSecret.payment({ ORDERID: nextOrderId(), AMOUNT: 100n, ...buyer }))).execCode).toBe('1003');
    const wrongAccount = createPaymentClient({ ...options, identifier: 'NOBODY', secret: SECRET });
    expect((await rejection(wrongAccount.payment({ ORDERID: nextOrderId(), AMOUNT: 100n, ...buyer }))).execCode).toBe('3001');
  });
});
