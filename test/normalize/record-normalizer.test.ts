import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planHeader } from '../../src/normalize/header-plan.ts';
import { createRecordNormalizer, type NormalizeResult } from '../../src/normalize/record-normalizer.ts';
import type { TransactionRow } from '../../src/normalize/transaction-row.ts';

const FULL_HEADER = [
  'IDENTIFIER',
  'DATE',
  'TRANSACTIONID',
  'ORDERID',
  'OPERATIONTYPE',
  'AMOUNT',
  'CURRENCY',
  'BILLINGFEES INCL. VAT',
  'EXECCODE',
  'CLIENTEMAIL',
  'CLIENTADDRESS',
  'CARDFULLNAME',
  'CARDTYPE',
  'CARDCOUNTRY',
  '3DSECURE',
  '3DSGLOBALSTATUS',
  'RULE APPLIED',
  'SCHEDULE',
  'RETRY',
];

const EMPTY_ROW: Omit<TransactionRow, 'transaction_id'> = {
  identifier: null,
  order_id: null,
  operation_type: null,
  occurred_at: null,
  amount_minor: null,
  currency: null,
  exec_code: null,
  fees_minor: null,
  schedule_index: null,
  schedule_count: null,
  retry_index: null,
  retry_count: null,
  client_email: null,
  client_address: null,
  card_full_name: null,
  card_type: null,
  card_country: null,
  three_d_secure: null,
  three_ds_global_status: null,
  rule_applied: null,
  extra: null,
};

function normalizerFor(header: string[], timezone = 'UTC') {
  return createRecordNormalizer(planHeader(header, 'test.csv'), { timezone });
}

function rowOf(result: NormalizeResult): TransactionRow {
  if (!result.ok) throw new Error(`rejected: ${result.reason}`);
  return result.row;
}

function reasonOf(result: NormalizeResult): string {
  if (result.ok) throw new Error('accepted');
  return result.reason;
}

describe('createRecordNormalizer', () => {
  it('normalizes a row of every export column', () => {
    const normalize = normalizerFor(FULL_HEADER, 'Europe/Paris');
    const row = rowOf(
      normalize([
        'merchant-1',
        '2017-03-01 10:28:30',
        'TX123',
        'ORDER-9',
        'payment',
        '123.90',
        'EUR',
        '1.5',
        '0',
        'a@example.org',
        '1 rue de la Paix; Paris',
        'JEAN DUPONT',
        'visa',
        'FR',
        'yes',
        'OK',
        '',
        '[2-3]',
        '[1-5]',
      ]),
    );
    expect(row).toEqual({
      transaction_id: 'TX123',
      identifier: 'merchant-1',
      order_id: 'ORDER-9',
      operation_type: 'payment',
      occurred_at: '2017-03-01T09:28:30Z',
      amount_minor: 12390n,
      currency: 'EUR',
      exec_code: '0000',
      fees_minor: 150n,
      schedule_index: 2,
      schedule_count: 3,
      retry_index: 1,
      retry_count: 5,
      client_email: 'a@example.org',
      client_address: '1 rue de la Paix; Paris',
      card_full_name: 'JEAN DUPONT',
      card_type: 'visa',
      card_country: 'FR',
      three_d_secure: 'yes',
      three_ds_global_status: 'OK',
      rule_applied: null,
      extra: null,
    });
  });

  it('leaves absent columns null and takes columns in any order', () => {
    const normalize = normalizerFor(['EXECCODE', 'TRANSACTIONID']);
    expect(rowOf(normalize(['4001', 'TX1']))).toEqual({ ...EMPTY_ROW, transaction_id: 'TX1', exec_code: '4001' });
  });

  it('turns empty values into null, and only-space values of structured columns too', () => {
    const normalize = normalizerFor(FULL_HEADER);
    const blanks = FULL_HEADER.map((name) => (name === 'TRANSACTIONID' ? 'TX1' : ''));
    expect(rowOf(normalize(blanks))).toEqual({ ...EMPTY_ROW, transaction_id: 'TX1' });
    const spaces = FULL_HEADER.map((name) => (name === 'TRANSACTIONID' ? 'TX1' : '  '));
    expect(rowOf(normalize(spaces))).toMatchObject({
      occurred_at: null,
      amount_minor: null,
      currency: null,
      fees_minor: null,
      exec_code: null,
      schedule_index: null,
      retry_index: null,
      // Text is kept as written: spaces are a value.
      order_id: '  ',
      client_email: '  ',
      rule_applied: '  ',
    });
  });

  it('turns every empty value into null, whatever subset and order of columns the export asked for', () => {
    const header = fc
      .shuffledSubarray(FULL_HEADER.filter((name) => name !== 'TRANSACTIONID'))
      .chain((others) =>
        fc.integer({ min: 0, max: others.length }).map((at) => others.toSpliced(at, 0, 'TRANSACTIONID')),
      );
    fc.assert(
      fc.property(
        header,
        fc.string({ minLength: 1 }).filter((id) => id.trim() !== ''),
        (columns, id) => {
          const values = columns.map((name) => (name === 'TRANSACTIONID' ? id : ''));
          expect(rowOf(normalizerFor(columns)(values))).toEqual({ ...EMPTY_ROW, transaction_id: id });
        },
      ),
    );
  });

  it('keeps text values exactly as written', () => {
    const normalize = normalizerFor(['TRANSACTIONID', 'ORDERID', 'CARDFULLNAME']);
    expect(rowOf(normalize([' TX 1 ', ' A-1 ', 'Zoë "Z" Ünal\nline 2']))).toMatchObject({
      transaction_id: ' TX 1 ',
      order_id: ' A-1 ',
      card_full_name: 'Zoë "Z" Ünal\nline 2',
    });
  });

  it('reads amounts and fees with the row currency', () => {
    const normalize = normalizerFor(['TRANSACTIONID', 'AMOUNT', 'CURRENCY', 'BILLINGFEES INCL. VAT']);
    expect(rowOf(normalize(['T', '100.00', 'JPY', '3.00']))).toMatchObject({
      amount_minor: 100n,
      fees_minor: 3n,
      currency: 'JPY',
    });
    expect(rowOf(normalize(['T', '1.234', 'kwd', '2']))).toMatchObject({
      amount_minor: 1234n,
      fees_minor: 2000n,
      currency: 'KWD',
    });
    // An empty CURRENCY leaves the export's documented two decimals.
    expect(rowOf(normalize(['T', '12.34', '', '0.5']))).toMatchObject({
      amount_minor: 1234n,
      fees_minor: 50n,
      currency: null,
    });
    expect(reasonOf(normalize(['T', '100.50', 'JPY', '']))).toBe(
      'AMOUNT: "100.50" has more decimals than allowed: 0 for JPY',
    );
    expect(reasonOf(normalize(['T', '1', 'EUR', '0.001']))).toBe(
      'BILLINGFEES INCL. VAT: "0.001" has more decimals than allowed: 2 for EUR',
    );
    expect(reasonOf(normalize(['T', '12.30', 'XYZ', '']))).toBe('CURRENCY: "XYZ" is not an ISO 4217 currency code');
  });

  it('reads amounts with two decimals when the file has no CURRENCY column', () => {
    const normalize = normalizerFor(['TRANSACTIONID', 'AMOUNT']);
    expect(rowOf(normalize(['T', '123.90'])).amount_minor).toBe(12390n);
    expect(reasonOf(normalize(['T', '1.999']))).toBe(
      'AMOUNT: "1.999" has more decimals than allowed: 2 (no currency given)',
    );
  });

  it.each([
    [['TRANSACTIONID', 'AMOUNT'], ['T', '12,30'], 'AMOUNT: "12,30" is not a decimal amount with a dot'],
    [['TRANSACTIONID', 'amount'], ['T', '1e3'], 'amount: "1e3" is not a decimal amount with a dot'],
    [['TRANSACTIONID', 'EXECCODE'], ['T', '40011'], 'EXECCODE: "40011" is not an execution code of 1 to 4 digits'],
    [['TRANSACTIONID', 'SCHEDULE'], ['T', '[4-3]'], 'SCHEDULE: "[4-3]" is not a position n of m with 1 <= n <= m'],
    [['TRANSACTIONID', 'RETRY'], ['T', '2/3'], 'RETRY: "2/3" is not a position of the form [n-m]'],
    [['TRANSACTIONID', 'DATE'], ['T', '2023-02-29 10:00:00'], 'DATE: "2023-02-29 10:00:00" is not a calendar date'],
    [['TRANSACTIONID', 'DATE'], ['', '2023-02-28 10:00:00'], 'TRANSACTIONID: "" is empty; every row needs one'],
    [['\uFEFFTransactionId'], ['  '], 'TransactionId: "  " is empty; every row needs one'],
    [['TRANSACTIONID', 'AMOUNT'], ['T'], 'expected 2 columns, found 1'],
    [['TRANSACTIONID', 'AMOUNT'], ['T', '1', ''], 'expected 2 columns, found 3'],
  ])('rejects with a one-line reason naming the column: %j %j', (header, values, reason) => {
    expect(reasonOf(normalizerFor(header)(values))).toBe(reason);
  });

  it('keeps unknown columns in extra under their header as written, empty values included', () => {
    const normalize = normalizerFor(['Merchant Note', 'TRANSACTIONID', ' CUSTOMFIELD1 ']);
    expect(rowOf(normalize(['gift; wrap', 'T', ''])).extra).toEqual({
      'Merchant Note': 'gift; wrap',
      CUSTOMFIELD1: '',
    });
  });

  it('converts DATE from the zone it is given', () => {
    const values = ['T', '2024-10-27 02:30:00'];
    expect(rowOf(normalizerFor(['TRANSACTIONID', 'DATE'], 'Europe/Paris')(values)).occurred_at).toBe(
      '2024-10-27T00:30:00Z',
    );
    expect(rowOf(normalizerFor(['TRANSACTIONID', 'DATE'])(values)).occurred_at).toBe('2024-10-27T02:30:00Z');
  });

  it('refuses an unknown zone before any record', () => {
    expect(() => normalizerFor(['TRANSACTIONID'], 'Mars/Olympus_Mons')).toThrow(
      expect.objectContaining({ code: 'CONFIG', message: expect.stringContaining('"Mars/Olympus_Mons"') }),
    );
  });

  it('gives each record its own result: a rejected row does not leak into the next', () => {
    const normalize = normalizerFor(['TRANSACTIONID', 'AMOUNT', 'CURRENCY', 'SCHEDULE']);
    expect(reasonOf(normalize(['T1', 'x', 'EUR', '[1-2]']))).toMatch(/^AMOUNT/);
    expect(rowOf(normalize(['T2', '', '', '']))).toEqual({ ...EMPTY_ROW, transaction_id: 'T2' });
    expect(rowOf(normalize(['T3', '1', 'JPY', '[1-2]']))).toMatchObject({ amount_minor: 1n, schedule_index: 1 });
  });
});
