import { describe, expect, it } from 'vitest';
import type { OrderImportResult } from '../../src/orders/order-import-result.ts';
import { formatOrderImportJson, formatOrderImportSummary } from '../../src/terminal/order-import-summary.ts';

const loaded: OrderImportResult = {
  source: 'file',
  name: 'orders/may.csv',
  sha256: 'ab'.repeat(32),
  status: 'loaded',
  importId: '4',
  rows: 12,
  inserted: 5,
  updated: 2,
  unchanged: 3,
  superseded: 0,
  rejected: 2,
};
const failed: OrderImportResult = {
  source: 'database',
  name: 'db.example:5432/shop',
  sha256: null,
  status: 'failed',
  importId: '5',
  errorCode: 'ORDERS_SOURCE',
  error: 'db.example:5432/shop: cannot connect to the orders database: connect ECONNREFUSED',
};

describe('formatOrderImportSummary', () => {
  it('prints one line per import, naming superseded rows only when there are some', () => {
    expect(formatOrderImportSummary(loaded)).toBe(
      'orders/may.csv: loaded rows=12 inserted=5 updated=2 unchanged=3 rejected=2',
    );
    expect(formatOrderImportSummary({ ...loaded, unchanged: 2, superseded: 1 })).toBe(
      'orders/may.csv: loaded rows=12 inserted=5 updated=2 unchanged=2 superseded=1 rejected=2',
    );
    expect(formatOrderImportSummary(failed)).toBe(
      'db.example:5432/shop: failed: cannot connect to the orders database: connect ECONNREFUSED',
    );
  });
});

describe('formatOrderImportJson', () => {
  it('has the same keys for both statuses, null where they do not apply', () => {
    const keys = Object.keys(JSON.parse(formatOrderImportJson(loaded)));
    expect(Object.keys(JSON.parse(formatOrderImportJson(failed)))).toEqual(keys);
    expect(JSON.parse(formatOrderImportJson(loaded))).toEqual({ ...loaded, errorCode: null, error: null });
    expect(JSON.parse(formatOrderImportJson(failed))).toEqual({
      ...failed,
      rows: null,
      inserted: null,
      updated: null,
      unchanged: null,
      superseded: null,
      rejected: null,
    });
  });
});
