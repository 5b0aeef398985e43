import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentClient, type PaymentClient } from '../../src/client/payment-client.ts';
import { ServiceError } from '../../src/client/service-error.ts';
import { decodeNotification, parseNotification, verifyHash } from '@recon/protocol';
import { startMailReceiver, type MailReceiver } from '../../packages/sandbox/test/export/mail-receiver.ts';
import { readExportFile } from '../../packages/sandbox/test/export/read-export-file.ts';
import { startUploadReceiver, type UploadReceiver } from '../../packages/sandbox/test/export/upload-receiver.ts';
import {
  startNotificationReceiver,
  type NotificationReceiver,
} from '../../packages/sandbox/test/support/notification-receiver.ts';
import {
  answerCardholderPage,
  CART,
  cardholderPageUrl,
  IDENTIFIER,
  nextOrderId,
  SECRET,
  startHarness,
  type Harness,
} from '../../packages/sandbox/test/support/sandbox-harness.ts';

/** The project's own client against the sandbox over loopback: the two ends of the protocol agree. */
describe('sandbox driven by the payment client', () => {
  let receiver: NotificationReceiver;
  let uploads: UploadReceiver;
  let mail: MailReceiver;
  let h: Harness;
  let client: PaymentClient;

  beforeAll(async () => {
    receiver = await startNotificationReceiver({ refuseFirst: 1 });
    uploads = await startUploadReceiver();
    mail = await startMailReceiver();
    h = await startHarness({ notifyUrl: receiver.url, smtp: { host: mail.host, port: mail.port } });
    client = createPaymentClient({
      baseUrl: h.baseUrl,
      identifier: IDENTIFIER,
      secret: SECRET,
      timeoutMs: 5_000,
      retry: { attempts: 2, baseDelayMs: 10 },
    });
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
    await uploads?.close();
    await mail?.close();
  });

  const buyer = {
    CLIENTIDENT: 'client-7',
    CLIENTEMAIL: 'buyer@example.org',
    CLIENTUSERAGENT: 'Mozilla/5.0',
    CLIENTIP: '198.51.100.4',
    DESCRIPTION: 'Living room',
  };

  /** The cardholder's outcome on the page the answer's REDIRECTHTML leads to. */
  async function cardholder(answer: { REDIRECTHTML?: string | undefined }, outcome: string): Promise<void> {
    const page = await answerCardholderPage(cardholderPageUrl(answer), outcome);
    expect(page.status).toBe(200);
  }

  /** The notifications the merchant acknowledged for an order, in arrival order, each checked for its HASH. */
  async function notificationsOf(orderId: string): Promise<Record<string, string>[]> {
    await h.sandbox.notifications.idle();
    return receiver
      .accepted()
      .map((body) => decodeNotification(body))
      .filter((fields) => fields['ORDERID'] === orderId)
      .map((fields) => {
        expect(verifyHash(SECRET, fields)).toBe(true);
        return fields;
      });
  }

  async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ServiceError);
    return error as ServiceError;
  }

  it('instalment: authorization, cardholder validation, capture, refunds, export rows and notifications', async () => {
    const ORDERID = nextOrderId();
    const started = await client.authorization({
      method: 'instalment',
      ORDERID,
      AMOUNT: 125_000n,
      PAYMENTOPTION: 'instalpay-4x',
      CART,
      ...buyer,
    });
    expect(started).toMatchObject({ EXECCODE: '0002', OPERATIONTYPE: 'authorization' });
    await cardholder(started, 'validated');
    const AUTHORIZATION = started.TRANSACTIONID!;

    const tooMuch = await rejection(
      client.capture({ TRANSACTIONID: AUTHORIZATION, ORDERID, DESCRIPTION: 'ship', AMOUNT: 125_001n }),
    );
    expect(tooMuch.execCode).toBe('2007');
    const captured = await client.capture({ TRANSACTIONID: AUTHORIZATION, ORDERID, DESCRIPTION: 'ship' });
    expect(captured.EXECCODE).toBe('0000');
    expect(
      (await rejection(client.capture({ TRANSACTIONID: AUTHORIZATION, ORDERID, DESCRIPTION: 'again' }))).execCode,
    ).toBe('2005');

    const CAPTURE = captured.TRANSACTIONID!;
    expect(
      (await client.refund({ TRANSACTIONID: CAPTURE, ORDERID, DESCRIPTION: 'one cushion', AMOUNT: 2_500n })).EXECCODE,
    ).toBe('0000');
    expect(
      (await rejection(client.refund({ TRANSACTIONID: CAPTURE, ORDERID, DESCRIPTION: 'x', AMOUNT: 122_501n })))
        .execCode,
    ).toBe('2008');
    expect((await rejection(client.refund({ TRANSACTIONID: AUTHORIZATION, ORDERID, DESCRIPTION: 'x' }))).execCode).toBe(
      '2004',
    );

    const rows = await client.getTransactions({
      ORDERID: [ORDERID],
      COLUMNS: ['TRANSACTIONID', 'OPERATIONTYPE', 'AMOUNT', 'EXECCODE', 'SCHEDULE'],
    });
    // SCHEDULE of the other rows is the export half's reading; the capture's plan position is this half's.
    expect(rows).toEqual([
      {
        TRANSACTIONID: AUTHORIZATION,
        OPERATIONTYPE: 'authorization',
        AMOUNT: '1250.00',
        EXECCODE: '0',
        SCHEDULE: expect.any(String),
      },
      { TRANSACTIONID: CAPTURE, OPERATIONTYPE: 'capture', AMOUNT: '1250.00', EXECCODE: '0', SCHEDULE: '[1-4]' },
      {
        TRANSACTIONID: expect.any(String),
        OPERATIONTYPE: 'refund',
        AMOUNT: '25.00',
        EXECCODE: '0',
        SCHEDULE: expect.any(String),
      },
    ]);

    const kinds = (await notificationsOf(ORDERID)).map((fields) => parseNotification(fields).kind);
    expect(kinds.sort()).toEqual(['instalment-authorization', 'instalment-capture', 'instalment-refund']);
  });

  it("instalment: the service's amount range and the 7-day capture window, moved by the clock endpoint", async () => {
    const outOfRange = await rejection(
      client.authorization({
        method: 'instalment',
        ORDERID: nextOrderId(),
        AMOUNT: 14_999n,
        PAYMENTOPTION: 'instalpay-3x',
        ...buyer,
      }),
    );
    expect(outOfRange.execCode).toBe('1002');
    expect(outOfRange.message).toContain('AMOUNT');

    const ORDERID = nextOrderId();
    const started = await client.authorization({
      method: 'instalment',
      ORDERID,
      AMOUNT: 20_000n,
      PAYMENTOPTION: 'instalpay-3x',
      ...buyer,
    });
    await cardholder(started, 'validated');
    const moved = await fetch(`${h.baseUrl}/sandbox/clock`, {
      method: 'POST',
      body: JSON.stringify({ advanceDays: 8 }),
    });
    expect(moved.status).toBe(200);
    const late = await rejection(
      client.capture({ TRANSACTIONID: started.TRANSACTIONID!, ORDERID, DESCRIPTION: 'late' }),
    );
    expect(late.execCode).toBe('2009');
  });

  it('wallet: payment refused on the page cannot be refunded; a validated one can, in full by default', async () => {
    const refusedOrder = nextOrderId();
    const refused = await client.payment({ ORDERID: refusedOrder, AMOUNT: 1_999n, ...buyer });
    await cardholder(refused, 'refused');
    expect(
      (
        await rejection(
          client.refund({ TRANSACTIONID: refused.TRANSACTIONID!, ORDERID: refusedOrder, DESCRIPTION: 'x' }),
        )
      ).execCode,
    ).toBe('2004');

    const ORDERID = nextOrderId();
    const paid = await client.payment({ ORDERID, AMOUNT: 1_999n, ...buyer });
    await cardholder(paid, 'validated');
    const refund = await client.refund({ TRANSACTIONID: paid.TRANSACTIONID!, ORDERID, DESCRIPTION: 'returned' });
    expect(h.sandbox.store.get(refund.TRANSACTIONID!)).toMatchObject({ amount: 1_999n, operationType: 'refund' });
    expect(
      (await rejection(client.capture({ TRANSACTIONID: 'SBX000404404', ORDERID, DESCRIPTION: 'x' }))).execCode,
    ).toBe('2002');
  });

  it('refuses a client with the wrong secret (1003) or account (3001)', async () => {
    const options = { baseUrl: h.baseUrl, timeoutMs: 5_000, retry: { attempts: 1, baseDelayMs: 10 } };
    const wrongSecret = createPaymentClient({ ...options, identifier: IDENTIFIER, secret: 'guess' });
    expect((await rejection(wrongSecret.payment({ ORDERID: nextOrderId(), AMOUNT: 100n, ...buyer }))).execCode).toBe(
      '1003',
    );
    const wrongAccount = createPaymentClient({ ...options, identifier: 'NOBODY', secret: SECRET });
    expect((await rejection(wrongAccount.payment({ ORDERID: nextOrderId(), AMOUNT: 100n, ...buyer }))).execCode).toBe(
      '3001',
    );
  });

  it('instalment: a pending approval (0003) settled later on the same page, both notified; an unsettled one expires', async () => {
    const ORDERID = nextOrderId();
    const started = await client.authorization({
      method: 'instalment',
      ORDERID,
      AMOUNT: 60_000n,
      PAYMENTOPTION: 'instalpay-3xsansfrais',
      ...buyer,
    });
    await cardholder(started, 'pending');
    expect(
      (await rejection(client.capture({ TRANSACTIONID: started.TRANSACTIONID!, ORDERID, DESCRIPTION: 'too early' })))
        .execCode,
    ).toBe('2003');
    await cardholder(started, 'validated');
    expect(
      (await client.capture({ TRANSACTIONID: started.TRANSACTIONID!, ORDERID, DESCRIPTION: 'ship' })).EXECCODE,
    ).toBe('0000');
    const notified = await notificationsOf(ORDERID);
    const codesOf = (operation: string) =>
      notified.filter((fields) => fields['OPERATIONTYPE'] === operation).map((fields) => fields['EXECCODE']);
    // In send order for the authorization; the capture is another transaction, delivered independently.
    expect(codesOf('authorization')).toEqual(['0003', '0000']);
    expect(codesOf('capture')).toEqual(['0000']);

    const forgotten = nextOrderId();
    const waiting = await client.authorization({
      method: 'instalment',
      ORDERID: forgotten,
      AMOUNT: 60_000n,
      PAYMENTOPTION: 'instalpay-4x',
      ...buyer,
    });
    await cardholder(waiting, 'pending');
    await fetch(`${h.baseUrl}/sandbox/clock`, { method: 'POST', body: JSON.stringify({ advanceDays: 6.5 }) });
    const expired = await rejection(
      client.capture({ TRANSACTIONID: waiting.TRANSACTIONID!, ORDERID: forgotten, DESCRIPTION: 'late' }),
    );
    expect(expired.execCode).toBe('2003');
    expect(expired.message).toContain('expired');
    expect(await client.getTransactions({ ORDERID: [forgotten], COLUMNS: ['EXECCODE'] })).toEqual([{ EXECCODE: '3' }]);
  });

  it('wallet: authorization, capture within 7 days, refund of the capture', async () => {
    const ORDERID = nextOrderId();
    const authorized = await client.authorization({ method: 'wallet', ORDERID, AMOUNT: 8_000n, ...buyer });
    await cardholder(authorized, 'validated');
    const captured = await client.capture({
      TRANSACTIONID: authorized.TRANSACTIONID!,
      ORDERID,
      DESCRIPTION: 'ship',
      AMOUNT: 7_000n,
    });
    const refunded = await client.refund({ TRANSACTIONID: captured.TRANSACTIONID!, ORDERID, DESCRIPTION: 'returned' });
    expect(h.sandbox.store.get(refunded.TRANSACTIONID!)).toMatchObject({
      amount: 7_000n,
      parentTransactionId: captured.TRANSACTIONID,
    });
    const kinds = (await notificationsOf(ORDERID)).map((fields) => parseNotification(fields).kind);
    expect(kinds.sort()).toEqual(['wallet-capture', 'wallet-payment', 'wallet-refund']);
  });

  it('getTransactions delivered asynchronously: to a CALLBACKURL and by e-mail, decompressed and parsed back', async () => {
    const ORDERID = nextOrderId();
    const paid = await client.payment({ ORDERID, AMOUNT: 12_345n, ...buyer });
    await cardholder(paid, 'validated');
    const COLUMNS = ['ORDERID', 'TRANSACTIONID', 'AMOUNT', 'EXECCODE'] as const;
    const expected = [{ ORDERID, TRANSACTIONID: paid.TRANSACTIONID!, AMOUNT: '123.45', EXECCODE: '0' }];
    expect(await client.getTransactions({ ORDERID: [ORDERID], COLUMNS: [...COLUMNS] })).toEqual(expected);

    const receipt = await client.getTransactions({
      ORDERID: [ORDERID],
      COLUMNS: [...COLUMNS],
      CALLBACKURL: `${uploads.url}/cb`,
      COMPRESSION: 'zip',
    });
    expect(receipt).toMatchObject({ OPERATIONTYPE: 'getTransactions', EXECCODE: '0000' });
    await client.getTransactions({
      ORDERID: [ORDERID],
      COLUMNS: [...COLUMNS],
      MAILTO: 'books@example.org',
      COMPRESSION: 'bzip',
    });
    await h.sandbox.exports.idle();

    const upload = uploads.received.at(-1)!.files[0]!;
    expect((await readExportFile(upload.filename, upload.bytes)).rows).toEqual(expected);
    const attachment = mail.messages.find((message) => message.to.includes('books@example.org'))!.mail.attachments[0]!;
    expect((await readExportFile(attachment.filename!, attachment.content)).rows).toEqual(expected);
  });
});
