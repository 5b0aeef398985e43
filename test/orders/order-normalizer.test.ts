import { describe, expect, it } from 'vitest';
import { createCsvOrderNormalizer, planOrderHeader } from '../../src/orders/order-csv.ts';
import type { OrderNormalizeResult } from '../../src/orders/order-normalizer.ts';
import { createQueryRowNormalizer } from '../../src/orders/order-query-row.ts';
import type { OrderRow } from '../../src/orders/order-row.ts';

const HEADER = ['order_id', 'amount', 'currency', 'status', 'refunded_amount', 'payment_method', 'created_at'];
const GOOD = ['ORD-1', '120.50', 'EUR', 'paid', '', 'wallet', '2024-05-01T12:00:00+02:00'];
const GOOD_ROW: OrderRow = {
  order_id: 'ORD-1',
  amount_minor: 12050n,
  currency: 'EUR',
  status: 'paid',
  refunded_minor: 0n,
  payment_method: 'wallet',
  created_at: '2024-05-01T10:00:00Z',
};

const csvNormalizer = (header = HEADER) => createCsvOrderNormalizer(planOrderHeader(header, 'orders.csv'));
/** GOOD with the named columns replaced. */
const record = (changes: Record<string, string>) => HEADER.map((column, i) => changes[column] ?? GOOD[i]!);

function rowOf(result: OrderNormalizeResult): OrderRow {
  if (!result.ok) throw new Error(`rejected: ${result.reason}`);
  return result.row;
}

function reasonOf(result: OrderNormalizeResult): string {
  if (result.ok) throw new Error('accepted');
  return result.reason;
}

describe('the order rules on a csv record', () => {
  it('normalizes a good record', () => {
    expect(rowOf(csvNormalizer()(GOOD))).toEqual(GOOD_ROW);
  });

  it.each<[string, Record<string, string>, Partial<OrderRow>]>([
    [
      'amounts by the currency minor unit: JPY 0',
      { amount: '1500', currency: 'JPY' },
      { amount_minor: 1500n, currency: 'JPY' },
    ],
    [
      'amounts by the currency minor unit: KWD 3',
      { amount: '1.5', currency: 'KWD' },
      { amount_minor: 1500n, currency: 'KWD' },
    ],
    ['zeros beyond the minor unit', { amount: '100.00', currency: 'JPY' }, { amount_minor: 100n, currency: 'JPY' }],
    ['a lower-case currency', { currency: 'eur' }, { currency: 'EUR' }],
    ['an amount beyond 2^53 exactly', { amount: '90071992547409.93' }, { amount_minor: 9007199254740993n }],
    ['a zero amount', { amount: '0' }, { amount_minor: 0n }],
    [
      'a refunded amount',
      { status: 'partially_refunded', refunded_amount: '20.5' },
      { status: 'partially_refunded', refunded_minor: 2050n },
    ],
    [
      'a refund of the whole amount',
      { status: 'refunded', refunded_amount: '120.50' },
      { status: 'refunded', refunded_minor: 12050n },
    ],
    ['spaces only as refunded: 0', { refunded_amount: '  ' }, { refunded_minor: 0n }],
    [
      'status and method in any case, with spaces',
      { status: ' Authorized ', payment_method: 'INSTALMENT' },
      { status: 'authorized', payment_method: 'instalment' },
    ],
    [
      'created_at with a space and microseconds',
      { created_at: '2024-05-01 12:00:00.000001Z' },
      { created_at: '2024-05-01T12:00:00.000001Z' },
    ],
    ['an order id kept as written', { order_id: ' ORD 1 ' }, { order_id: ' ORD 1 ' }],
    ['an order id of 40 characters', { order_id: 'x'.repeat(40) }, { order_id: 'x'.repeat(40) }],
    ['an order id of 40 characters beyond the BMP', { order_id: '😀'.repeat(40) }, { order_id: '😀'.repeat(40) }],
  ])('accepts %s', (_name, changes, expected) => {
    expect(rowOf(csvNormalizer()(record(changes)))).toEqual({ ...GOOD_ROW, ...expected });
  });

  it.each<[string, Record<string, string>, string]>([
    ['an empty order id', { order_id: '' }, 'order_id: empty, but every order needs one'],
    ['an order id of spaces', { order_id: '   ' }, 'order_id: empty, but every order needs one'],
    [
      'an order id of 41 characters',
      { order_id: 'x'.repeat(41) },
      `order_id: "${'x'.repeat(40)}"... (41 characters) is longer than 40 characters`,
    ],
    ['an empty amount', { amount: '' }, 'amount: empty, but every order needs one'],
    ['a comma in the amount', { amount: '120,50' }, 'amount: "120,50" is not a decimal amount with a dot'],
    ['too many decimals', { amount: '1.005' }, 'amount: "1.005" has more decimals than allowed: 2 for EUR'],
    ['a negative amount', { amount: '-1.00' }, 'amount: "-1.00" is negative'],
    ['an empty currency', { currency: '' }, 'currency: empty, but every order needs one'],
    ['an unknown currency', { currency: 'EURO' }, 'currency: "EURO" is not an ISO 4217 currency code'],
    [
      'an unknown status',
      { status: 'shipped' },
      'status: "shipped" is not one of paid, authorized, cancelled, refunded, partially_refunded',
    ],
    [
      'an empty status',
      { status: '' },
      'status: empty, but every order needs one of paid, authorized, cancelled, refunded, partially_refunded',
    ],
    ['an unknown method', { payment_method: 'card' }, 'payment_method: "card" is not one of instalment, wallet'],
    [
      'refunded above amount',
      { refunded_amount: '120.51' },
      'refunded_amount: "120.51" is more than the amount "120.50"',
    ],
    ['a negative refund', { refunded_amount: '-1' }, 'refunded_amount: "-1" is negative'],
    ['a bad refund', { refunded_amount: 'abc' }, 'refunded_amount: "abc" is not a decimal amount with a dot'],
    [
      'created_at without offset',
      { created_at: '2024-05-01T12:00:00' },
      'created_at: "2024-05-01T12:00:00" has no UTC offset (Z or +hh:mm), so the instant it means is unknown',
    ],
    ['an empty created_at', { created_at: '' }, 'created_at: empty, but every order needs one'],
    [
      'a created_at that is not a date',
      { created_at: '2023-02-29T00:00:00Z' },
      'created_at: "2023-02-29T00:00:00Z" is not a calendar date',
    ],
  ])('rejects %s, naming the column', (_name, changes, reason) => {
    expect(reasonOf(csvNormalizer()(record(changes)))).toBe(reason);
  });

  it('rejects a record with another number of values than the header', () => {
    expect(reasonOf(csvNormalizer()([...GOOD, 'extra']))).toBe('expected 7 columns, found 8');
    expect(reasonOf(csvNormalizer()(GOOD.slice(0, 3)))).toBe('expected 7 columns, found 3');
  });

  it('reads columns in any order and case, names them as the header writes them, and ignores other columns', () => {
    const header = ['\uFEFFCreated_At', 'Note', 'STATUS', 'Payment_Method', 'Currency', 'Amount', 'Order_ID'];
    const normalize = csvNormalizer(header);
    expect(rowOf(normalize(['2024-05-01T10:00:00Z', 'gift', 'paid', 'wallet', 'EUR', '120.5', 'ORD-1']))).toEqual(
      GOOD_ROW,
    );
    expect(reasonOf(normalize(['2024-05-01T10:00:00Z', '', 'paid', 'wallet', 'EUR', 'x', 'ORD-1']))).toBe(
      'Amount: "x" is not a decimal amount with a dot',
    );
  });
});

describe('the order rules on a row of the orders query', () => {
  const GOOD_QUERY_ROW = {
    order_id: 'ORD-1',
    amount_minor: '12050',
    currency: 'EUR',
    status: 'paid',
    refunded_minor: '0',
    payment_method: 'wallet',
    created_at: '2024-05-01 10:00:00+00',
  };
  const normalize = createQueryRowNormalizer();

  it('normalizes a row in minor units, and a NULL or absent refunded_minor is 0', () => {
    expect(rowOf(normalize(GOOD_QUERY_ROW))).toEqual(GOOD_ROW);
    expect(rowOf(normalize({ ...GOOD_QUERY_ROW, refunded_minor: null }))).toEqual(GOOD_ROW);
    const { refunded_minor: _absent, ...withoutRefund } = GOOD_QUERY_ROW;
    expect(rowOf(normalize(withoutRefund))).toEqual(GOOD_ROW);
    expect(rowOf(normalize({ ...GOOD_QUERY_ROW, amount_minor: '9223372036854775807', currency: 'JPY' }))).toMatchObject(
      { amount_minor: 9223372036854775807n },
    );
  });

  it.each<[string, Record<string, string | null>, string]>([
    ['a NULL order id', { order_id: null }, 'order_id: empty, but every order needs one'],
    ['a NULL amount', { amount_minor: null }, 'amount_minor: empty, but every order needs one'],
    [
      'an amount in major units',
      { amount_minor: '120.50' },
      'amount_minor: "120.50" is not a whole number of minor units',
    ],
    ['a negative amount', { amount_minor: '-5' }, 'amount_minor: "-5" is negative'],
    [
      'refunded above amount',
      { refunded_minor: '12051' },
      'refunded_minor: "12051" is more than the amount_minor "12050"',
    ],
    ['a NULL currency', { currency: null }, 'currency: empty, but every order needs one'],
    [
      'a NULL status',
      { status: null },
      'status: empty, but every order needs one of paid, authorized, cancelled, refunded, partially_refunded',
    ],
    [
      'a timestamp without zone',
      { created_at: '2024-05-01 10:00:00' },
      'created_at: "2024-05-01 10:00:00" has no UTC offset (Z or +hh:mm), so the instant it means is unknown',
    ],
  ])('rejects %s, naming the column', (_name, changes, reason) => {
    expect(reasonOf(normalize({ ...GOOD_QUERY_ROW, ...changes }))).toBe(reason);
  });
});
