import type { Database } from '../../src/db/database.ts';
import { reconcile, type RunSummary } from '../../src/reconcile/reconcile.ts';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';
import { ago, DAY, HOUR, ingestTransactions, insertOrders } from '../reconcile/reconcile-scenario.ts';

/** A nightly-like run at 06:30 Paris: the last day with money is the day before. */
export const MORNING = new Date('2026-11-20T05:30:00Z');
export const INSTALMENT = 'SHOP-INST';
export const WALLET = 'SHOP-WALLET';

/**
 * The money of an accountant's morning, through real ingest and a real run over all orders: payments with fees,
 * a refund, a USD order paid 520.43 in EUR (currency_mismatch, in no bridge), an unknown ORDERID paid in EUR and GBP
 * (counted in EUR, its first currency), a payment without a CURRENCY (counted in its order's), an authorization never
 * captured (capture_expired: no difference, its money at risk), a refunds-only KWD order (a negative net), and a
 * payment on an account that does not serve its order's payment method (matched, with a warning).
 */
export async function morningRun(database: Database, dir: string): Promise<RunSummary> {
  await syncAccounts(database.db, [
    { identifier: INSTALMENT, group: 'shop', paymentMethods: ['instalment'] },
    { identifier: WALLET, group: 'shop', paymentMethods: ['wallet'] },
  ]);
  const created = (days: number) => ago(MORNING, days * DAY);
  await insertOrders(database, [
    { id: 'M-1', amount: 10000n, status: 'paid', createdAt: created(3) },
    { id: 'M-2', amount: 8000n, status: 'partially_refunded', refunded: 3000n, createdAt: created(2) },
    { id: 'C-1', amount: 7500n, status: 'authorized', createdAt: created(10) },
    { id: 'X-USD', amount: 52043n, currency: 'USD', status: 'paid', createdAt: created(2) },
    { id: 'N-1', amount: 2000n, status: 'paid', createdAt: created(2) },
    { id: 'W-1', amount: 4000n, status: 'paid', method: 'wallet', createdAt: created(1) },
    { id: 'K-1', amount: 12345n, currency: 'KWD', status: 'refunded', refunded: 12345n, createdAt: created(3) },
  ]);
  const on = (days: number, hour = 10) => ago(MORNING, days * DAY - hour * HOUR);
  await ingestTransactions(database, dir, [
    {
      id: 'T-M1',
      orderId: 'M-1',
      type: 'payment',
      amount: '100.00',
      exec: '0000',
      at: on(2),
      fees: '1.50',
      identifier: WALLET,
    },
    {
      id: 'T-M2',
      orderId: 'M-2',
      type: 'payment',
      amount: '80.00',
      exec: '0000',
      at: on(2),
      fees: '1.20',
      identifier: WALLET,
    },
    {
      id: 'T-M2R',
      orderId: 'M-2',
      type: 'refund',
      amount: '30.00',
      exec: '0000',
      at: on(1),
      fees: '0.30',
      identifier: WALLET,
    },
    { id: 'T-C1', orderId: 'C-1', type: 'authorization', amount: '75.00', exec: '0000', at: on(9), identifier: WALLET },
    {
      id: 'T-XUSD',
      orderId: 'X-USD',
      type: 'payment',
      amount: '520.43',
      currency: 'EUR',
      exec: '0000',
      at: on(1),
      fees: '5.20',
      identifier: WALLET,
    },
    {
      id: 'T-N1',
      orderId: 'N-1',
      type: 'payment',
      amount: '20.00',
      currency: '',
      exec: '0000',
      at: on(1),
      identifier: WALLET,
    },
    {
      id: 'T-W1',
      orderId: 'W-1',
      type: 'payment',
      amount: '40.00',
      exec: '0000',
      at: on(1),
      fees: '0.40',
      identifier: INSTALMENT,
    },
    { id: 'T-U1', orderId: 'U-1', type: 'payment', amount: '5.00', exec: '0000', at: on(1), identifier: WALLET },
    {
      id: 'T-U2',
      orderId: 'U-1',
      type: 'payment',
      amount: '3.00',
      currency: 'GBP',
      exec: '0000',
      at: on(1),
      identifier: WALLET,
    },
    // A KWD order paid long ago and refunded yesterday: the run's KWD money is a refund alone.
    {
      id: 'T-K1R',
      orderId: 'K-1',
      type: 'refund',
      amount: '12.345',
      currency: 'KWD',
      exec: '0000',
      at: on(1),
      fees: '0.120',
      identifier: WALLET,
    },
  ]);
  return reconcile(database, { scope: { kind: 'all' }, asOf: MORNING, toleranceMinor: 0n, graceHours: 24 });
}
