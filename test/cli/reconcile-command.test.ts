import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ago, DAY, ingestTransactions, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { oneProcessPerExitCode, runReconInProcess } from './run-recon.ts';

const AS_OF = '2026-11-20T12:00:00Z';
// Each exit code's first run in this file is a process of its own, on whichever backend runs first; the others run in
// this one. A process on PGlite opens its database from scratch: seconds of CPU for nothing the exit code depends on.
const variant = oneProcessPerExitCode();

describe.each(BACKENDS)('recon reconcile on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-reconcile-cli-'));
    const asOf = new Date(AS_OF);
    await insertOrders(testDb.database, [
      { id: 'cli-ok', amount: 10000n, status: 'paid', createdAt: ago(asOf, 3 * DAY) },
      { id: 'cli-short', amount: 1000n, currency: 'JPY', status: 'paid', createdAt: ago(asOf, 3 * DAY) },
      { id: 'cli-lonely', amount: 500n, status: 'paid', createdAt: ago(asOf, 3 * DAY) },
    ]);
    await ingestTransactions(testDb.database, tmp, [
      { id: 'cli-t1', orderId: 'cli-ok', type: 'payment', amount: '100.00', exec: '0', at: ago(asOf, DAY) },
      {
        id: 'cli-t2',
        orderId: 'cli-short',
        type: 'payment',
        amount: '900',
        currency: 'JPY',
        exec: '0',
        at: ago(asOf, DAY),
      },
    ]);
    // A PGlite directory is opened by one process at a time: the CLI's, while it runs.
    await testDb.close();
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const reconcileCli = (...args: string[]) => runReconInProcess(['reconcile', ...args], testDb.env);
  const reconcileExiting = (code: number, ...args: string[]) => variant(['reconcile', ...args], testDb.env, code);

  it.skipIf(skip)(
    'prints the run, its counts and its bridge per currency, and exits 0 with exceptions found',
    async () => {
      const result = await reconcileExiting(
        0,
        '--order-id',
        'cli-ok',
        '--order-id',
        'cli-short',
        '--order-id',
        'nobody',
        '--as-of',
        AS_OF,
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.split('\n')).toEqual([
        expect.stringMatching(/^run \d+ as of 2026-11-20T12:00:00.000Z: 3 orders, 2 verdicts$/),
        '  amount_mismatch=1 matched=1',
        '  exceptions: 1 new, 0 persisting; 0 resolved',
        '  computed 2 verdicts, 2 changed',
        '  bridge EUR: 1 orders + 0 unknown, expected 100.00, settled 100.00, delta 0.00',
        '  bridge JPY: 1 orders + 0 unknown, expected 1,000, settled 900, delta -100',
        '  not found (no order, no succeeded transaction): nobody',
        '',
      ]);
    },
  );

  it.skipIf(skip)('prints one JSON object with --json, amounts as strings', async () => {
    const result = await reconcileCli('--all', '--as-of', '2026-11-20', '--json');
    expect(result.code).toBe(0);
    const run = JSON.parse(result.stdout);
    expect(run).toMatchObject({
      asOf: '2026-11-20T00:00:00.000Z',
      scope: { kind: 'all' },
      ordersInScope: 3,
      suspect: false,
      counts: { matched: 1, amount_mismatch: 1, missing_at_provider: 1 },
    });
    expect(run.totals).toContainEqual({
      currency: 'JPY',
      orders: 1,
      unknownOrders: 0,
      expectedMinor: '1000',
      settledMinor: '900',
    });
  });

  it.skipIf(skip)(
    'a second run over all orders computes nothing that did not change, and --full computes all',
    async () => {
      await reconcileCli('--all', '--as-of', '2026-11-21', '--json');
      // The second run moves the first one's new exceptions on to persisting; nothing is left to compute after it.
      const first = JSON.parse((await reconcileCli('--all', '--as-of', '2026-11-21T00:30:00Z', '--json')).stdout);
      const again = JSON.parse((await reconcileCli('--all', '--as-of', '2026-11-21T01:00:00Z', '--json')).stdout);
      expect(again).toMatchObject({ counts: first.counts, verdictsComputed: 0, verdictsChanged: 0 });
      const full = JSON.parse(
        (await reconcileCli('--all', '--full', '--as-of', '2026-11-21T02:00:00Z', '--json')).stdout,
      );
      expect(full).toMatchObject({ counts: first.counts, verdictsComputed: first.ordersInScope, verdictsChanged: 0 });
    },
  );

  it.skipIf(skip)(
    'the views count each lifecycle as the last run over all orders printed it, at the same as_of or months later',
    async () => {
      const viewLifecycles = async () => {
        const database = await testDb.reopen();
        try {
          const rows = await database.db
            .selectFrom('reporting.reconciliation')
            .select(['lifecycle', (eb) => eb.fn.countAll<number>().as('n')])
            .where('lifecycle', 'is not', null)
            .groupBy('lifecycle')
            .execute();
          return {
            new: 0,
            persisting: 0,
            resolved: 0,
            ...Object.fromEntries(rows.map((row) => [row.lifecycle, Number(row.n)])),
          };
        } finally {
          await testDb.close();
        }
      };
      for (const asOf of ['2026-11-22', '2026-11-22', '2027-02-22']) {
        const result = await reconcileCli('--all', '--as-of', asOf, '--json');
        expect(result.code).toBe(0);
        expect(await viewLifecycles()).toEqual(JSON.parse(result.stdout).lifecycle);
      }
    },
  );

  it.skipIf(skip)('says a suspect run loudly and exits 2, keeping the run', async () => {
    const result = await reconcileExiting(2, '--order-id', 'cli-lonely', '--as-of', AS_OF);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('missing_at_provider=1');
    expect(result.stderr).toMatch(
      /^recon reconcile: SUSPECT RUN \d+: 1 order in scope expects? money but no transaction at all was found/,
    );
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it.skipIf(skip)('refuses a missing or double scope and a bad --as-of with one line and exit 1', async () => {
    for (const args of [
      [],
      ['--all', '--order-id', 'x'],
      ['--all', '--as-of', '2026-11-20 12:00'],
      ['--created-since', 'yesterday'],
    ]) {
      const result = await variant(['reconcile', ...args], testDb.env, 1);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^recon reconcile: /);
    }
  });
});
