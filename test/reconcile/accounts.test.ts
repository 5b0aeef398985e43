import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { ago, DAY, ingestTransactions, insertOrders } from './reconcile-scenario.ts';

const AS_OF = new Date('2026-11-20T12:00:00Z');
const INSTALMENT = 'SHOP-INST';
const WALLET = 'SHOP-WALLET';

/**
 * Several accounts: an order's transactions count whichever account they went through, and a payment on an account
 * that does not serve the order's payment method is a warning on its verdict, not another status.
 */
describe.each(BACKENDS)('orders paid through several accounts on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let dir: string;
  let runId: string;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-accounts-'));
    await syncAccounts(testDb.database.db, [
      { identifier: INSTALMENT, group: 'shop', paymentMethods: ['instalment'] },
      { identifier: WALLET, group: 'shop', paymentMethods: ['wallet'] },
    ]);
    const createdAt = ago(AS_OF, 3 * DAY);
    await insertOrders(testDb.database, [
      { id: 'RIGHT', amount: 30000n, status: 'paid', method: 'instalment', createdAt },
      { id: 'WRONG', amount: 1000n, status: 'paid', method: 'wallet', createdAt },
      { id: 'SPLIT', amount: 2000n, status: 'partially_refunded', refunded: 500n, method: 'wallet', createdAt },
    ]);
    const at = ago(AS_OF, 2 * DAY);
    await ingestTransactions(testDb.database, dir, [
      { id: 'T-RIGHT', orderId: 'RIGHT', type: 'payment', amount: '300.00', exec: '0000', at, identifier: INSTALMENT },
      { id: 'T-WRONG', orderId: 'WRONG', type: 'payment', amount: '10.00', exec: '0000', at, identifier: INSTALMENT },
      // A failed attempt on the wrong account moved no money: no warning for it.
      { id: 'T-WRONG-0', orderId: 'WRONG', type: 'payment', amount: '10.00', exec: '4001', at, identifier: INSTALMENT },
      { id: 'T-SPLIT-P', orderId: 'SPLIT', type: 'payment', amount: '20.00', exec: '0000', at, identifier: WALLET },
      { id: 'T-SPLIT-R', orderId: 'SPLIT', type: 'refund', amount: '5.00', exec: '0000', at, identifier: INSTALMENT },
    ]);
    const summary = await reconcile(testDb.database, {
      scope: { kind: 'all' },
      asOf: AS_OF,
      toleranceMinor: 0n,
      graceHours: 24,
    });
    runId = summary.runId;
  });
  afterAll(async () => {
    await testDb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const verdicts = () =>
    testDb.database.db
      .selectFrom('recon.verdicts')
      .select(['order_id', 'status', 'settled_minor', 'warnings'])
      .orderBy('order_id')
      .execute();

  it.skipIf(skip)('gathers an order across accounts and warns of a payment on the wrong account', async () => {
    expect(await verdicts()).toEqual([
      { order_id: 'RIGHT', status: 'matched', settled_minor: '30000', warnings: null },
      // The refund went through the other account: it still counts against the order.
      { order_id: 'SPLIT', status: 'matched', settled_minor: '1500', warnings: null },
      {
        order_id: 'WRONG',
        status: 'matched',
        settled_minor: '1000',
        warnings: ['payment T-WRONG on account SHOP-INST, which does not serve wallet'],
      },
    ]);
    const explained = await sql<{ warnings: unknown }>`SELECT explanation -> 'warnings' AS warnings
      FROM reporting.reconciliation WHERE order_id = 'WRONG'`.execute(testDb.database.db);
    expect(explained.rows[0]!.warnings).toEqual(['payment T-WRONG on account SHOP-INST, which does not serve wallet']);
  });

  it.skipIf(skip)('an account serving any method, or no account limited, warns of nothing', async () => {
    await syncAccounts(testDb.database.db, [
      { identifier: INSTALMENT, group: undefined, paymentMethods: undefined },
      { identifier: WALLET, group: undefined, paymentMethods: ['wallet'] },
    ]);
    await reconcile(testDb.database, { scope: { kind: 'all' }, asOf: AS_OF, toleranceMinor: 0n, graceHours: 24 });
    expect((await verdicts()).map((verdict) => verdict.warnings)).toEqual([null, null, null]);
    expect(
      await testDb.database.db
        .selectFrom('reporting.accounts' as 'recon.accounts')
        .selectAll()
        .execute(),
    ).toMatchObject([
      { identifier: INSTALMENT, account_group: null, payment_methods: null },
      { identifier: WALLET, account_group: null, payment_methods: ['wallet'] },
    ]);
  });

  it.skipIf(skip)("reads a run's bridge per account and currency, and each transaction's account", async () => {
    const totals = await sql<Record<string, unknown>>`SELECT identifier, account_group, currency, orders, transactions,
        paid_minor, refunded_minor, settled_minor, settled::text AS settled
      FROM reporting.run_account_totals WHERE run_id = ${runId}::bigint ORDER BY identifier`.execute(
      testDb.database.db,
    );
    // The run was judged with both accounts in group shop; the group is read as configured now.
    expect(totals.rows).toEqual([
      {
        identifier: INSTALMENT,
        account_group: null,
        currency: 'EUR',
        orders: 3,
        transactions: 3,
        paid_minor: '31000',
        refunded_minor: '500',
        settled_minor: '30500',
        settled: '305.00',
      },
      {
        identifier: WALLET,
        account_group: null,
        currency: 'EUR',
        orders: 1,
        transactions: 1,
        paid_minor: '2000',
        refunded_minor: '0',
        settled_minor: '2000',
        settled: '20.00',
      },
    ]);
    const transactions = await sql<{ transaction_id: string; identifier: string | null }>`SELECT transaction_id,
        identifier FROM reporting.transactions ORDER BY transaction_id`.execute(testDb.database.db);
    expect(transactions.rows).toEqual([
      { transaction_id: 'T-RIGHT', identifier: INSTALMENT },
      { transaction_id: 'T-SPLIT-P', identifier: WALLET },
      { transaction_id: 'T-SPLIT-R', identifier: INSTALMENT },
      { transaction_id: 'T-WRONG', identifier: INSTALMENT },
      { transaction_id: 'T-WRONG-0', identifier: INSTALMENT },
    ]);
  });

  it.skipIf(skip)(
    "freezes each run's bridge per account: a later run sees a revised transaction, earlier ones keep theirs",
    async () => {
      const { db } = testDb.database;
      const perAccount = async (run: string) =>
        (
          await sql<{
            identifier: string;
            orders: number;
            paid_minor: string;
            refunded_minor: string;
          }>`SELECT identifier,
            orders, paid_minor::text AS paid_minor, refunded_minor::text AS refunded_minor
          FROM reporting.run_account_totals WHERE run_id = ${run}::bigint ORDER BY identifier`.execute(db)
        ).rows;
      const options = { scope: { kind: 'all' as const }, asOf: AS_OF, toleranceMinor: 0n, graceHours: 24 };
      const first = await perAccount(runId);

      // Nothing changed: the run starts from the first and holds its figures.
      const unchanged = await reconcile(testDb.database, options);
      expect(await perAccount(unchanged.runId)).toEqual(first);

      // The refund of SPLIT, exported again, now went through the wallet account.
      await ingestTransactions(testDb.database, dir, [
        {
          id: 'T-SPLIT-R',
          orderId: 'SPLIT',
          type: 'refund',
          amount: '5.00',
          exec: '0000',
          at: ago(AS_OF, DAY),
          identifier: WALLET,
        },
      ]);
      const revised = await reconcile(testDb.database, options);
      expect(await perAccount(revised.runId)).toEqual([
        { identifier: INSTALMENT, orders: 2, paid_minor: '31000', refunded_minor: '0' },
        { identifier: WALLET, orders: 1, paid_minor: '2000', refunded_minor: '500' },
      ]);
      expect(await perAccount(runId)).toEqual(first);
      expect(await perAccount(unchanged.runId)).toEqual(first);
    },
  );

  it.skipIf(skip)(
    "copies the base run's bridge per account while no transaction is written, and reads them again once one is",
    async () => {
      const { db } = testDb.database;
      const perAccount = async (run: string) =>
        (
          await sql<Record<string, unknown>>`SELECT identifier, currency, orders, transactions,
            paid_minor::text AS paid_minor, refunded_minor::text AS refunded_minor, fees_minor::text AS fees_minor
          FROM recon.run_account_totals WHERE run_id = ${run}::bigint ORDER BY identifier`.execute(db)
        ).rows;
      const options = { scope: { kind: 'all' as const }, asOf: AS_OF, toleranceMinor: 0n, graceHours: 24 };
      const base = await reconcile(testDb.database, options);
      const createdAt = ago(AS_OF, 3 * DAY);

      // Orders change and arrive, no transaction does: WRONG's verdict changes, LATE has no transaction yet.
      await insertOrders(testDb.database, [
        { id: 'WRONG', amount: 2500n, status: 'paid', method: 'wallet', createdAt },
        { id: 'LATE', amount: 1200n, status: 'paid', method: 'wallet', createdAt },
      ]);
      const ordersChanged = await reconcile(testDb.database, options);
      const status = await db
        .selectFrom('recon.verdicts')
        .select(['order_id', 'status', 'run_id'])
        .where('order_id', 'in', ['LATE', 'WRONG'])
        .orderBy('order_id')
        .execute();
      expect(status).toEqual([
        { order_id: 'LATE', status: 'missing_at_provider', run_id: ordersChanged.runId },
        { order_id: 'WRONG', status: 'amount_mismatch', run_id: ordersChanged.runId },
      ]);
      expect(await perAccount(ordersChanged.runId)).toEqual(await perAccount(base.runId));
      const full = await reconcile(testDb.database, { ...options, full: true });
      expect(await perAccount(full.runId)).toEqual(await perAccount(ordersChanged.runId));

      // LATE is paid through the wallet account: written since, so the run reads the transactions again.
      await ingestTransactions(testDb.database, dir, [
        {
          id: 'T-LATE',
          orderId: 'LATE',
          type: 'payment',
          amount: '12.00',
          exec: '0000',
          at: ago(AS_OF, DAY),
          identifier: WALLET,
        },
      ]);
      const paid = await reconcile(testDb.database, options);
      const wallet = (await perAccount(paid.runId)).find((row) => row.identifier === WALLET);
      const walletBefore = (await perAccount(full.runId)).find((row) => row.identifier === WALLET);
      expect(wallet).toMatchObject({
        orders: (walletBefore!.orders as number) + 1,
        transactions: (walletBefore!.transactions as number) + 1,
        paid_minor: String(BigInt(walletBefore!.paid_minor as string) + 1200n),
      });
      expect(await perAccount((await reconcile(testDb.database, { ...options, full: true })).runId)).toEqual(
        await perAccount(paid.runId),
      );
    },
  );
});
