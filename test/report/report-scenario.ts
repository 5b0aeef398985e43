import type { Database } from '../../src/db/database.ts';
import { reconcile, type RunSummary } from '../../src/reconcile/reconcile.ts';
import { ago, DAY, HOUR, ingestTransactions, insertOrders } from '../reconcile/reconcile-scenario.ts';

/** Order ids an attacker could choose: they must come out inert in every format. */
export const SCRIPT_ID = '<script>alert(1)</script>';
export const FORMULA_ID = '=HYPERLINK("http://evil.test","x")';
export const UNKNOWN_ID = 'U-<img src=x onerror=alert(2)>';

export const AS_OF = new Date('2026-11-20T12:00:00Z');

/**
 * Two real reconciliation runs over three currencies (EUR, JPY, KWD), orders created over eleven days:
 * run 1 an hour before AS_OF, then J-2's payment arrives, then run 2 at AS_OF. Run 2 has matched, pending,
 * amount_mismatch, duplicate_payment, missing_at_provider (the hostile ids among them) and an unknown order
 * (persisting), and J-2 resolved.
 */
export async function twoRuns(database: Database, dir: string): Promise<{ first: RunSummary; second: RunSummary }> {
  const created = (days: number) => ago(AS_OF, days * DAY);
  await insertOrders(database, [
    ...[10, 9, 9, 7, 6, 4, 3].map((days, i) => ({
      id: `M-${i + 1}`,
      amount: 10000n,
      status: 'paid' as const,
      createdAt: created(days),
    })),
    { id: 'A-1', amount: 10000n, status: 'paid', createdAt: created(8) },
    { id: 'J-1', amount: 1500n, currency: 'JPY', status: 'paid', createdAt: created(5) },
    { id: 'J-2', amount: 2000n, currency: 'JPY', status: 'paid', createdAt: created(5) },
    { id: 'K-1', amount: 12345n, currency: 'KWD', status: 'paid', createdAt: created(2) },
    { id: 'K-2', amount: 1000n, currency: 'KWD', status: 'paid', createdAt: created(2) },
    { id: 'P-1', amount: 5000n, status: 'paid', createdAt: ago(AS_OF, 2 * HOUR) },
    { id: SCRIPT_ID, amount: 4200n, status: 'paid', createdAt: created(1) },
    { id: FORMULA_ID, amount: 100n, status: 'paid', createdAt: created(1) },
  ]);
  const paid = (id: string, orderId: string, amount: string, currency: string, days: number) => ({
    id,
    orderId,
    type: 'payment' as const,
    amount,
    currency,
    exec: '0000',
    at: ago(AS_OF, days * DAY - HOUR),
  });
  await ingestTransactions(database, dir, [
    ...[10, 9, 9, 7, 6, 4, 3].map((days, i) => paid(`TM-${i + 1}`, `M-${i + 1}`, '100.00', 'EUR', days)),
    paid('TA-1', 'A-1', '90.00', 'EUR', 8),
    paid('TJ-1', 'J-1', '1500', 'JPY', 5),
    paid('TK-1', 'K-1', '12.345', 'KWD', 2),
    paid('TK-2a', 'K-2', '1.000', 'KWD', 2),
    paid('TK-2b', 'K-2', '1.000', 'KWD', 2),
    paid('TU-1', UNKNOWN_ID, '5.00', 'EUR', 6),
  ]);
  const settings = { scope: { kind: 'all' } as const, toleranceMinor: 0n, graceHours: 24 };
  const first = await reconcile(database, { ...settings, asOf: ago(AS_OF, HOUR) });
  await ingestTransactions(database, dir, [paid('TJ-2', 'J-2', '2000', 'JPY', 4)]);
  const second = await reconcile(database, { ...settings, asOf: AS_OF });
  return { first, second };
}
