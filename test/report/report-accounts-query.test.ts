import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';
import { loadRunReport } from '../../src/report/report-queries.ts';
import { ago, DAY, ingestTransactions, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const AS_OF = new Date('2026-11-20T12:00:00Z');
const INSTALMENT = 'SHOP-INST';
const WALLET = 'SHOP-WALLET';

/**
 * The report's money per account: what each processing account settled for a run's orders, per currency, read from
 * reporting.run_account_totals. On both backends, over a real run of orders paid through two accounts and none.
 */
describe.each(BACKENDS)('settled per account in report queries on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-report-accounts-'));
    await syncAccounts(testDb.database.db, [
      { identifier: INSTALMENT, group: 'shop', paymentMethods: undefined },
      { identifier: WALLET, group: undefined, paymentMethods: undefined },
    ]);
    const createdAt = ago(AS_OF, 3 * DAY);
    await insertOrders(testDb.database, [
      { id: 'INST', amount: 30000n, status: 'paid', createdAt },
      { id: 'SPLIT', amount: 2000n, status: 'partially_refunded', refunded: 500n, createdAt },
      { id: 'YEN', amount: 1500n, currency: 'JPY', status: 'paid', createdAt },
      { id: 'NONE', amount: 1000n, status: 'paid', createdAt },
    ]);
    const at = ago(AS_OF, 2 * DAY);
    await ingestTransactions(testDb.database, dir, [
      { id: 'T-INST', orderId: 'INST', type: 'payment', amount: '300.00', exec: '0000', at, identifier: INSTALMENT },
      { id: 'T-SPLIT-P', orderId: 'SPLIT', type: 'payment', amount: '20.00', exec: '0000', at, identifier: WALLET },
      // The refund went through the other account: each account shows its own share.
      { id: 'T-SPLIT-R', orderId: 'SPLIT', type: 'refund', amount: '5.00', exec: '0000', at, identifier: INSTALMENT },
      {
        id: 'T-YEN',
        orderId: 'YEN',
        type: 'payment',
        amount: '1500',
        currency: 'JPY',
        exec: '0000',
        at,
        identifier: WALLET,
      },
      { id: 'T-NONE', orderId: 'NONE', type: 'payment', amount: '10.00', exec: '0000', at },
      // A refused attempt moved no money: it counts nowhere.
      { id: 'T-NONE-0', orderId: 'NONE', type: 'payment', amount: '10.00', exec: '4001', at, identifier: WALLET },
    ]);
  });
  afterAll(async () => {
    await testDb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)('reads each account and currency, the transactions of no account last', async () => {
    const { runId } = await reconcile(testDb.database, {
      scope: { kind: 'all' },
      asOf: AS_OF,
      toleranceMinor: 0n,
      graceHours: 24,
    });
    const report = await loadRunReport(testDb.database.db, runId);
    expect(report.accounts).toEqual([
      {
        identifier: INSTALMENT,
        accountGroup: 'shop',
        currency: 'EUR',
        orders: 2,
        transactions: 2,
        paidMinor: '30000',
        refundedMinor: '500',
        settledMinor: '29500',
      },
      {
        identifier: WALLET,
        accountGroup: null,
        currency: 'EUR',
        orders: 1,
        transactions: 1,
        paidMinor: '2000',
        refundedMinor: '0',
        settledMinor: '2000',
      },
      {
        identifier: WALLET,
        accountGroup: null,
        currency: 'JPY',
        orders: 1,
        transactions: 1,
        paidMinor: '1500',
        refundedMinor: '0',
        settledMinor: '1500',
      },
      {
        identifier: null,
        accountGroup: null,
        currency: 'EUR',
        orders: 1,
        transactions: 1,
        paidMinor: '1000',
        refundedMinor: '0',
        settledMinor: '1000',
      },
    ]);
    // The accounts' shares of a currency add up to its bridge's settled.
    for (const bridge of report.bridge) {
      const shares = report.accounts.filter((account) => account.currency === bridge.currency);
      expect(shares.reduce((sum, account) => sum + BigInt(account.settledMinor), 0n).toString()).toBe(
        bridge.settledMinor,
      );
    }
  });

  it.skipIf(skip)("reads only the named run's orders", async () => {
    const { runId } = await reconcile(testDb.database, {
      scope: { kind: 'orders', orderIds: ['YEN'] },
      asOf: AS_OF,
      toleranceMinor: 0n,
      graceHours: 24,
    });
    const report = await loadRunReport(testDb.database.db, runId);
    expect(report.accounts.map((account) => [account.identifier, account.currency, account.settledMinor])).toEqual([
      [WALLET, 'JPY', '1500'],
    ]);
  });
});
