import { readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { expectedVerdict, type SandboxTransaction } from '@recon/sandbox';
import { loadRunReport } from '../src/report/report-queries.ts';
import { verdictTotals } from '../src/report/run-report.ts';
import { exportedSignature, type Ledger } from './ledger.ts';
import type { World } from './world.ts';

/** A broken invariant: which, and the evidence, in one line. */
export class InvariantBroken extends Error {
  readonly invariant: string;

  constructor(invariant: string, detail: string) {
    super(`${invariant}: ${detail}`);
    this.invariant = invariant;
  }
}

const IDLE_LIMIT_MS = 30_000;

/**
 * Every invariant of the books, checked after a step: what must hold whatever happened and in whatever order. The
 * night's oracle checks (verdicts, money moved per day, the service's latest versions) run after a nightly run that
 * reconciled, when recon has asked the service about every ORDERID of the night.
 */
export async function checkInvariants(
  world: World,
  ledger: Ledger,
  nightly: Ledger['nightlyRuns'][number] | undefined,
): Promise<void> {
  await settled(world);
  await transactionsAreTheService(world, ledger, nightly?.state === 'reconciled' ? nightly : undefined);
  if (nightly?.state === 'reconciled' && nightly.runId) {
    await verdictsAreTheOracles(world, nightly.runId, nightly.asOf);
    await moneyMovedIsTheService(world, ledger);
  }
  await finishedRunsNeverChange(world, ledger);
  await lifecyclesAreTheRuns(world);
  await acknowledgementsLapseByTheRule(world, ledger);
}

/**
 * Nothing in flight once a step's work is done: the service's exports and notifications sent, the network idle (its
 * held deliveries aside), the receiver's requests finished, every stored delivery ingested, and nothing of recon's
 * left in the temp folder.
 */
async function settled(world: World): Promise<void> {
  const deadline = Date.now() + IDLE_LIMIT_MS;
  const within = async (what: string, work: Promise<unknown>) => {
    // The deadline's timer is cancelled once the work is done, or it would hold the process 30 s after the last seed.
    const cancel = new AbortController();
    const timeout = sleep(Math.max(0, deadline - Date.now()), 'timeout' as const, { signal: cancel.signal }).catch(
      () => 'cancelled' as const,
    );
    try {
      if ((await Promise.race([work.then(() => 'done' as const), timeout])) === 'timeout')
        throw new InvariantBroken('nothing in flight', `${what} still busy after ${IDLE_LIMIT_MS / 1000} s`);
    } finally {
      cancel.abort();
    }
  };
  await within('the service exports', world.sandbox.exports.idle());
  await within('the service notifications', world.sandbox.notifications.idle());
  await within('the network', world.network.idle());
  // An upload the network cut, or one the receiver refused, may still be cleaning up behind an answer already given.
  await within("recon's receiver", world.services.receiver!.idle());
  await within(
    'the ingest of stored deliveries',
    (async () => {
      for (;;) {
        const waiting = await world.database.db
          .selectFrom('recon.deliveries')
          .select('delivery_id')
          .where('state', '=', 'received')
          .where('quarantined_at', 'is', null)
          .limit(1)
          .execute();
        if (waiting.length === 0) return;
        await sleep(20);
      }
    })(),
  );
  const own = (await readdir(world.tempDir)).filter((name) => name.startsWith(`recon-${process.pid}-`));
  if (own.length > 0) throw new InvariantBroken('nothing in the temp folder', own.join(', '));
}

/**
 * Every stored transaction is a version the service exported of it, on the account the service recorded, never
 * older than one recon held before; after a night that reconciled, every transaction of the night's ORDERIDs is
 * there at the service's latest version.
 */
async function transactionsAreTheService(
  world: World,
  ledger: Ledger,
  night: Ledger['nightlyRuns'][number] | undefined,
): Promise<void> {
  const rows = await world.database.db
    .selectFrom('recon.transactions')
    .select([
      'transaction_id',
      'identifier',
      'order_id',
      'operation_type',
      sql<string>`amount_minor::text`.as('amount'),
      'currency',
      'exec_code',
      'occurred_at',
    ])
    .execute();
  const held = new Map<string, string>();
  for (const row of rows) {
    const signature = exportedSignature({
      identifier: row.identifier,
      orderId: row.order_id,
      operationType: row.operation_type ?? '',
      amount: row.amount,
      currency: row.currency?.trim() ?? null,
      execCode: row.exec_code ?? '',
      at: row.occurred_at?.getTime() ?? 0,
    });
    held.set(row.transaction_id, signature);
    const versions = ledger.versions.get(row.transaction_id);
    if (!versions)
      throw new InvariantBroken('transactions are the service’s', `${row.transaction_id} was never exported`);
    const index = versions.findIndex((version) => version.signature === signature);
    if (index < 0)
      throw new InvariantBroken(
        'transactions are the service’s',
        `${row.transaction_id} reads ${signature}, which the service never exported (it exported ${versions.map((v) => v.signature).join(' then ')})`,
      );
    const before = ledger.held.get(row.transaction_id) ?? -1;
    if (index < before)
      throw new InvariantBroken(
        'transactions are the service’s',
        `${row.transaction_id} went back to an older version: ${signature} after ${versions[before]!.signature}`,
      );
    ledger.held.set(row.transaction_id, index);
  }
  if (!night?.runId) return;
  const asked = await runOrderIds(world, night.runId);
  for (const transaction of world.service.transactions()) {
    if (!asked.has(transaction.orderId)) continue;
    const latest = ledger.versions.get(transaction.transactionId)!.at(-1)!.signature;
    if (held.get(transaction.transactionId) !== latest) {
      const source = await world.database.db
        .selectFrom('recon.transactions as t')
        .innerJoin('recon.files as f', 'f.file_id', 't.file_id')
        .select(['f.name', sql<string | null>`f.asked_at::text`.as('asked_at')])
        .where('t.transaction_id', '=', transaction.transactionId)
        .executeTakeFirst();
      throw new InvariantBroken(
        'transactions are the service’s',
        `after the night, ${transaction.transactionId} of ${transaction.orderId} reads ${held.get(transaction.transactionId) ?? 'nothing'}` +
          `${source ? ` (from ${source.name}, asked for at ${source.asked_at ?? 'no known instant'})` : ''}, the service ${latest}`,
      );
    }
  }
}

async function runOrderIds(world: World, runId: string): Promise<Set<string>> {
  const rows = await world.database.db
    .selectFrom('reporting.run_orders' as never)
    .select(sql<string>`order_id`.as('order_id'))
    .where(sql<boolean>`run_id = ${runId}::bigint`)
    .execute();
  return new Set(rows.map((row) => row.order_id));
}

/**
 * After a night that reconciled, every ORDERID it judged has the verdict the sandbox's own rules give for the books
 * as imported and what the service did: a notification contradicting a revised result is notification_conflict.
 */
async function verdictsAreTheOracles(world: World, runId: string, asOf: Date): Promise<void> {
  const asked = await runOrderIds(world, runId);
  const verdicts = await world.database.db
    .selectFrom('reporting.reconciliation')
    .select(['order_id', 'status'])
    .where('order_id', 'in', [...asked])
    .execute();
  const status = new Map(verdicts.map((verdict) => [verdict.order_id, verdict.status as string]));
  const byOrder = new Map<string, SandboxTransaction[]>();
  for (const transaction of world.service.transactions()) {
    byOrder.set(transaction.orderId, [...(byOrder.get(transaction.orderId) ?? []), transaction]);
  }
  const notified = new Map<string, { execCode: string; amount: string }>();
  for (const delivery of world.sandbox.notifications.deliveries()) {
    if (delivery.state !== 'delivered') continue;
    const fields = delivery.fields;
    notified.set(fields['TRANSACTIONID']!, { execCode: fields['EXECCODE']!, amount: fields['AMOUNT']! });
  }
  const settings = {
    graceHours: world.config.reconcile.graceHours,
    toleranceMinor: world.config.reconcile.toleranceMinor,
  };
  for (const orderId of [...asked].sort()) {
    const order = world.books.imported(orderId);
    const transactions = byOrder.get(orderId) ?? [];
    let expected = expectedVerdict(order, transactions, asOf, settings);
    if (order && expected !== 'currency_mismatch' && expected !== null) {
      const conflict = transactions.some((transaction) => {
        const notice = notified.get(transaction.transactionId);
        const final = (code: string) => code !== '0002' && code !== '0003';
        return (
          notice !== undefined &&
          final(notice.execCode) &&
          final(transaction.execCode) &&
          (notice.execCode !== transaction.execCode || BigInt(notice.amount) !== transaction.amount)
        );
      });
      if (conflict) expected = 'notification_conflict';
    }
    const actual = status.get(orderId) ?? null;
    if (actual !== expected)
      throw new InvariantBroken(
        'verdicts are the rules’',
        `${orderId} is ${actual ?? 'without verdict'} where the rules give ${expected ?? 'none'} as of ${asOf.toISOString()}`,
      );
  }
}

/** Money moved per day equals what the service's succeeded transactions that recon holds moved, day by day. */
async function moneyMovedIsTheService(world: World, ledger: Ledger): Promise<void> {
  const expected = new Map<
    string,
    { paid: bigint; refunded: bigint; fees: bigint; payments: number; refunds: number }
  >();
  for (const [transactionId, index] of ledger.held) {
    const { transaction, feesMinor } = ledger.versions.get(transactionId)![index]!;
    const succeeded = transaction.execCode === '0000';
    if (!succeeded && feesMinor === 0n) continue;
    const day = new Date(Math.floor(transaction.createdAt.getTime() / 1000) * 1000).toISOString().slice(0, 10);
    const key = `${day} ${transaction.currency}`;
    const sums = expected.get(key) ?? { paid: 0n, refunded: 0n, fees: 0n, payments: 0, refunds: 0 };
    sums.fees += feesMinor;
    const op = transaction.operationType;
    if (succeeded && (op === 'payment' || op === 'capture')) {
      sums.paid += transaction.amount;
      sums.payments += 1;
    }
    if (succeeded && op === 'refund') {
      sums.refunded += transaction.amount;
      sums.refunds += 1;
    }
    expected.set(key, sums);
  }
  const rows = await world.database.db
    .selectFrom('reporting.settlement_daily' as never)
    .select([
      sql<string>`day::text`.as('day'),
      sql<string>`currency`.as('currency'),
      sql<string>`paid_minor::text`.as('paid'),
      sql<string>`refunded_minor::text`.as('refunded'),
      sql<string>`fees_minor::text`.as('fees'),
      sql<number>`payments`.as('payments'),
      sql<number>`refunds`.as('refunds'),
    ])
    .execute();
  const actual = new Map(rows.map((row) => [`${row.day} ${row.currency}`, row]));
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    const want = expected.get(key) ?? { paid: 0n, refunded: 0n, fees: 0n, payments: 0, refunds: 0 };
    const got = actual.get(key);
    const gotText = got
      ? `paid ${got.paid}, refunded ${got.refunded}, fees ${got.fees}, ${got.payments}+${got.refunds}`
      : 'nothing';
    const wantText = `paid ${want.paid}, refunded ${want.refunded}, fees ${want.fees}, ${want.payments}+${want.refunds}`;
    if (gotText !== wantText)
      throw new InvariantBroken(
        'money moved per day is the service’s',
        `${key}: settlement_daily says ${gotText}, the service ${wantText}`,
      );
  }
}

/**
 * Every finished run's bridge adds up per currency and per status, and its figures stay what they were when it
 * finished: only retention may remove them, and only of a run that started before a prune's cutoff.
 */
async function finishedRunsNeverChange(world: World, ledger: Ledger): Promise<void> {
  const runs = await world.database.db
    .selectFrom('reporting.runs' as never)
    .select([
      sql<string>`run_id::text`.as('run_id'),
      sql<Date>`started_at`.as('started_at'),
      sql<unknown>`counts`.as('counts'),
      sql<Date | null>`history_pruned_at`.as('pruned'),
    ])
    .where(sql<boolean>`finished_at IS NOT NULL`)
    .execute();
  const present = new Map(runs.map((run) => [run.run_id, run]));
  const prunable = (startedAt: Date) => ledger.pruneCutoff !== null && startedAt < ledger.pruneCutoff;
  const startedAfter = new Map([
    ...ledger.runsMade,
    ...[...ledger.runs].map(([runId, run]) => [runId, run.startedAt] as const),
  ]);
  for (const [runId, startedAt] of startedAfter) {
    const run = present.get(runId);
    if ((!run || run.pruned) && !prunable(startedAt))
      throw new InvariantBroken(
        'finished runs never change',
        `run ${runId} was ${run ? 'pruned' : 'removed'}, though it started after every prune's cutoff`,
      );
  }
  for (const run of runs) {
    if (run.pruned) continue;
    const totals = await sql<{ currency: string; orders: number; expected: string; settled: string }>`
      SELECT currency, orders + unknown_orders AS orders, expected_minor::text AS expected, settled_minor::text AS settled
      FROM reporting.run_totals WHERE run_id = ${run.run_id}::bigint ORDER BY currency`.execute(world.database.db);
    const parts = await sql<{ currency: string; orders: number; expected: string; settled: string }>`
      SELECT currency, sum(verdicts)::integer AS orders, sum(expected_minor)::text AS expected, sum(settled_minor)::text AS settled
      FROM reporting.run_status_totals WHERE run_id = ${run.run_id}::bigint GROUP BY currency ORDER BY currency`.execute(
      world.database.db,
    );
    const totalsText = JSON.stringify(totals.rows);
    if (JSON.stringify(parts.rows) !== totalsText)
      throw new InvariantBroken(
        'every bridge adds up',
        `run ${run.run_id}: by status ${JSON.stringify(parts.rows)}, in total ${totalsText}`,
      );
    const figures = { counts: JSON.stringify(run.counts), totals: totalsText };
    const known = ledger.runs.get(run.run_id);
    if (!known) {
      ledger.runs.set(run.run_id, { runId: run.run_id, startedAt: run.started_at, statusTotals: '', ...figures });
      continue;
    }
    if (known.counts !== figures.counts || known.totals !== figures.totals)
      throw new InvariantBroken(
        'finished runs never change',
        `run ${run.run_id} said ${known.counts} ${known.totals}, now ${figures.counts} ${figures.totals}`,
      );
  }
}

/**
 * The lifecycle every view gives an order is the one the latest finished run that judged it gave: its own
 * version's if that run wrote it, moved on otherwise (new to persisting, resolved to nothing). And the latest run's
 * own counts of new, persisting and resolved are what the views say of the orders it judged last.
 */
async function lifecyclesAreTheRuns(world: World): Promise<void> {
  const { rows } = await sql<{
    order_id: string;
    lifecycle: string | null;
    exception_lifecycle: string | null;
    status: string;
    run_id: string;
    written: string | null;
    judged_last: string | null;
  }>`SELECT c.order_id, c.lifecycle, e.lifecycle AS exception_lifecycle, c.status, c.run_id::text AS run_id,
      h.lifecycle_after AS written, j.judged_last::text AS judged_last
    FROM reporting.reconciliation c
    LEFT JOIN reporting.exceptions e ON e.order_id = c.order_id
    LEFT JOIN reporting.verdict_history h ON h.order_id = c.order_id AND h.run_id = c.run_id AND h.change <> 'removed'
    LEFT JOIN (SELECT o.order_id, max(o.run_id) AS judged_last FROM reporting.run_orders o
               JOIN reporting.runs r ON r.run_id = o.run_id AND r.finished_at IS NOT NULL AND r.history_pruned_at IS NULL
               GROUP BY o.order_id) j ON j.order_id = c.order_id`.execute(world.database.db);
  const exception = (status: string) => status !== 'matched' && status !== 'pending';
  const judgedLast = new Map<string, string>();
  for (const row of rows) {
    const last = row.judged_last ?? row.run_id;
    judgedLast.set(row.order_id, last);
    const expected = last === row.run_id ? row.written : exception(row.status) ? 'persisting' : null;
    if (row.lifecycle !== expected)
      throw new InvariantBroken(
        'lifecycles are the runs’',
        `${row.order_id} reads ${row.lifecycle ?? 'no lifecycle'} in reporting.reconciliation; run ${last}, the latest that judged it, gave ${expected ?? 'none'}`,
      );
    if (exception(row.status) && row.exception_lifecycle !== row.lifecycle)
      throw new InvariantBroken(
        'lifecycles are the runs’',
        `${row.order_id} reads ${row.exception_lifecycle} in reporting.exceptions, ${row.lifecycle} in reporting.reconciliation`,
      );
  }
  const latest = [...judgedLast.values()].reduce<string | null>(
    (max, run) => (max === null || BigInt(run) > BigInt(max) ? run : max),
    null,
  );
  if (latest === null) return;
  const totals = verdictTotals((await loadRunReport(world.database.db, latest)).verdictGroups).byLifecycle;
  const viewed = { new: 0, persisting: 0, resolved: 0 };
  for (const row of rows) {
    if (judgedLast.get(row.order_id) === latest && row.lifecycle) viewed[row.lifecycle as keyof typeof viewed] += 1;
  }
  if (JSON.stringify(viewed) !== JSON.stringify(totals))
    throw new InvariantBroken(
      'lifecycles are the runs’',
      `run ${latest} counted ${JSON.stringify(totals)}, the views say ${JSON.stringify(viewed)} of its orders`,
    );
}

/**
 * An acknowledgement holds while its exception keeps the status it was given for, and lapses for good when the status
 * changes or the exception resolves, as the simulation saw each run find; no action is ever lost from the trail.
 */
async function acknowledgementsLapseByTheRule(world: World, ledger: Ledger): Promise<void> {
  const open = await world.database.db
    .selectFrom('reporting.exceptions')
    .select(['order_id', 'status', 'acknowledged', sql<string | null>`first_seen::text`.as('first_seen')])
    .execute();
  const current = new Map(open.map((row) => [row.order_id, row]));
  for (const [orderId, acknowledgement] of ledger.acknowledgements) {
    const row = current.get(orderId);
    const status = row?.status ?? 'resolved';
    if (acknowledgement.statusesSince.at(-1) !== status) acknowledgement.statusesSince.push(status);
    if (!row) continue;
    const holds =
      acknowledgement.action === 'ack' &&
      acknowledgement.statusesSince.every((seen) => seen === acknowledgement.status) &&
      acknowledgement.firstSeen === row.first_seen;
    if (row.acknowledged !== holds)
      throw new InvariantBroken(
        'acknowledgements lapse by the rule',
        `${orderId} reads ${row.acknowledged ? '' : 'not '}acknowledged; acknowledged as ${acknowledgement.status}, since ${acknowledgement.statusesSince.join(' -> ')}`,
      );
  }
  const { rows } = await sql<{ n: number }>`SELECT count(*)::integer AS n FROM reporting.exception_actions`.execute(
    world.database.db,
  );
  if (rows[0]!.n !== ledger.actions)
    throw new InvariantBroken(
      'no action is lost',
      `the trail holds ${rows[0]!.n} actions, the accountant took ${ledger.actions}`,
    );
}
