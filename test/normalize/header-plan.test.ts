import { describe, expect, it } from 'vitest';
import { EXPORT_COLUMNS, LATER_EXPORT_COLUMNS } from '@recon/protocol';
import { isReconError } from '../../src/errors.ts';
import { planHeader } from '../../src/normalize/header-plan.ts';
import { TRANSACTION_COLUMNS } from '../../src/normalize/transaction-row.ts';

function headerError(header: string[]): string {
  try {
    planHeader(header, 'export.csv.gz');
  } catch (error) {
    expect(isReconError(error, 'CSV_HEADER')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('planHeader accepted the header');
}

describe('planHeader', () => {
  it('maps the export columns to table columns in table order, SCHEDULE and RETRY to two each', () => {
    const header = ['DATE', 'TRANSACTIONID', 'SCHEDULE', 'AMOUNT', 'CURRENCY', 'RETRY', 'EXECCODE'];
    expect(planHeader(header, 'f')).toEqual({
      header,
      presentColumns: [
        'transaction_id',
        'occurred_at',
        'amount_minor',
        'currency',
        'exec_code',
        'schedule_index',
        'schedule_count',
        'retry_index',
        'retry_count',
      ],
      extraHeaders: [],
    });
  });

  it('knows every column of the export record table', () => {
    const header = [
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
    const plan = planHeader(header, 'f');
    expect(plan.extraHeaders).toEqual([]);
    expect(plan.presentColumns).toHaveLength(21);
  });

  it('matches names case-insensitively, ignoring surrounding spaces and a byte order mark', () => {
    const plan = planHeader(['\uFEFFtransactionId', ' Amount ', 'billingfees incl. vat', 'Rule Applied'], 'f');
    expect(plan.presentColumns).toEqual(['transaction_id', 'amount_minor', 'fees_minor', 'rule_applied']);
    expect(plan.extraHeaders).toEqual([]);
  });

  it("fills every table column from the protocol's documented record, and keeps its later columns as extra", () => {
    const plan = planHeader([...EXPORT_COLUMNS, ...LATER_EXPORT_COLUMNS], 'f');
    expect(plan.presentColumns).toEqual(TRANSACTION_COLUMNS);
    expect(plan.extraHeaders).toEqual([...LATER_EXPORT_COLUMNS]);
  });

  it('keeps unknown columns as extra, named as written', () => {
    const plan = planHeader(['TRANSACTIONID', 'Merchant Note', ' CUSTOMFIELD1 ', 'BILLINGFEES'], 'f');
    expect(plan.presentColumns).toEqual(['transaction_id']);
    expect(plan.extraHeaders).toEqual(['Merchant Note', 'CUSTOMFIELD1', 'BILLINGFEES']);
  });

  it('refuses a header without TRANSACTIONID', () => {
    expect(headerError(['ORDERID', 'AMOUNT'])).toBe(
      'export.csv.gz: the header has no TRANSACTIONID column (found: "ORDERID, AMOUNT")',
    );
    expect(headerError([])).toBe('export.csv.gz: the header has no TRANSACTIONID column (found: "")');
    expect(headerError(['x'.repeat(500)])).toMatch(
      /^export\.csv\.gz: the header has no TRANSACTIONID column \(found: "x{120}\.\.\."\)$/,
    );
  });

  it('refuses a column named twice, whatever the case', () => {
    expect(headerError(['TRANSACTIONID', 'AMOUNT', 'amount'])).toBe(
      'export.csv.gz: column "amount" appears twice in the header (columns 2 and 3)',
    );
    expect(headerError(['TRANSACTIONID', 'NOTE', 'NOTE'])).toBe(
      'export.csv.gz: column "NOTE" appears twice in the header (columns 2 and 3)',
    );
  });

  it('refuses a column without a name', () => {
    expect(headerError(['TRANSACTIONID', 'AMOUNT', ' '])).toBe('export.csv.gz: column 3 of the header has no name');
  });

  it('refuses the old export format, whose amounts are in cents', () => {
    expect(headerError(['TRANSACTIONID', 'AMOUNT', 'BILLINGFEESTTC'])).toBe(
      'export.csv.gz: old export format (column BILLINGFEESTTC, AMOUNT in cents) is not supported: ' +
        'request a new export, whose amounts are decimal major units with "BILLINGFEES INCL. VAT"',
    );
    expect(headerError(['transactionid', 'billingfeesttc'])).toMatch(/old export format/);
  });
});
