import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSandbox,
  instalmentAndWalletAccounts,
  INSTALMENT_ACCOUNT_IDENTIFIER,
  SCENARIO_ACCOUNT_GROUP,
  WALLET_ACCOUNT_IDENTIFIER,
  scenarioOrders,
  type Sandbox,
} from '@recon/sandbox';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { startNightlyHarness, type HarnessAccount, type NightlyHarness } from './nightly-harness.ts';

const DAY = 86_400_000;
const BATCH = 7;
const SANDBOX_ACCOUNTS = instalmentAndWalletAccounts({ instalment: 'instalment-secret', wallet: 'wallet-secret' });

/**
 * A merchant with two accounts at the sandbox (instalment and wallet, one group there), over real sockets: recon
 * configured with each account alone asks each for every batch, each request signed by its account with
 * SCOPE=CLIENT; configured with the group, it asks once per batch with SCOPE=CLIENTSGROUP, signed by the group's
 * first account. Either way every transaction lands with the account it went through, and the run is done only
 * when every account's requests are in.
 */
describe.each(BACKENDS)('a nightly run with two accounts on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let sandbox: Sandbox;
  let sandboxUrl: string;

  beforeAll(async () => {
    if (skip) return;
    sandbox = createSandbox({ accounts: SANDBOX_ACCOUNTS, seed: 7 });
    sandboxUrl = await sandbox.listen(0);
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  /** A database with the scenario's orders, a harness configured with `accounts`, a run, and what it asked. */
  async function runWith(accounts: readonly HarnessAccount[]) {
    const testDb: TestDatabase = await createTestDatabase(backend);
    let harness: NightlyHarness | undefined;
    try {
      await syncAccounts(
        testDb.database.db,
        accounts.map((account) => ({
          identifier: account.identifier,
          group: account.group,
          paymentMethods: SANDBOX_ACCOUNTS.find((each) => each.identifier === account.identifier)!.paymentMethods,
        })),
      );
      // Each order with its payment method (amounts do not matter here); wallet for an ORDERID the merchant lacks.
      const methods = new Map(
        scenarioOrders(sandbox.store, sandbox.scenario!, new Date()).map((o) => [o.orderId, o.order?.paymentMethod]),
      );
      await insertOrders(
        testDb.database,
        sandbox.scenario!.orderIds.map((id) => ({
          id,
          amount: 100n,
          status: 'paid' as const,
          method: methods.get(id) ?? 'wallet',
          createdAt: new Date(Date.now() - DAY),
        })),
      );
      harness = await startNightlyHarness(
        testDb.database,
        sandboxUrl,
        { exportBatchSize: BATCH, exportCompression: 'gzip' },
        undefined,
        accounts,
      );
      const runId = await harness.start('2026-11-23');
      const state = await harness.settled(runId);
      const db = testDb.database.db;
      const run = await db
        .selectFrom('recon.nightly_runs')
        .selectAll()
        .where('nightly_run_id', '=', runId)
        .executeTakeFirstOrThrow();
      const requests = await db
        .selectFrom('recon.export_requests')
        .select(['batch', 'attempt', 'state', 'identifier', 'scope', 'order_ids'])
        .where('nightly_run_id', '=', runId)
        .orderBy('batch')
        .execute();
      const transactions = await db
        .selectFrom('recon.transactions')
        .select(['transaction_id', 'identifier'])
        .orderBy('transaction_id')
        .execute();
      const warned = await db
        .selectFrom('recon.verdicts')
        .select('order_id')
        .where('run_id', '=', run.reconciliation_run_id!)
        .where('warnings', 'is not', null)
        .where((eb) => eb(eb.fn('array_to_string', ['warnings', eb.val(' ')]), 'like', '%which does not serve%'))
        .execute();
      return { state, run, requests, transactions, warned };
    } finally {
      await harness?.close();
      await testDb.drop();
    }
  }

  /** What the sandbox holds for the scenario's orders: each transaction and the account it went through. */
  const held = () =>
    sandbox.store
      .all()
      .filter((t) => sandbox.scenario!.orderIds.includes(t.orderId))
      .map((t) => ({ transaction_id: t.transactionId, identifier: t.identifier }))
      .sort((a, b) => (a.transaction_id < b.transaction_id ? -1 : 1));

  it.skipIf(skip)('asks each account alone for every batch, and keeps each transaction on its account', async () => {
    const orders = sandbox.scenario!.orderIds.length;
    const { state, run, requests, transactions, warned } = await runWith(
      SANDBOX_ACCOUNTS.map(({ identifier, secret }) => ({ identifier, secret })),
    );
    expect(state).toBe('reconciled');
    const chunks = Math.ceil(orders / BATCH);
    expect(run.batches).toBe(2 * chunks);
    // Interleaved: batch 1 of each account, then batch 2 of each.
    expect(requests.map((r) => [r.batch, r.attempt, r.state, r.identifier, r.scope])).toEqual(
      requests.map((_, i) => [
        i + 1,
        1,
        'ingested',
        i % 2 === 0 ? INSTALMENT_ACCOUNT_IDENTIFIER : WALLET_ACCOUNT_IDENTIFIER,
        'CLIENT',
      ]),
    );
    for (const identifier of [INSTALMENT_ACCOUNT_IDENTIFIER, WALLET_ACCOUNT_IDENTIFIER]) {
      const asked = requests.filter((r) => r.identifier === identifier).flatMap((r) => r.order_ids);
      expect(asked.sort()).toEqual([...sandbox.scenario!.orderIds].sort());
    }
    expect(transactions).toEqual(held());
    expect(new Set(transactions.map((t) => t.identifier))).toEqual(
      new Set([INSTALMENT_ACCOUNT_IDENTIFIER, WALLET_ACCOUNT_IDENTIFIER]),
    );
    // The scenario places each of the merchant's orders on its method's account: nothing on the wrong one.
    const merchants = new Set(
      scenarioOrders(sandbox.store, sandbox.scenario!, new Date()).flatMap((o) => (o.order ? [o.orderId] : [])),
    );
    expect(warned.filter((verdict) => merchants.has(verdict.order_id))).toEqual([]);
  });

  it.skipIf(skip)('asks a group once per batch, SCOPE=CLIENTSGROUP, signed by its first account', async () => {
    const orders = sandbox.scenario!.orderIds.length;
    const { state, run, requests, transactions } = await runWith(
      SANDBOX_ACCOUNTS.map(({ identifier, secret }) => ({ identifier, secret, group: SCENARIO_ACCOUNT_GROUP })),
    );
    expect(state).toBe('reconciled');
    expect(run.batches).toBe(Math.ceil(orders / BATCH));
    expect(new Set(requests.map((r) => `${r.identifier} ${r.scope} ${r.state}`))).toEqual(
      new Set([`${INSTALMENT_ACCOUNT_IDENTIFIER} CLIENTSGROUP ingested`]),
    );
    // The group's export holds both accounts' transactions, each row naming its own.
    expect(transactions).toEqual(held());
  });
});
