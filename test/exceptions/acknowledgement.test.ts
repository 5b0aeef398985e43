import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actOnException } from '../../src/exceptions/exception-action.ts';
import { listExceptions } from '../../src/exceptions/exception-list.ts';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { pruneRuns } from '../../src/retention/prune-runs.ts';
import {
  ago,
  DAY,
  ingestTransactions,
  insertOrders,
  type TestOrder,
  type TestTransaction,
} from '../reconcile/reconcile-scenario.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const START = new Date('2026-11-01T12:00:00Z');
const at = (day: number) => new Date(START.getTime() + day * DAY);

/**
 * Acknowledgements against real runs: orders and transactions through real ingest, verdicts from reconcile, and the
 * acknowledgement read back from reporting.exceptions after each run.
 */
describe.each(BACKENDS)('acknowledging exceptions on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  let day = 0;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-acks-'));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const db = () => testDb.database.db;
  /** A run over all orders, a day after the previous one. */
  const nextRun = async () =>
    reconcile(testDb.database, { scope: { kind: 'all' }, asOf: at(++day), toleranceMinor: 0n, graceHours: 24 });
  const paid = (id: string, amount: bigint): TestOrder => ({
    id,
    amount,
    status: 'paid',
    createdAt: ago(START, 2 * DAY),
  });
  const payment = (id: string, orderId: string, amount: string, exec = '0000'): TestTransaction => ({
    id,
    orderId,
    type: 'payment',
    amount,
    exec,
    at: ago(START, DAY),
  });
  const ack = (orderId: string, note = 'looked at it') =>
    actOnException(db(), { orderId, action: 'ack', note, actor: 'alice' });
  async function state(orderId: string) {
    return db()
      .selectFrom('reporting.exceptions')
      .select(['status', 'acknowledged', 'acknowledged_by', 'last_note', 'last_note_by'])
      .where('order_id', '=', orderId)
      .executeTakeFirst();
  }

  it.skipIf(skip)(
    'holds while the status stays, lapses on a change, on resolving, and on a change and back',
    async () => {
      await insertOrders(testDb.database, [
        paid('A-SAME', 2000n),
        paid('A-MOVES', 4000n),
        paid('A-RESOLVES', 2000n),
        paid('A-BACK', 4000n),
        paid('A-MATCHED', 1000n),
      ]);
      await ingestTransactions(testDb.database, tmp, [
        payment('A-SAME-P', 'A-SAME', '19.00'),
        payment('A-RESOLVES-P', 'A-RESOLVES', '19.00'),
        payment('A-MATCHED-P', 'A-MATCHED', '10.00'),
      ]);
      await nextRun();
      expect(await state('A-SAME')).toMatchObject({ status: 'amount_mismatch', acknowledged: false });
      expect(await state('A-MOVES')).toMatchObject({ status: 'missing_at_provider', acknowledged: false });

      for (const orderId of ['A-SAME', 'A-MOVES', 'A-RESOLVES', 'A-BACK']) await ack(orderId, `checked ${orderId}`);
      for (const orderId of ['A-SAME', 'A-MOVES', 'A-RESOLVES', 'A-BACK'])
        expect(await state(orderId), orderId).toMatchObject({
          acknowledged: true,
          acknowledged_by: 'alice',
          last_note: `checked ${orderId}`,
          last_note_by: 'alice',
        });

      // Run 2: A-SAME's books say more, so it is short by another amount (a new version, the same status); A-MOVES
      // gets part of its money (missing_at_provider becomes amount_mismatch); A-RESOLVES's books are corrected
      // (matched); A-BACK gets a payment that the next export shows refused.
      await insertOrders(testDb.database, [paid('A-RESOLVES', 1900n), paid('A-SAME', 2100n)]);
      await ingestTransactions(testDb.database, tmp, [
        payment('A-MOVES-P', 'A-MOVES', '10.00'),
        payment('A-BACK-P', 'A-BACK', '10.00'),
      ]);
      await nextRun();
      expect(await state('A-SAME')).toMatchObject({ status: 'amount_mismatch', acknowledged: true });
      expect(await state('A-MOVES')).toMatchObject({ status: 'amount_mismatch', acknowledged: false });
      expect(await state('A-RESOLVES')).toBeUndefined();
      expect(await state('A-BACK')).toMatchObject({ status: 'amount_mismatch', acknowledged: false });

      // Run 3: A-RESOLVES's books go back (amount_mismatch again, as when acknowledged, but a new exception); A-BACK's
      // payment turns out refused (missing_at_provider again, the status it was acknowledged in, and never resolved).
      await insertOrders(testDb.database, [paid('A-RESOLVES', 2000n)]);
      await ingestTransactions(testDb.database, tmp, [payment('A-BACK-P', 'A-BACK', '10.00', '0005')]);
      await nextRun();
      expect(await state('A-RESOLVES')).toMatchObject({ status: 'amount_mismatch', acknowledged: false });
      expect(await state('A-BACK')).toMatchObject({ status: 'missing_at_provider', acknowledged: false });
      expect(await state('A-SAME')).toMatchObject({ status: 'amount_mismatch', acknowledged: true });
      // The lapsed ones keep their note: what was found stays worth reading.
      expect(await state('A-BACK')).toMatchObject({ last_note: 'checked A-BACK' });

      // The ageing counts them apart.
      const ageing = await sql<{ status: string; exceptions: number; acknowledged: number; unacknowledged: number }>`
      SELECT status, sum(exceptions)::int AS exceptions, sum(acknowledged)::int AS acknowledged,
        sum(unacknowledged)::int AS unacknowledged
      FROM reporting.exception_ageing GROUP BY status ORDER BY status`.execute(db());
      expect(ageing.rows).toEqual([
        { status: 'amount_mismatch', exceptions: 3, acknowledged: 1, unacknowledged: 2 },
        { status: 'missing_at_provider', exceptions: 1, acknowledged: 0, unacknowledged: 1 },
      ]);
    },
  );

  it.skipIf(skip)('notes without acknowledging, reopens, and keeps every action in the trail', async () => {
    await insertOrders(testDb.database, [paid('B-1', 2000n), paid('B-OK', 1000n)]);
    await ingestTransactions(testDb.database, tmp, [
      payment('B-1-P', 'B-1', '19.00'),
      payment('B-OK-P', 'B-OK', '10.00'),
    ]);
    const { runId } = await nextRun();

    await actOnException(db(), { orderId: 'B-1', action: 'note', note: 'asked the shop', actor: 'bob' });
    expect(await state('B-1')).toMatchObject({ acknowledged: false, last_note: 'asked the shop', last_note_by: 'bob' });
    await ack('B-1', 'the shop refunded the euro by hand');
    await actOnException(db(), { orderId: 'B-1', action: 'note', note: 'receipt filed', actor: 'bob' });
    expect(await state('B-1')).toMatchObject({
      acknowledged: true,
      acknowledged_by: 'alice',
      last_note: 'receipt filed',
    });
    const reopened = await actOnException(db(), { orderId: 'B-1', action: 'reopen', actor: 'carol' });
    expect(reopened).toMatchObject({ orderId: 'B-1', action: 'reopen', note: null, actedBy: 'carol', runId });
    expect(await state('B-1')).toMatchObject({ acknowledged: false, last_note: 'receipt filed' });
    // A note on a matched verdict is allowed: an accountant may say why it is fine.
    await actOnException(db(), { orderId: 'B-OK', action: 'note', note: 'matched by hand', actor: 'bob' });

    const trail = await db()
      .selectFrom('reporting.exception_actions')
      .select(['order_id', 'action', 'note', 'acted_by', 'status', 'run_id'])
      .where('order_id', 'in', ['B-1', 'B-OK'])
      .orderBy('action_id')
      .execute();
    expect(trail.map((row) => ({ ...row, run_id: String(row.run_id) }))).toEqual([
      {
        order_id: 'B-1',
        action: 'note',
        note: 'asked the shop',
        acted_by: 'bob',
        status: 'amount_mismatch',
        run_id: runId,
      },
      {
        order_id: 'B-1',
        action: 'ack',
        note: 'the shop refunded the euro by hand',
        acted_by: 'alice',
        status: 'amount_mismatch',
        run_id: runId,
      },
      {
        order_id: 'B-1',
        action: 'note',
        note: 'receipt filed',
        acted_by: 'bob',
        status: 'amount_mismatch',
        run_id: runId,
      },
      { order_id: 'B-1', action: 'reopen', note: null, acted_by: 'carol', status: 'amount_mismatch', run_id: runId },
      { order_id: 'B-OK', action: 'note', note: 'matched by hand', acted_by: 'bob', status: 'matched', run_id: runId },
    ]);
    // The login is recorded whatever name was given.
    const { rows } = await sql<{ login: string; me: string }>`SELECT DISTINCT login, session_user AS me
      FROM reporting.exception_actions WHERE order_id = 'B-1'`.execute(db());
    expect(rows).toHaveLength(1);
    expect(rows[0]!.login).toBe(rows[0]!.me);
  });

  it.skipIf(skip)('refuses what makes no sense, each with its own code', async () => {
    await insertOrders(testDb.database, [paid('C-OK', 1000n), paid('C-1', 2000n)]);
    await ingestTransactions(testDb.database, tmp, [
      payment('C-OK-P', 'C-OK', '10.00'),
      payment('C-1-P', 'C-1', '19.00'),
    ]);
    await nextRun();
    await expectReconError(() => ack('C-NOBODY'), 'EXCEPTION_NOT_FOUND', 'no verdict for order C-NOBODY');
    await expectReconError(() => ack('C-OK'), 'EXCEPTION_NOT_OPEN', 'not an open exception: its verdict is matched');
    await expectReconError(
      () => actOnException(db(), { orderId: 'C-1', action: 'reopen' }),
      'EXCEPTION_NOT_ACKNOWLEDGED',
      'C-1 is not acknowledged',
    );
    await expectReconError(
      () => actOnException(db(), { orderId: 'C-1', action: 'ack', note: '  ' }),
      'USAGE',
      'needs a note',
    );
    // Bounded: a note and a name reach every report, spreadsheet and page.
    await expectReconError(
      () => actOnException(db(), { orderId: 'C-1', action: 'note', note: 'x'.repeat(4001) }),
      'USAGE',
      'the note is 4001 characters long; at most 4000',
    );
    await expectReconError(
      () => actOnException(db(), { orderId: 'C-1', action: 'note', note: 'fine', actor: 'm'.repeat(101) }),
      'USAGE',
      'the name is 101 characters long; at most 100',
    );
    // Nothing refused was recorded.
    const { items } = await listExceptions(db(), { limit: 1000 });
    expect(items.find((item) => item.orderId === 'C-1')).toMatchObject({ acknowledged: false, lastNote: null });
    const refused = await db()
      .selectFrom('reporting.exception_actions')
      .select('order_id')
      .where('order_id', 'like', 'C-%')
      .execute();
    expect(refused).toEqual([]);
  });

  it.skipIf(skip)(
    'refuses to acknowledge again what someone acknowledged, keeping its author; shows the login beside any name',
    async () => {
      await insertOrders(testDb.database, [paid('K-1', 2000n)]);
      await ingestTransactions(testDb.database, tmp, [payment('K-1-P', 'K-1', '19.00')]);
      await nextRun();
      await actOnException(db(), { orderId: 'K-1', action: 'ack', note: 'the shop refunded it', actor: 'alice' });
      const refusal = await expectReconError(
        () => actOnException(db(), { orderId: 'K-1', action: 'ack', note: 'mine now', actor: 'mallory' }),
        'EXCEPTION_ALREADY_ACKNOWLEDGED',
      );
      expect(refusal).toMatch(
        /^order K-1 is already acknowledged by alice \(login \S+\) since \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC: add a note, or reopen it first$/,
      );
      // A note may claim any name: the login that wrote it stays beside it.
      await actOnException(db(), { orderId: 'K-1', action: 'note', note: 'approved by the CFO', actor: 'the CFO' });
      const { rows } = await sql<{ me: string }>`SELECT session_user AS me`.execute(db());
      const me = rows[0]!.me;
      expect(
        await db()
          .selectFrom('reporting.exceptions')
          .select(['acknowledged_by', 'acknowledged_login', 'last_note_by', 'last_note_login'])
          .where('order_id', '=', 'K-1')
          .executeTakeFirst(),
      ).toEqual({ acknowledged_by: 'alice', acknowledged_login: me, last_note_by: 'the CFO', last_note_login: me });
      const { items } = await listExceptions(db(), { limit: 1000 });
      expect(items.find((item) => item.orderId === 'K-1')).toMatchObject({
        acknowledgedBy: 'alice',
        acknowledgedLogin: me,
        lastNoteBy: 'the CFO',
        lastNoteLogin: me,
      });
    },
  );

  it.skipIf(skip)('keeps the trail append-only, for recon itself too', async () => {
    await insertOrders(testDb.database, [paid('D-1', 2000n)]);
    await ingestTransactions(testDb.database, tmp, [payment('D-1-P', 'D-1', '19.00')]);
    await nextRun();
    await ack('D-1');
    for (const statement of [
      sql`UPDATE recon.exception_actions SET note = 'rewritten' WHERE order_id = 'D-1'`,
      sql`DELETE FROM recon.exception_actions WHERE order_id = 'D-1'`,
      sql`TRUNCATE recon.exception_actions`,
    ])
      await expect(statement.execute(db())).rejects.toThrow(/recon.exception_actions is append-only/);
    expect(await state('D-1')).toMatchObject({ acknowledged: true, last_note: 'looked at it' });
  });

  it.skipIf(skip)('keeps a lapse after retention prunes the version that made it', async () => {
    await insertOrders(testDb.database, [paid('E-BACK', 4000n)]);
    await nextRun();
    await ack('E-BACK');
    // missing_at_provider, then amount_mismatch, then missing_at_provider again: the ack lapsed in between.
    await ingestTransactions(testDb.database, tmp, [payment('E-BACK-P', 'E-BACK', '10.00')]);
    await nextRun();
    await ingestTransactions(testDb.database, tmp, [payment('E-BACK-P', 'E-BACK', '10.00', '0005')]);
    const last = await nextRun();
    expect(await state('E-BACK')).toMatchObject({ status: 'missing_at_provider', acknowledged: false });
    // Retention keeps the last run only: the amount_mismatch version held before it.
    const { started_at: cutoff } = await db()
      .selectFrom('recon.reconciliation_runs')
      .select('started_at')
      .where('run_id', '=', last.runId)
      .executeTakeFirstOrThrow();
    await pruneRuns(db(), { cutoff, dryRun: false, batchSize: 100 });
    expect(await state('E-BACK')).toMatchObject({ status: 'missing_at_provider', acknowledged: false });
  });
});
