import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeNotification, verifyHash, type Params } from '@recon/protocol';
import { createSandboxClock } from '../src/clock.ts';
import type { SandboxAccount } from '../src/sandbox-accounts.ts';
import { createSandbox, type Sandbox } from '../src/sandbox.ts';
import { readExportFile } from './export/read-export-file.ts';
import { startUploadReceiver, type UploadReceiver } from './export/upload-receiver.ts';
import { startNotificationReceiver, type NotificationReceiver } from './support/notification-receiver.ts';
import {
  answerCardholderPage,
  cardholderPageUrl,
  instalmentParams,
  postSigned,
  START,
  walletParams,
  type Answer,
} from './support/sandbox-harness.ts';

/**
 * A merchant with several accounts over real HTTP on loopback: two accounts of one group (one per method) and one
 * on its own, each with its own secret.
 */
const INSTALMENT: SandboxAccount = {
  identifier: 'SHOP-INSTAL',
  secret: 'instal-key',
  group: 'shop',
  paymentMethods: ['instalment'],
};
const WALLET: SandboxAccount = {
  identifier: 'SHOP-WALLET',
  secret: 'wallet-key',
  group: 'shop',
  paymentMethods: ['wallet'],
};
const ALONE: SandboxAccount = { identifier: 'OTHER-SHOP', secret: 'other-key' };

describe('a sandbox with several accounts', () => {
  let receiver: NotificationReceiver;
  let uploads: UploadReceiver;
  let sandbox: Sandbox;
  let baseUrl: string;
  const orders: Record<string, string> = {};
  const transactions: Record<string, string> = {};

  /** Starts a payment or authorization on `account` and validates it on the cardholder page. */
  async function settle(account: SandboxAccount, method: 'payment' | 'authorization', params: Params): Promise<string> {
    const answer = await postSigned(baseUrl, method, { ...params, IDENTIFIER: account.identifier }, account.secret);
    expect(answer).toMatchObject({ EXECCODE: '0002' });
    expect((await answerCardholderPage(cardholderPageUrl(answer), 'validated')).status).toBe(200);
    return answer['TRANSACTIONID']!;
  }

  function exportOrders(account: SandboxAccount, extra: Params = {}): Promise<Answer> {
    return postSigned(
      baseUrl,
      'getTransactions',
      {
        IDENTIFIER: account.identifier,
        VERSION: '3.0',
        ORDERID: Object.values(orders).join(';'),
        COLUMNS: 'ORDERID;IDENTIFIER',
        ...extra,
      },
      account.secret,
    );
  }

  function exported(answer: Answer): string[] {
    expect(answer).toMatchObject({ EXECCODE: '0000' });
    const rows = answer['DATA'] as unknown as { ORDERID: string; IDENTIFIER: string }[];
    return rows.map((row) => `${row.ORDERID}@${row.IDENTIFIER}`).sort();
  }

  beforeAll(async () => {
    receiver = await startNotificationReceiver();
    uploads = await startUploadReceiver();
    sandbox = createSandbox({
      accounts: [INSTALMENT, WALLET, ALONE],
      clock: createSandboxClock({ start: START, ticking: false }),
      notifyUrl: receiver.url,
    });
    baseUrl = await sandbox.listen(0, '127.0.0.1');
    const instalment = instalmentParams();
    const wallet = walletParams();
    const alone = walletParams();
    orders.instalment = instalment['ORDERID'] as string;
    orders.wallet = wallet['ORDERID'] as string;
    orders.alone = alone['ORDERID'] as string;
    transactions.instalment = await settle(INSTALMENT, 'authorization', instalment);
    transactions.wallet = await settle(WALLET, 'payment', wallet);
    transactions.alone = await settle(ALONE, 'payment', alone);
    await sandbox.notifications.idle();
  });
  afterAll(async () => {
    await sandbox?.close();
    await receiver?.close();
    await uploads?.close();
  });

  it('records each transaction on the account that made it', () => {
    expect(sandbox.store.get(transactions.instalment!)?.identifier).toBe(INSTALMENT.identifier);
    expect(sandbox.store.get(transactions.wallet!)?.identifier).toBe(WALLET.identifier);
    expect(sandbox.store.get(transactions.alone!)?.identifier).toBe(ALONE.identifier);
    expect(sandbox.accounts.map((account) => account.identifier)).toEqual(['SHOP-INSTAL', 'SHOP-WALLET', 'OTHER-SHOP']);
  });

  it("checks a request's HASH with the secret of its own IDENTIFIER", async () => {
    const withOthersSecret = await postSigned(
      baseUrl,
      'payment',
      walletParams({ IDENTIFIER: WALLET.identifier }),
      INSTALMENT.secret,
    );
    expect(withOthersSecret).toMatchObject({ EXECCODE: '1003' });
    const unknown = await postSigned(baseUrl, 'payment', walletParams({ IDENTIFIER: 'NOBODY' }), WALLET.secret);
    expect(unknown).toMatchObject({ EXECCODE: '3001' });
  });

  it('refuses a payment method the account is not enabled for with 3001, and records nothing', async () => {
    const params = walletParams({ IDENTIFIER: INSTALMENT.identifier });
    const answer = await postSigned(baseUrl, 'payment', params, INSTALMENT.secret);
    expect(answer).toMatchObject({ EXECCODE: '3001' });
    expect(answer['MESSAGE']).toContain('SHOP-INSTAL is not enabled for the wallet method');
    expect(sandbox.store.byOrderId(params['ORDERID'] as string)).toEqual([]);
  });

  it("knows only the requesting account's references for a capture or refund", async () => {
    const refund = await postSigned(
      baseUrl,
      'refund',
      {
        IDENTIFIER: INSTALMENT.identifier,
        TRANSACTIONID: transactions.wallet!,
        ORDERID: orders.wallet!,
        DESCRIPTION: 'refund from the wrong account',
        VERSION: '3.0',
      },
      INSTALMENT.secret,
    );
    expect(refund).toMatchObject({ EXECCODE: '2002' });
  });

  it("exports the requester's own transactions with SCOPE=CLIENT, the default, each row carrying its IDENTIFIER", async () => {
    expect(exported(await exportOrders(WALLET))).toEqual([`${orders.wallet}@SHOP-WALLET`]);
    expect(exported(await exportOrders(WALLET, { SCOPE: 'client' }))).toEqual([`${orders.wallet}@SHOP-WALLET`]);
  });

  it("exports every account of the requester's group with SCOPE=CLIENTSGROUP", async () => {
    const group = [`${orders.instalment}@SHOP-INSTAL`, `${orders.wallet}@SHOP-WALLET`].sort();
    expect(exported(await exportOrders(WALLET, { SCOPE: 'CLIENTSGROUP' }))).toEqual(group);
    expect(exported(await exportOrders(INSTALMENT, { SCOPE: 'ClientsGroup' }))).toEqual(group);
  });

  it("uploads a group's export to CALLBACKURL under the requesting account's IDENTIFIER", async () => {
    const answer = await exportOrders(INSTALMENT, {
      SCOPE: 'CLIENTSGROUP',
      CALLBACKURL: `${uploads.url}/group`,
      COMPRESSION: 'gzip',
    });
    expect(answer).toMatchObject({ EXECCODE: '0000' });
    await uploads.receivedCount(1);
    const [upload] = uploads.received;
    expect(upload!.fields).toMatchObject({ IDENTIFIER: INSTALMENT.identifier, ROWS: '2' });
    const file = upload!.files[0]!;
    const { rows } = await readExportFile(file.filename, file.bytes);
    expect(rows.map((row) => `${row['ORDERID']}@${row['IDENTIFIER']}`).sort()).toEqual(
      [`${orders.instalment}@SHOP-INSTAL`, `${orders.wallet}@SHOP-WALLET`].sort(),
    );
  });

  it('exports an account without a group alone, whatever the SCOPE', async () => {
    expect(exported(await exportOrders(ALONE, { SCOPE: 'CLIENTSGROUP' }))).toEqual([`${orders.alone}@OTHER-SHOP`]);
  });

  it('signs each notification with the secret of the account it carries as IDENTIFIER', () => {
    const notified = receiver.accepted().map((body) => decodeNotification(body));
    const secrets = new Map([INSTALMENT, WALLET, ALONE].map((account) => [account.identifier, account.secret]));
    expect(notified.map((fields) => fields['TRANSACTIONID']).sort()).toEqual(Object.values(transactions).sort());
    for (const fields of notified) {
      const identifier = fields['IDENTIFIER']!;
      expect(sandbox.store.get(fields['TRANSACTIONID']!)?.identifier).toBe(identifier);
      expect(verifyHash(secrets.get(identifier)!, fields)).toBe(true);
      for (const [other, secret] of secrets) if (other !== identifier) expect(verifyHash(secret, fields)).toBe(false);
    }
  });
});

describe('the accounts option', () => {
  it('takes a list, or one account as identifier and secret, not both nor neither', () => {
    expect(() => createSandbox({ accounts: [ALONE], identifier: 'X', secret: 'y' })).toThrow(TypeError);
    expect(() => createSandbox({})).toThrow(TypeError);
    expect(() => createSandbox({ accounts: [] })).toThrow('at least one account');
    expect(() => createSandbox({ accounts: [ALONE, { ...ALONE, secret: 'other' }] })).toThrow(
      'IDENTIFIER OTHER-SHOP is listed twice',
    );
  });

  it('seeds the scenario on the account of each order’s method, and refuses one no account can take', async () => {
    const sandbox = createSandbox({ accounts: [INSTALMENT, WALLET], seed: 7 });
    try {
      const transactions = sandbox.store.all();
      expect(transactions.length).toBeGreaterThan(0);
      for (const transaction of transactions) {
        const expected = transaction.method === 'instalment' ? INSTALMENT : WALLET;
        expect(transaction.identifier).toBe(expected.identifier);
        expect(verifyHash(expected.secret, transaction.request)).toBe(true);
      }
      expect(new Set(transactions.map((transaction) => transaction.identifier))).toEqual(
        new Set(['SHOP-INSTAL', 'SHOP-WALLET']),
      );
      for (const delivery of sandbox.notifications.deliveries()) {
        const account = delivery.fields['IDENTIFIER'] === INSTALMENT.identifier ? INSTALMENT : WALLET;
        expect(verifyHash(account.secret, delivery.fields)).toBe(true);
      }
    } finally {
      await sandbox.close();
    }
    expect(() => createSandbox({ accounts: [INSTALMENT], seed: 7 })).toThrow('no account serves wallet');
  });

  it('gives the same scenario on one account as on two, but for the accounts', async () => {
    const one = createSandbox({ identifier: 'ONE', secret: 's', seed: 11 });
    const two = createSandbox({ accounts: [INSTALMENT, WALLET], seed: 11 });
    try {
      const strip = (sandbox: Sandbox) =>
        sandbox.store.all().map(({ transactionId, orderId, method, operationType, amount, execCode }) => ({
          transactionId,
          orderId,
          method,
          operationType,
          amount,
          execCode,
        }));
      expect(strip(two)).toEqual(strip(one));
    } finally {
      await one.close();
      await two.close();
    }
  });
});
