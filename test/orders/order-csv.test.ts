import { describe, expect, it } from 'vitest';
import { planOrderHeader } from '../../src/orders/order-csv.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

const plan = (header: string[]) => () => Promise.resolve().then(() => planOrderHeader(header, 'orders.csv'));

describe('planOrderHeader', () => {
  it('finds each column case-insensitively, past a BOM and spaces; refunded_amount is optional', () => {
    const result = planOrderHeader(
      ['\uFEFF Order_Id ', 'x', 'AMOUNT', 'currency', 'Status', 'payment_method', 'created_at'],
      'orders.csv',
    );
    expect(result.width).toBe(7);
    expect(result.positions).toEqual({
      orderId: 0,
      amount: 2,
      currency: 3,
      status: 4,
      refunded: -1,
      paymentMethod: 5,
      createdAt: 6,
    });
    expect(result.names).toMatchObject({
      orderId: 'Order_Id',
      amount: 'AMOUNT',
      status: 'Status',
      refunded: 'refunded_amount',
    });
  });

  it.each<[string, string[], string]>([
    [
      'one required column',
      ['order_id', 'amount', 'currency', 'status', 'payment_method'],
      'orders.csv: the header has no column created_at (found: "order_id, amount, currency, status, payment_method")',
    ],
    [
      'several',
      ['order_id', 'amount_minor', 'currency'],
      'orders.csv: the header has no columns amount, status, payment_method, created_at (found: "order_id, amount_minor, currency")',
    ],
    [
      'a column twice',
      ['order_id', 'amount', 'Amount'],
      'orders.csv: column "amount" appears twice in the header (columns 2 and 3)',
    ],
  ])('fails the file by its header: %s', async (_name, header, message) => {
    expect(await expectReconError(plan(header), 'CSV_HEADER')).toBe(message);
  });
});
