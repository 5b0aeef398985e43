import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { ago, DAY, ingestTransactions, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { oneProcessPerExitCode, runReconInProcess } from './run-recon.ts';

const AS_OF = new Date('2026-11-01T12:00:00Z');

/**
 * `recon exceptions` as accountants and operators run it against a database with three open exceptions (two amount
 * mismatches, in EUR and JPY, and an order the service never saw) and a matched order: a subprocess for the first
 * run of each exit code in the file, on whichever backend runs first, the other runs in this process (a process on
 * PGlite opens its database from scratch: seconds of CPU for nothing the exit code depends on).
 */
const variant = oneProcessPerExitCode();
describe.each(BACKENDS)('recon exceptions on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-exceptions-cli-'));
    const createdAt = ago(AS_OF, 2 * DAY);
    await insertOrders(testDb.database, [
      { id: 'E-EUR', amount: 2000n, status: 'paid', createdAt },
      { id: 'E-JPY', amount: 1500n, currency: 'JPY', status: 'paid', createdAt },
      { id: 'E-MISSING', amount: 4000n, status: 'paid', createdAt: ago(AS_OF, 3 * DAY) },
      { id: 'E-OK', amount: 1000n, status: 'paid', createdAt },
    ]);
    const at = ago(AS_OF, DAY);
    await ingestTransactions(testDb.database, tmp, [
      { id: 'E-EUR-P', orderId: 'E-EUR', type: 'payment', amount: '19.00', exec: '0000', at },
      { id: 'E-JPY-P', orderId: 'E-JPY', type: 'payment', amount: '1400', currency: 'JPY', exec: '0000', at },
      { id: 'E-OK-P', orderId: 'E-OK', type: 'payment', amount: '10.00', exec: '0000', at },
    ]);
    await reconcile(testDb.database, { scope: { kind: 'all' }, asOf: AS_OF, toleranceMinor: 0n, graceHours: 24 });
    await testDb.close();
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const recon = (...args: string[]) => runReconInProcess(['exceptions', ...args], testDb.env);

  it.skipIf(skip)('acknowledges, notes, reopens and lists, in a table and as JSON', async () => {
    const acked = await variant(
      ['exceptions', 'ack', 'E-EUR', '--note', 'the shop kept a euro of fees', '--by', 'dora'],
      testDb.env,
      0,
    );
    expect(acked.stderr).toBe('');
    expect(acked.code).toBe(0);
    expect(acked.stdout).toMatch(
      /^acknowledged E-EUR \(amount_mismatch, verdict of run \d+\) as dora \(login \S+\): action \d+\n$/,
    );
    expect((await recon('note', 'E-MISSING', '--note', 'asked the service', '--by', 'dora')).code).toBe(0);

    const table = await recon('list');
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^order\s+status\s+at risk\s+currency\s+order age\s+first seen\s+acknowledged\s+last note$/,
    );
    expect(lines).toHaveLength(5);
    expect(lines.find((line) => line.startsWith('E-EUR '))).toMatch(
      /amount_mismatch\s+1\.00\s+EUR\s+\d+ d\s+2026-11-01\s+by dora \(login \S+\)\s+the shop kept a euro of fees$/,
    );
    expect(lines.find((line) => line.startsWith('E-JPY '))).toMatch(/amount_mismatch\s+100\s+JPY .*\bno$/);
    expect(lines.find((line) => line.startsWith('E-MISSING '))).toMatch(
      /missing_at_provider\s+40\.00\s+EUR .* no\s+asked the service$/,
    );

    const json = await recon('list', '--json', '--acknowledged', 'no');
    expect(json.code).toBe(0);
    const document = JSON.parse(json.stdout) as { total: number; shown: number; exceptions: Record<string, unknown>[] };
    expect(document).toMatchObject({ total: 2, shown: 2 });
    expect(document.exceptions.map((item) => item.orderId).sort()).toEqual(['E-JPY', 'E-MISSING']);
    expect(document.exceptions.find((item) => item.orderId === 'E-JPY')).toMatchObject({
      status: 'amount_mismatch',
      currency: 'JPY',
      expectedMinor: '1500',
      expected: '1500',
      settledMinor: '1400',
      atRiskMinor: '100',
      atRisk: '100',
      acknowledged: false,
      acknowledgedBy: null,
    });
    const acknowledged = JSON.parse((await recon('list', '--json', '--acknowledged', 'yes')).stdout) as {
      exceptions: Record<string, unknown>[];
    };
    expect(acknowledged.exceptions).toEqual([
      expect.objectContaining({
        orderId: 'E-EUR',
        expectedMinor: '2000',
        expected: '20.00',
        atRiskMinor: '100',
        atRisk: '1.00',
        acknowledged: true,
        acknowledgedBy: 'dora',
        acknowledgedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        lastNote: 'the shop kept a euro of fees',
      }),
    ]);
    const missing = JSON.parse((await recon('list', '--json', '--status', 'missing_at_provider')).stdout) as {
      exceptions: { orderId: string }[];
    };
    expect(missing.exceptions.map((item) => item.orderId)).toEqual(['E-MISSING']);

    const bounded = await recon('list', '--limit', '1');
    expect(bounded.stdout.trimEnd().split('\n').at(-1)).toBe('2 more not shown (of 3): raise --limit, or filter');

    const reopened = await recon('reopen', 'E-EUR', '--by', 'erin');
    expect(reopened.code).toBe(0);
    expect(reopened.stdout).toMatch(/^reopened E-EUR \(amount_mismatch, verdict of run \d+\) as erin/);
    const after = JSON.parse((await recon('list', '--json', '--acknowledged', 'yes')).stdout) as { total: number };
    expect(after.total).toBe(0);
  });

  it.skipIf(skip)('records the user running it when --by is not given', async () => {
    const done = await recon('note', 'E-JPY', '--note', 'JPY has no minor unit: 100 yen short');
    expect(done.code).toBe(0);
    // The login beside the name, where the database login is another (PGlite's is postgres).
    expect(done.stdout).toMatch(new RegExp(` as ${os.userInfo().username}( \\(login \\S+\\))?: `));
  });

  it.skipIf(skip)('says in one line what it refuses, with exit 2, or 1 for a usage error', async () => {
    expect((await recon('ack', 'E-MISSING', '--note', 'asked the service', '--by', 'dora')).code).toBe(0);
    const cases: [string[], number, RegExp][] = [
      [
        // A second acknowledgement would hand the exception to somebody else: refused, the first one kept.
        ['ack', 'E-MISSING', '--note', 'mine now', '--by', 'mallory'],
        2,
        /^recon exceptions: order E-MISSING is already acknowledged by dora \(login \S+\) since \d{4}-\d\d-\d\d \d\d:\d\d UTC: add a note, or reopen it first\n$/,
      ],
      [
        ['ack', 'NOBODY', '--note', 'x'],
        2,
        /^recon exceptions: no verdict for order NOBODY: recon has not judged it: `recon exceptions list` lists the open exceptions, with their ORDERIDs\n$/,
      ],
      [
        ['ack', 'E-OK', '--note', 'x'],
        2,
        /^recon exceptions: order E-OK is not an open exception: its verdict is matched: `recon exceptions list` lists the open exceptions, with their ORDERIDs\n$/,
      ],
      [
        ['reopen', 'E-JPY'],
        2,
        /^recon exceptions: order E-JPY is not acknowledged: nothing to reopen: `recon exceptions list --acknowledged yes` lists the acknowledged ones\n$/,
      ],
      [['ack', 'E-JPY'], 1, /^recon exceptions: ack needs --note TEXT/],
      [['list', '--acknowledged', 'maybe'], 1, /^recon exceptions: --acknowledged maybe: expected yes or no\n$/],
      [['list', '--limit', '0'], 1, /^recon exceptions: --limit 0: expected a whole number/],
      [['forget', 'E-JPY'], 1, /^recon exceptions: unknown subcommand forget\n$/],
    ];
    for (const [args, code, stderr] of cases) {
      const result = await variant(['exceptions', ...args], testDb.env, code);
      expect(result.code, args.join(' ')).toBe(code);
      expect(result.stderr, args.join(' ')).toMatch(stderr);
      expect(result.stdout, args.join(' ')).toBe('');
    }
  });
});
