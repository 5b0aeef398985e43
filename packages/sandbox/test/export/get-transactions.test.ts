import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXPORT_COLUMNS, signParams, type Params } from '@recon/protocol';
import { createExportDeliveries } from '../../src/export/export-deliveries.ts';
import type { ExportDeliveries } from '../../src/export/export-deliveries.ts';
import { handleGetTransactions } from '../../src/export/get-transactions.ts';
import type { GetTransactionsContext } from '../../src/export/get-transactions.ts';
import { createSandboxAccounts } from '../../src/sandbox-accounts.ts';
import { createExportTestStore, IDENTIFIER, SECRET } from './export-test-store.ts';
import type { ExportTestStore } from './export-test-store.ts';

let fixture: ExportTestStore;
let deliveries: ExportDeliveries;
let ctx: GetTransactionsContext;

beforeEach(() => {
  fixture = createExportTestStore();
  deliveries = createExportDeliveries();
  ctx = {
    store: fixture.store,
    clock: fixture.clock,
    accounts: createSandboxAccounts([{ identifier: IDENTIFIER, secret: SECRET }]),
    deliveries,
  };
});
afterEach(() => deliveries.close());

function request(params: Params): Params {
  return signParams(SECRET, { OPERATIONTYPE: 'getTransactions', IDENTIFIER, VERSION: '3.0', ...params });
}

async function exportRows(params: Params): Promise<Record<string, string>[]> {
  const response = await handleGetTransactions(ctx, request(params));
  expect(response).toMatchObject({ OPERATIONTYPE: 'getTransactions', EXECCODE: '0000' });
  return response.DATA as Record<string, string>[];
}

describe('getTransactions, synchronous', () => {
  it('answers the columns beyond the documented record when asked, and any column it does not know as empty', async () => {
    const columns = [
      'TRANSACTIONID',
      'NATURE',
      'CHARGEBACKDATE',
      'TRANSFER REFERENCE',
      'EXTRADATA',
      'BILLINGFEESTTC',
      'constructor',
    ];
    const rows = await exportRows({ ORDERID: 'CMD-1;CMD-2', COLUMNS: columns.join(';') });
    const blank = { NATURE: '', CHARGEBACKDATE: '', 'TRANSFER REFERENCE': '', BILLINGFEESTTC: '', constructor: '' };
    // EXTRADATA as the merchant sent it with the authorization, on its capture and refund too; CMD-2 sent none.
    expect(rows).toEqual([
      { TRANSACTIONID: fixture.ids.instalmentAuthorization, ...blank, EXTRADATA: 'cart=42;channel=web' },
      { TRANSACTIONID: fixture.ids.instalmentCapture, ...blank, EXTRADATA: 'cart=42;channel=web' },
      { TRANSACTIONID: fixture.ids.instalmentRefund, ...blank, EXTRADATA: 'cart=42;channel=web' },
      { TRANSACTIONID: fixture.ids.walletPayment, ...blank, EXTRADATA: '' },
    ]);
    for (const row of rows) expect(Object.keys(row)).toEqual(columns);
  });

  it('answers every exportable column by default, in the default order, values as the service writes them', async () => {
    const rows = await exportRows({ ORDERID: 'CMD-1' });
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(Object.keys(row)).toEqual([...EXPORT_COLUMNS]);
    const [authorization, capture, refund] = rows;
    expect(authorization).toEqual({
      IDENTIFIER,
      DATE: '2026-06-01 08:15:30',
      TRANSACTIONID: fixture.ids.instalmentAuthorization,
      ORDERID: 'CMD-1',
      OPERATIONTYPE: 'authorization',
      AMOUNT: '459.90',
      CURRENCY: 'EUR',
      'BILLINGFEES INCL. VAT': '0.00',
      EXECCODE: '0',
      CLIENTEMAIL: 'ada@example.org',
      CLIENTADDRESS: '',
      CARDFULLNAME: 'Ada Lovelace',
      CARDTYPE: expect.stringMatching(/^(CB|VISA|MASTERCARD)$/),
      CARDCOUNTRY: 'BE',
      '3DSECURE': expect.stringMatching(/^(yes|no)$/),
      '3DSGLOBALSTATUS': expect.stringMatching(/^(OK|)$/),
      'RULE APPLIED': '',
      SCHEDULE: '[1-3]',
      RETRY: '',
    });
    expect(capture).toMatchObject({
      OPERATIONTYPE: 'capture',
      AMOUNT: '459.90',
      // 2.40 % of 459.90 = 11.0376 → 11.04, plus 0.30
      'BILLINGFEES INCL. VAT': '11.34',
      SCHEDULE: '[1-3]',
      CLIENTEMAIL: 'ada@example.org',
      CARDTYPE: authorization!.CARDTYPE,
      CARDCOUNTRY: 'BE',
    });
    expect(refund).toMatchObject({ OPERATIONTYPE: 'refund', AMOUNT: '100.00', SCHEDULE: '', EXECCODE: '0' });
  });

  it('answers the columns asked for, in the order asked', async () => {
    const rows = await exportRows({
      ORDERID: 'CMD-2;CMD-3',
      COLUMNS: 'EXECCODE;AMOUNT;ORDERID;BILLINGFEES INCL. VAT;CLIENTADDRESS',
    });
    expect(rows.map((row) => Object.keys(row))).toEqual([
      ['EXECCODE', 'AMOUNT', 'ORDERID', 'BILLINGFEES INCL. VAT', 'CLIENTADDRESS'],
      ['EXECCODE', 'AMOUNT', 'ORDERID', 'BILLINGFEES INCL. VAT', 'CLIENTADDRESS'],
    ]);
    expect(rows).toEqual([
      {
        EXECCODE: '0',
        AMOUNT: '19.99',
        ORDERID: 'CMD-2',
        // 1.40 % of 19.99 = 0.27986 → 0.28, plus 0.25
        'BILLINGFEES INCL. VAT': '0.53',
        CLIENTADDRESS: '12 rue "du Port"; Nantes',
      },
      { EXECCODE: '4001', AMOUNT: '50.00', ORDERID: 'CMD-3', 'BILLINGFEES INCL. VAT': '0.00', CLIENTADDRESS: '' },
    ]);
  });

  it('selects several transactions by TRANSACTIONID, oldest first', async () => {
    const { walletRefused, instalmentCapture } = fixture.ids;
    const rows = await exportRows({ TRANSACTIONID: `${walletRefused};${instalmentCapture}`, COLUMNS: 'TRANSACTIONID' });
    expect(rows).toEqual([{ TRANSACTIONID: instalmentCapture }, { TRANSACTIONID: walletRefused }]);
  });

  it('answers an empty DATA for ids it does not know', async () => {
    expect(await exportRows({ ORDERID: 'NO-SUCH-ORDER' })).toEqual([]);
  });

  it('writes DATE in the TIMEZONE asked, UTC by default', async () => {
    const params = { TRANSACTIONID: fixture.ids.instalmentCapture, COLUMNS: 'DATE' };
    expect(await exportRows(params)).toEqual([{ DATE: '2026-06-02 22:30:00' }]);
    expect(await exportRows({ ...params, TIMEZONE: 'Europe/Paris' })).toEqual([{ DATE: '2026-06-03 00:30:00' }]);
    expect(await exportRows({ ...params, TIMEZONE: 'America/Los_Angeles' })).toEqual([{ DATE: '2026-06-02 15:30:00' }]);
  });

  it('accepts both SCOPE values', async () => {
    for (const SCOPE of ['CLIENT', 'CLIENTSGROUP']) {
      expect(await exportRows({ ORDERID: 'CMD-2', SCOPE, COLUMNS: 'ORDERID' })).toEqual([{ ORDERID: 'CMD-2' }]);
    }
  });

  it('settles a pending approval past its 6 days before exporting it: EXECCODE stays 3, the store says expired', async () => {
    const params = { ORDERID: 'CMD-4', COLUMNS: 'EXECCODE;SCHEDULE' };
    expect(await exportRows(params)).toEqual([{ EXECCODE: '3', SCHEDULE: '[1-4]' }]);
    expect(fixture.store.get(fixture.ids.pendingApproval)!.status).toBe('pending-approval');
    fixture.clock.advanceDays(3);
    expect(await exportRows(params)).toEqual([{ EXECCODE: '3', SCHEDULE: '[1-4]' }]);
    expect(fixture.store.get(fixture.ids.pendingApproval)!.status).toBe('expired');
  });
});

describe('getTransactions, refused requests', () => {
  async function refusal(params: Params) {
    const response = await handleGetTransactions(ctx, params);
    expect(response).not.toHaveProperty('DATA');
    return response;
  }

  it('an empty column name is 1002', async () => {
    expect(await refusal(request({ ORDERID: 'CMD-1', COLUMNS: 'AMOUNT;;DATE' }))).toEqual({
      OPERATIONTYPE: 'getTransactions',
      EXECCODE: '1002',
      MESSAGE: 'invalid parameter COLUMNS: expected export column names separated by ;, none empty',
    });
  });

  it.each<[string, Params, string, RegExp]>([
    ['no selection', {}, '1001', /ORDERID or TRANSACTIONID/],
    ['a bad TIMEZONE', { ORDERID: 'A', TIMEZONE: 'Mars/Base' }, '1002', /TIMEZONE/],
    ['a bad SCOPE', { ORDERID: 'A', SCOPE: 'EVERYONE' }, '1002', /SCOPE/],
    ['an order id over 40 characters', { ORDERID: `A;${'x'.repeat(41)}` }, '1002', /ORDERID/],
    ['an empty id in the list', { ORDERID: 'A;;B' }, '1002', /ORDERID/],
    ['a bad COMPRESSION', { ORDERID: 'A', MAILTO: 'a@example.org', COMPRESSION: 'rar' }, '1002', /COMPRESSION/],
    ['a bad MAILTO', { ORDERID: 'A', MAILTO: 'not-an-address' }, '1002', /MAILTO/],
    [
      'both MAILTO and CALLBACKURL',
      { ORDERID: 'A', MAILTO: 'a@example.org', CALLBACKURL: 'http://127.0.0.1/x' },
      '1002',
      /mutually exclusive/,
    ],
    [
      'a CALLBACKURL of 33 characters',
      { ORDERID: 'A', CALLBACKURL: `http://127.0.0.1:8080/${'c'.repeat(11)}` },
      '1002',
      /CALLBACKURL/,
    ],
    ['a CALLBACKURL that is no http URL', { ORDERID: 'A', CALLBACKURL: 'ftp://127.0.0.1/x' }, '1002', /CALLBACKURL/],
    ['both ORDERID and TRANSACTIONID', { ORDERID: 'A', TRANSACTIONID: 'B' }, '1002', /not both/],
    ['a parameter getTransactions does not take', { ORDERID: 'A', AMOUNT: '100' }, '1002', /AMOUNT/],
    ['a column named twice', { ORDERID: 'A', COLUMNS: 'AMOUNT;AMOUNT' }, '1002', /AMOUNT/],
  ])('%s', async (_name, params, execCode, message) => {
    const response = await refusal(request(params));
    expect(response.EXECCODE).toBe(execCode);
    expect(response.MESSAGE).toMatch(message);
  });

  it('refuses MAILTO when no SMTP server is configured', async () => {
    const response = await refusal(request({ ORDERID: 'CMD-1', MAILTO: 'ops@example.org' }));
    expect(response).toMatchObject({ EXECCODE: '1002', MESSAGE: expect.stringMatching(/SMTP/) });
  });

  it('checks the envelope as the process endpoint does: 1001 missing, 1004 VERSION, 3001 account, 1003 HASH', async () => {
    const good = request({ ORDERID: 'CMD-1' });
    const { HASH: _hash, ...unsigned } = good;
    expect((await refusal(unsigned)).EXECCODE).toBe('1001');
    expect((await refusal({ ...good, IDENTIFIER: undefined })).MESSAGE).toBe('missing parameter IDENTIFIER');
    expect((await refusal(signParams(SECRET, { ...unsigned, VERSION: '2.0' }))).EXECCODE).toBe('1004');
    expect((await refusal(signParams(SECRET, { ...unsigned, IDENTIFIER: 'someone-else' }))).EXECCODE).toBe('3001');
    expect((await refusal({ ...good, ORDERID: 'CMD-2' })).EXECCODE).toBe('1003');
    expect((await refusal(signParams('wrong-secret', unsigned))).EXECCODE).toBe('1003');
    expect((await refusal(signParams(SECRET, { ...unsigned, OPERATIONTYPE: 'payment' }))).EXECCODE).toBe('1002');
  });
});
