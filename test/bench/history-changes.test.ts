import { parse } from 'csv-parse/sync';
import { EXPORT_COLUMNS } from '@recon/protocol';
import { describe, expect, it } from 'vitest';
import { asOfOfRun, changedPerStep, historyChanges, type ChangeStep } from '../../bench/history-changes.ts';
import { AS_OF, orderIdOf, reconcileScenarios, transactionIdOf } from '../../bench/reconcile-scenarios.ts';
import { exportLine } from '../../bench/scenario-csv.ts';
import { cleanHeaderName } from '../../src/normalize/export-columns.ts';
import { planHeader } from '../../src/normalize/header-plan.ts';
import { createRecordNormalizer } from '../../src/normalize/record-normalizer.ts';
import type { TransactionRow } from '../../src/normalize/transaction-row.ts';
import { createCsvOrderNormalizer, planOrderHeader } from '../../src/orders/order-csv.ts';
import type { OrderRow } from '../../src/orders/order-row.ts';

const ORDERS = 20_000;
const STEPS = 9;
const steps = historyChanges(ORDERS, STEPS);

const records = (csv: string): string[][] => parse(csv, { delimiter: ';', relax_column_count: true });

/** The export file of a step read as recon reads it: every row must pass recon's own normalizer. */
function exportRows(step: ChangeStep): TransactionRow[] {
  const [header, ...rows] = records(step.exportCsv);
  const normalize = createRecordNormalizer(planHeader(header!, 'changes'), { timezone: 'UTC' });
  return rows.map((values, i) => {
    const result = normalize(values);
    if (!result.ok) throw new Error(`run ${step.run}, line ${i + 2}: ${result.reason}`);
    return result.row;
  });
}

function orderRows(step: ChangeStep): OrderRow[] {
  const [header, ...rows] = records(step.ordersCsv);
  const normalize = createCsvOrderNormalizer(planOrderHeader(header!, 'orders'));
  return rows.map((values, i) => {
    const result = normalize(values);
    if (!result.ok) throw new Error(`run ${step.run}, line ${i + 2}: ${result.reason}`);
    return result.row;
  });
}

describe('historyChanges', () => {
  it('gives the same files for the same arguments, and others for another seed', () => {
    expect(historyChanges(ORDERS, STEPS)).toEqual(steps);
    const other = historyChanges(ORDERS, STEPS, 22);
    expect(other.map((s) => s.exportCsv)).not.toEqual(steps.map((s) => s.exportCsv));
  });

  it('changes 1% of the orders before each of runs 2..10, other orders each time', () => {
    expect(steps.map((s) => s.run)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const known = new Set(Array.from({ length: ORDERS }, (_, n) => orderIdOf(n)));
    const seen = new Set<string>();
    for (const step of steps) {
      expect(step.orderIds).toHaveLength(ORDERS / 100);
      expect(new Set(step.orderIds).size).toBe(step.orderIds.length);
      for (const id of step.orderIds) {
        expect(known.has(id)).toBe(true);
        expect(seen.has(id)).toBe(false);
        seen.add(id);
      }
      expect(Object.values(step.kinds).reduce((a, b) => a + b, 0)).toBe(step.orderIds.length);
    }
    expect(changedPerStep(1_000_000)).toBe(10_000);
    expect(changedPerStep(50)).toBe(1);
  });

  it('writes an export file with the columns of EXPORT_COLUMNS that recon normalizes row by row', () => {
    for (const step of steps) {
      const [header, ...rows] = records(step.exportCsv);
      expect(header!.map(cleanHeaderName)).toEqual([...EXPORT_COLUMNS]);
      for (const row of rows) expect(row).toHaveLength(EXPORT_COLUMNS.length);
      expect(exportRows(step)).toHaveLength(step.exportRows);
    }
  });

  it('writes an orders csv that recon reads row by row, for some of the orders changed', () => {
    for (const step of steps) {
      const rows = orderRows(step);
      expect(rows).toHaveLength(step.orderRows);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.length).toBeLessThan(step.orderIds.length);
      const changed = new Set(step.orderIds);
      for (const row of rows) expect(changed.has(row.order_id)).toBe(true);
    }
  });

  it('touches every changed order and no other, with new transactions dated in the day before the run', () => {
    const newIds = new Set<string>();
    for (const step of steps) {
      const rows = exportRows(step);
      expect(new Set(rows.map((r) => r.order_id))).toEqual(new Set(step.orderIds));
      const dayBefore = Date.parse(asOfOfRun(step.run - 1));
      for (const row of rows.filter((r) => !r.transaction_id.startsWith('T'))) {
        expect(newIds.has(row.transaction_id)).toBe(false);
        newIds.add(row.transaction_id);
        const at = Date.parse(row.occurred_at!);
        expect(at).toBeGreaterThan(dayBefore);
        expect(at).toBeLessThan(Date.parse(step.asOf));
      }
    }
    expect(asOfOfRun(1)).toBe(AS_OF);
    expect(asOfOfRun(10)).toBe('2026-11-29T00:00:00.000Z');
  });

  it('re-exports a loaded transaction with only its EXECCODE changed, under its TRANSACTIONID', () => {
    const loaded = new Map<string, string>();
    let sequence = 0;
    for (const { transactions } of reconcileScenarios(ORDERS))
      for (const transaction of transactions) {
        const id = transactionIdOf(++sequence);
        loaded.set(id, exportLine(transaction, id));
      }
    let reexported = 0;
    for (const step of steps) {
      for (const line of step.exportCsv.split('\n').slice(1, -1)) {
        const values = line.split(';');
        const before = loaded.get(values[EXPORT_COLUMNS.indexOf('TRANSACTIONID')]!);
        if (!before) continue;
        reexported++;
        const execCode = EXPORT_COLUMNS.indexOf('EXECCODE');
        const old = before.trimEnd().split(';');
        expect(values[execCode]).not.toBe(old[execCode]);
        expect(values.filter((_, i) => i !== execCode)).toEqual(old.filter((_, i) => i !== execCode));
      }
    }
    expect(reexported).toBeGreaterThan(0);
    expect(steps.reduce((n, s) => n + s.kinds.execcode, 0)).toBe(reexported);
  });

  it('refuses more steps than the orders can be shared out to', () => {
    expect(() => historyChanges(500, 101)).toThrow(/need more than 500 orders/);
  });
});
