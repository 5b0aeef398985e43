import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeNotification,
  NOTIFICATION_SHAPES,
  parseNotification,
  verifyHash,
  type NotificationKind,
} from '@recon/protocol';
import { startNotificationReceiver, type NotificationReceiver } from './support/notification-receiver.ts';
import {
  IDENTIFIER,
  instalmentParams,
  referenceParams,
  SECRET,
  startHarness,
  walletParams,
  type Harness,
} from './support/sandbox-harness.ts';

/**
 * Each notification kind of the spec's Events section, received by a real merchant endpoint on loopback that
 * refuses the first deliveries: the fields are exactly the kind's, the HASH verifies with the account secret.
 */
describe('sandbox notifications', () => {
  let receiver: NotificationReceiver;
  let h: Harness;
  const ids: Record<string, string> = {};
  let received: Map<string, Record<string, string>[]>;

  beforeAll(async () => {
    receiver = await startNotificationReceiver({ refuseFirst: 2 });
    h = await startHarness({ notifyUrl: receiver.url });
    ids.instalmentValidated = await h.settle('authorization', instalmentParams({ EXTRADATA: 'cart-7' }), 'validated');
    ids.instalmentPending = await h.settle('authorization', instalmentParams(), 'pending');
    await h.cardholder(ids.instalmentPending, 'validated');
    ids.instalmentPendingRefused = await h.settle('authorization', instalmentParams(), 'pending');
    await h.cardholder(ids.instalmentPendingRefused, 'refused');
    ids.instalmentRefused = await h.settle('authorization', instalmentParams(), 'refused');
    ids.instalmentCapture = (
      await h.process('capture', referenceParams(h, ids.instalmentValidated, { EXTRADATA: 'capture-extra' }))
    )['TRANSACTIONID']!;
    ids.instalmentRefund = (
      await h.process(
        'refund',
        referenceParams(h, ids.instalmentCapture, { AMOUNT: '5000', EXTRADATA: 'refund-extra' }),
      )
    )['TRANSACTIONID']!;
    ids.walletPayment = await h.settle(
      'payment',
      walletParams({ SHIPTOFIRSTNAME: 'Jane', SHIPTOLASTNAME: 'Doe', SHIPTOCOUNTRY: 'BE' }),
      'validated',
    );
    ids.walletRefusedPayment = await h.settle('payment', walletParams(), 'refused');
    ids.walletAuthorization = await h.settle('authorization', walletParams(), 'validated');
    ids.walletCapture = (await h.process('capture', referenceParams(h, ids.walletAuthorization)))['TRANSACTIONID']!;
    ids.walletRefund = (await h.process('refund', referenceParams(h, ids.walletPayment, { AMOUNT: '990' })))[
      'TRANSACTIONID'
    ]!;
    await h.sandbox.notifications.idle();
    received = new Map();
    for (const body of receiver.accepted()) {
      const fields = decodeNotification(body);
      const list = received.get(fields['TRANSACTIONID']!) ?? [];
      list.push(fields);
      received.set(fields['TRANSACTIONID']!, list);
    }
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  function only(key: string): Record<string, string> {
    const list = received.get(ids[key]!) ?? [];
    expect(list).toHaveLength(1);
    return list[0]!;
  }

  function expectKind(fields: Record<string, string>, kind: NotificationKind): void {
    expect(Object.keys(fields).sort()).toEqual([...NOTIFICATION_SHAPES[kind].fields].sort());
    expect(parseNotification(fields).kind).toBe(kind);
    expect(verifyHash(SECRET, fields)).toBe(true);
    expect(verifyHash('another-secret', fields)).toBe(false);
  }

  it('retries until the merchant answers OK, POSTing the same signed form each time', () => {
    const refused = receiver.received.filter((r) => !r.answeredOk);
    expect(refused).toHaveLength(2);
    for (const { body } of refused) expect(receiver.accepted()).toContain(body);
    expect(receiver.received.every((r) => r.contentType?.startsWith('application/x-www-form-urlencoded'))).toBe(true);
    const deliveries = h.sandbox.notifications.deliveries();
    expect(deliveries.every((d) => d.state === 'delivered')).toBe(true);
    expect(deliveries.reduce((sum, d) => sum + d.attempts, 0)).toBe(receiver.received.length);
    expect(receiver.accepted()).toHaveLength(deliveries.length);
  });

  it('instalment authorization, after the cardholder step: 0000, 0003 or a refusal, with EXTRADATA', () => {
    const validated = only('instalmentValidated');
    expectKind(validated, 'instalment-authorization');
    expect(validated).toMatchObject({
      IDENTIFIER,
      OPERATIONTYPE: 'authorization',
      TRANSACTIONID: ids.instalmentValidated,
      AMOUNT: '125000',
      CURRENCY: 'EUR',
      VERSION: '3.0',
      EXECCODE: '0000',
      CLIENTIDENT: 'client-42',
      CLIENTEMAIL: 'jane.doe@example.com',
      EXTRADATA: 'cart-7',
      ORDERID: h.sandbox.store.get(ids.instalmentValidated!)!.orderId,
    });
    expect(only('instalmentRefused')['EXECCODE']).toMatch(/^4\d{3}$/);
  });

  function all(key: string): Record<string, string>[] {
    return received.get(ids[key]!) ?? [];
  }

  it('a pending approval is notified with 0003, then its update with the final result', () => {
    for (const [key, final] of [
      ['instalmentPending', '0000'],
      ['instalmentPendingRefused', '4001'],
    ] as const) {
      const notifications = all(key);
      for (const fields of notifications) expectKind(fields, 'instalment-authorization');
      expect(notifications.map((fields) => fields['EXECCODE'])).toEqual(['0003', final]);
      expect(h.sandbox.store.get(ids[key]!)?.execCode).toBe(final);
    }
  });

  it("instalment capture: at once, with the capture's own EXTRADATA", () => {
    const fields = only('instalmentCapture');
    expectKind(fields, 'instalment-capture');
    expect(fields).toMatchObject({
      OPERATIONTYPE: 'capture',
      EXECCODE: '0000',
      AMOUNT: '125000',
      EXTRADATA: 'capture-extra',
    });
  });

  it('instalment refund: EXTERNALENTITYID and a 9-digit EXTERNALREFERENCE', () => {
    const fields = only('instalmentRefund');
    expectKind(fields, 'instalment-refund');
    expect(fields).toMatchObject({
      OPERATIONTYPE: 'refund',
      AMOUNT: '5000',
      EXTRADATA: 'refund-extra',
      CLIENTIDENT: 'client-42',
    });
    expect(fields['EXTERNALENTITYID']).toMatch(/^\d{1,10}$/);
    expect(fields['EXTERNALREFERENCE']).toMatch(/^\d{9}$/);
  });

  it('wallet payment and authorization: the PP_* fields, shipping from the request', () => {
    const payment = only('walletPayment');
    expectKind(payment, 'wallet-payment');
    expect(payment).toMatchObject({
      OPERATIONTYPE: 'payment',
      EXECCODE: '0000',
      AMOUNT: '4990',
      PP_SHIP_TO_NAME: 'Jane Doe',
      PP_SHIP_TO_COUNTRYCODE: 'BE',
      PP_PAYER_STATUS: 'completed',
    });
    expect(payment['PP_PAYER_ID']).toHaveLength(13);
    const refused = only('walletRefusedPayment');
    expectKind(refused, 'wallet-payment');
    expect(refused['EXECCODE']).toMatch(/^4\d{3}$/);
    const authorization = only('walletAuthorization');
    expectKind(authorization, 'wallet-payment');
    expect(authorization['OPERATIONTYPE']).toBe('authorization');
  });

  it('wallet capture and refund', () => {
    const capture = only('walletCapture');
    expectKind(capture, 'wallet-capture');
    expect(capture).toMatchObject({ OPERATIONTYPE: 'capture', AMOUNT: '4990' });
    const refund = only('walletRefund');
    expectKind(refund, 'wallet-refund');
    expect(refund).toMatchObject({ OPERATIONTYPE: 'refund', AMOUNT: '990', EXECCODE: '0000' });
  });

  it('sends nothing for a request that is refused', async () => {
    const before = h.sandbox.notifications.deliveries().length;
    await h.process('capture', referenceParams(h, ids.walletAuthorization!));
    await h.process('payment', walletParams({ VERSION: '2.0' }));
    expect(h.sandbox.notifications.deliveries()).toHaveLength(before);
  });

  // Last: it moves the clock past the 6-day wait, which the tests above must not see.
  it('does not notify the expiry of a pending approval: the 0003 and the 6-day rule already tell the merchant', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'pending');
    h.sandbox.clock.advance(6 * 86_400_000 + 1);
    expect(h.sandbox.store.get(id)?.status).toBe('expired');
    await h.sandbox.notifications.idle();
    const sent = h.sandbox.notifications.deliveries().filter((delivery) => delivery.fields['TRANSACTIONID'] === id);
    expect(sent.map((delivery) => delivery.fields['EXECCODE'])).toEqual(['0003']);
  });
});
