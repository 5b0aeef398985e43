import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSandbox,
  instalmentAndWalletAccounts,
  INSTALMENT_ACCOUNT_IDENTIFIER,
  SCENARIO_ACCOUNT_GROUP,
  scenarioOrders,
  WALLET_ACCOUNT_IDENTIFIER,
  type Sandbox,
} from '@recon/sandbox';
import { backfill } from '../../pipelines/backfill.ts';
import type { ExportAccount } from '../../src/client/export-accounts.ts';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * recon backfill for a merchant with two accounts at the sandbox (instalment and wallet, one group there), over
 * loopback: each account is asked (or the group once), the answers are gathered, every transaction keeps its
 * account, and a payment the service holds on the account of the other method is a warning on its order's verdict.
 */
const SANDBOX_ACCOUNTS = instalmentAndWalletAccounts({ instalment: 'instalment-secret', wallet: 'wallet-secret' });
const settings = { batchSize: 200, toleranceMinor: 0n, graceHours: 24 };

describe.each(BACKENDS)('a backfill with two accounts on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let sandbox: Sandbox;
  let testDb: TestDatabase;
  let baseUrl: string;
  /** One merchant order of each method that the service holds a succeeded payment or capture of. */
  let paid: { instalment: string; wallet: string };

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    sandbox = createSandbox({ accounts: SANDBOX_ACCOUNTS, seed: 7 });
    baseUrl = await sandbox.listen(0);
    const orders = scenarioOrders(sandbox.store, sandbox.scenario!, new Date()).flatMap((o) =>
      o.order ? [o.order] : [],
    );
    const withMoney = (method: 'instalment' | 'wallet') =>
      orders.find(
        (order) =>
          order.paymentMethod === method &&
          sandbox.store
            .byOrderId(order.orderId)
            .some((t) => t.execCode === '0000' && ['payment', 'capture'].includes(t.operationType)),
      )!.orderId;
    paid = { instalment: withMoney('instalment'), wallet: withMoney('wallet') };
    await insertOrders(
      testDb.database,
      orders.map((order) => ({
        id: order.orderId,
        amount: order.amount,
        currency: order.currency,
        status: order.status,
        refunded: order.refunded,
        method: order.paymentMethod,
        createdAt: order.createdAt,
      })),
    );
    await syncAccounts(
      testDb.database.db,
      SANDBOX_ACCOUNTS.map((a) => ({ identifier: a.identifier, group: a.group, paymentMethods: a.paymentMethods })),
    );
  });
  afterAll(async () => {
    await sandbox?.close();
    await testDb?.drop();
  });

  const accounts = (grouped: boolean): ExportAccount[] =>
    SANDBOX_ACCOUNTS.map((account) => ({
      identifier: account.identifier,
      group: grouped ? SCENARIO_ACCOUNT_GROUP : undefined,
      client: createPaymentClient({
        baseUrl,
        identifier: account.identifier,
        secret: account.secret,
        timeoutMs: 5_000,
        retry: { attempts: 1, baseDelayMs: 10 },
      }),
    }));
  const stored = (orderIds: readonly string[]) =>
    testDb.database.db
      .selectFrom('recon.transactions')
      .select(['transaction_id', 'identifier'])
      .where('order_id', 'in', orderIds)
      .orderBy('transaction_id')
      .execute();
  const held = (orderIds: readonly string[]) =>
    orderIds
      .flatMap((id) => sandbox.store.byOrderId(id))
      .map((t) => ({ transaction_id: t.transactionId, identifier: t.identifier }))
      .sort((a, b) => (a.transaction_id < b.transaction_id ? -1 : 1));

  it.skipIf(skip)('asks each account for the orders and gathers their answers', async () => {
    const orderIds = [paid.instalment, paid.wallet];
    const result = await backfill(testDb.database, accounts(false), { ...settings, orderIds });
    expect(result.requests.map((r) => [r.identifier, r.status])).toEqual([
      [INSTALMENT_ACCOUNT_IDENTIFIER, 'loaded'],
      [WALLET_ACCOUNT_IDENTIFIER, 'loaded'],
    ]);
    expect(result.requests.map((r) => r.file)).toEqual([
      expect.stringMatching(new RegExp(` from ${INSTALMENT_ACCOUNT_IDENTIFIER}$`)),
      expect.stringMatching(new RegExp(` from ${WALLET_ACCOUNT_IDENTIFIER}$`)),
    ]);
    expect(await stored(orderIds)).toEqual(held(orderIds));
    expect(result.verdicts.map((v) => [v.orderId, v.warnings])).toEqual([
      [paid.instalment, []],
      [paid.wallet, []],
    ]);
  });

  it.skipIf(skip)('asks a group once, and warns of a payment on the account of the other method', async () => {
    // The service holds the wallet order's payment on the instalment account.
    const moved = sandbox.store
      .byOrderId(paid.wallet)
      .find((t) => t.execCode === '0000' && ['payment', 'capture'].includes(t.operationType))!;
    sandbox.store.update(moved.transactionId, { identifier: INSTALMENT_ACCOUNT_IDENTIFIER });
    const orderIds = [paid.wallet];
    const result = await backfill(testDb.database, accounts(true), { ...settings, orderIds });
    expect(result.requests.map((r) => [r.identifier, r.status])).toEqual([[INSTALMENT_ACCOUNT_IDENTIFIER, 'loaded']]);
    expect(result.requests[0]!.file).toMatch(/ from group of sandbox-instalment$/);
    expect(await stored(orderIds)).toEqual(held(orderIds));
    expect(result.verdicts[0]!.warnings).toEqual([
      `${moved.operationType} ${moved.transactionId} on account ${INSTALMENT_ACCOUNT_IDENTIFIER}, which does not serve wallet`,
    ]);
  });
});
