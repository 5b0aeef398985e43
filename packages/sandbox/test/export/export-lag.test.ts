import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Params } from '@recon/protocol';
import { createSandboxClock } from '../../src/clock.ts';
import { createSandbox, type Sandbox } from '../../src/sandbox.ts';
import { answerCardholderPage, cardholderPageUrl, postSigned, walletParams } from '../support/sandbox-harness.ts';
import { startMailReceiver, type MailReceiver } from './mail-receiver.ts';
import { readExportFile } from './read-export-file.ts';
import { startUploadReceiver, type UploadReceiver } from './upload-receiver.ts';

/**
 * --export-lag-seconds: a transaction younger than the lag, by the sandbox clock, is in no export yet, whichever
 * way the export travels (JSON answer, CALLBACKURL upload, MAILTO attachment); it appears once it is as old as the lag.
 */
const IDENTIFIER = 'LAG-SHOP';
const SECRET = 'lag-secret';
const LAG_SECONDS = 60;

let sandbox: Sandbox;
let baseUrl: string;
let uploads: UploadReceiver;
let mail: MailReceiver;
let fresh: { orderId: string; transactionId: string };
let olderOrder: string;

beforeAll(async () => {
  uploads = await startUploadReceiver();
  mail = await startMailReceiver();
  sandbox = createSandbox({
    identifier: IDENTIFIER,
    secret: SECRET,
    seed: 3,
    clock: createSandboxClock({ start: new Date('2026-10-05T12:00:00Z'), ticking: false }),
    smtp: { host: mail.host, port: mail.port },
    exportLagSeconds: LAG_SECONDS,
  });
  baseUrl = await sandbox.listen(0);
  olderOrder = sandbox.scenario!.orderIds[0]!;
  const params = walletParams({ IDENTIFIER });
  const payment = await postSigned(baseUrl, 'payment', params, SECRET);
  await answerCardholderPage(cardholderPageUrl(payment), 'validated');
  fresh = { orderId: params['ORDERID'] as string, transactionId: payment['TRANSACTIONID']! };
});
afterAll(async () => {
  await sandbox?.close();
  await uploads?.close();
  await mail?.close();
});

const request = (extra: Params = {}): Params => ({
  IDENTIFIER,
  VERSION: '3.0',
  ORDERID: `${olderOrder};${fresh.orderId}`,
  COLUMNS: 'TRANSACTIONID;ORDERID',
  ...extra,
});

/** The ORDERIDs of the rows each kind of export holds, at the clock's reading now. */
async function exportedOrders(): Promise<{ json: string[]; callback: string[]; mail: string[] }> {
  const answer = await postSigned(baseUrl, 'getTransactions', request(), SECRET);
  expect(answer.EXECCODE).toBe('0000');
  const json = (answer.DATA as unknown as Record<string, string>[]).map((row) => row.ORDERID!);

  const uploaded = uploads.received.length;
  const mailed = mail.messages.length;
  expect(
    await postSigned(
      baseUrl,
      'getTransactions',
      request({ CALLBACKURL: `${uploads.url}/lag`, COMPRESSION: 'gzip' }),
      SECRET,
    ),
  ).toMatchObject({ EXECCODE: '0000' });
  expect(
    await postSigned(baseUrl, 'getTransactions', request({ MAILTO: 'lag@example.org', COMPRESSION: 'zip' }), SECRET),
  ).toMatchObject({ EXECCODE: '0000' });
  await sandbox.exports.idle();
  const file = uploads.received[uploaded]!.files[0]!;
  const attachment = mail.messages[mailed]!.mail.attachments[0]!;
  const ordersIn = async (name: string, bytes: Buffer) =>
    (await readExportFile(name, bytes)).rows.map((row) => row.ORDERID!);
  return {
    json,
    callback: await ordersIn(file.filename, file.bytes),
    mail: await ordersIn(attachment.filename!, attachment.content),
  };
}

describe('--export-lag-seconds', () => {
  it('leaves a transaction out of every export until it is as old as the lag, by the sandbox clock', async () => {
    const older = sandbox.store.byOrderId(olderOrder).map((transaction) => transaction.orderId);
    expect(older.length).toBeGreaterThan(0);
    const without = { json: older, callback: older, mail: older };
    const withFresh = {
      json: [...older, fresh.orderId],
      callback: [...older, fresh.orderId],
      mail: [...older, fresh.orderId],
    };

    expect(await exportedOrders()).toEqual(without);
    sandbox.clock.advance(LAG_SECONDS * 1000 - 1);
    expect(await exportedOrders()).toEqual(without);
    sandbox.clock.advance(1);
    expect(await exportedOrders()).toEqual(withFresh);
    expect(sandbox.store.get(fresh.transactionId)!.createdAt.getTime()).toBe(
      sandbox.clock.now().getTime() - LAG_SECONDS * 1000,
    );
  });

  it('is 0 by default: a transaction is exported as soon as it exists', async () => {
    const plain = createSandbox({
      identifier: IDENTIFIER,
      secret: SECRET,
      clock: createSandboxClock({ ticking: false }),
    });
    try {
      const url = await plain.listen(0);
      const params = walletParams({ IDENTIFIER });
      await postSigned(url, 'payment', params, SECRET);
      const answer = await postSigned(
        url,
        'getTransactions',
        { IDENTIFIER, VERSION: '3.0', ORDERID: params['ORDERID']! },
        SECRET,
      );
      expect(answer.DATA).toHaveLength(1);
    } finally {
      await plain.close();
    }
  });

  it('refuses a lag that is not a number of seconds, 0 or more', () => {
    expect(() => createSandbox({ identifier: IDENTIFIER, secret: SECRET, exportLagSeconds: -1 })).toThrow(
      /exportLagSeconds/,
    );
    expect(() => createSandbox({ identifier: IDENTIFIER, secret: SECRET, exportLagSeconds: Number.NaN })).toThrow(
      /exportLagSeconds/,
    );
  });
});
