import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import {
  feesMinorOf,
  MERCHANT_IDENTIFIER,
  reconcileScenarios,
  transactionIdOf,
} from '../../bench/reconcile-scenarios.ts';
import { majorUnits, writeScenarioFiles } from '../../bench/scenario-csv.ts';
import { planHeader } from '../../src/normalize/header-plan.ts';
import { createRecordNormalizer } from '../../src/normalize/record-normalizer.ts';
import { createCsvOrderNormalizer, planOrderHeader } from '../../src/orders/order-csv.ts';

const ORDERS = 3_000;
const dir = await mkdtemp(path.join(os.tmpdir(), 'recon-scenario-csv-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

function normalized<Row>(csv: string, normalizerOf: (header: string[]) => (values: string[]) => Row) {
  const records: string[][] = parse(csv, { delimiter: ';' });
  const [header, ...rows] = records;
  const normalize = normalizerOf(header!);
  return rows.map(normalize);
}

describe('writeScenarioFiles', () => {
  it('writes, through recon’s own rules, the rows bench:reconcile COPYs', async () => {
    const exportPath = path.join(dir, 'export.csv');
    const ordersPath = path.join(dir, 'orders.csv');
    const { transactions } = await writeScenarioFiles(ORDERS, exportPath, ordersPath);

    const scenarios = [...reconcileScenarios(ORDERS)];
    const expectedTransactions = scenarios.flatMap((s) => s.transactions);
    const expectedOrders = scenarios.flatMap((s) => (s.order ? [s.order] : []));
    expect(transactions).toBe(expectedTransactions.length);

    const rows = normalized(await readFile(exportPath, 'utf8'), (header) =>
      createRecordNormalizer(planHeader(header, 'export'), { timezone: 'UTC' }),
    );
    expect(rows.map((r) => (r.ok ? r.row : r.reason))).toEqual(
      expectedTransactions.map((t, i) =>
        expect.objectContaining({
          transaction_id: transactionIdOf(i + 1),
          identifier: MERCHANT_IDENTIFIER,
          order_id: t.orderId,
          operation_type: t.operation,
          occurred_at: new Date(t.occurredMs).toISOString().replace('.000Z', 'Z'),
          amount_minor: BigInt(t.amountMinor),
          currency: t.currency,
          exec_code: t.execCode,
          fees_minor: BigInt(feesMinorOf(t.amountMinor)),
        }),
      ),
    );

    const orders = normalized(await readFile(ordersPath, 'utf8'), (header) =>
      createCsvOrderNormalizer(planOrderHeader(header, 'orders')),
    );
    expect(orders.map((r) => (r.ok ? r.row : r.reason))).toEqual(
      expectedOrders.map((o) =>
        expect.objectContaining({
          order_id: o.orderId,
          amount_minor: BigInt(o.amountMinor),
          currency: o.currency,
          status: o.status,
          refunded_minor: BigInt(o.refundedMinor),
          payment_method: o.method,
        }),
      ),
    );
  });

  it('writes amounts in the major units of each currency', () => {
    expect(majorUnits(12390, 'EUR')).toBe('123.90');
    expect(majorUnits(5, 'USD')).toBe('0.05');
    expect(majorUnits(1500, 'JPY')).toBe('1500');
    expect(() => majorUnits(1, 'KWD')).toThrow(/KWD/);
  });
});
