import { dateInZone } from '@recon/protocol';
import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { ReconError } from '../errors.ts';
import { loadAccountTotals } from './account-totals-query.ts';
import { loadAgeing } from './ageing-query.ts';
import { acknowledgedSql, latestAckSql, latestNoteSql } from './acknowledgement-sql.ts';
import { atRiskMinorSql, orderAgeDaysSql } from './exception-money-sql.ts';
import { reportWindow, runDays } from './report-window.ts';
import { runVerdicts } from './run-verdicts.ts';
import { loadReceivedToBridge } from './received-query.ts';
import { loadMoneyMoved } from './settlement-query.ts';
import { loadVerdictWarnings } from './warnings-query.ts';
import { loadStatusTotals } from './status-totals-query.ts';
import {
  NOT_EXCEPTIONS,
  type CurrencyBridge,
  type OpenException,
  type RunChoice,
  type RunFacts,
  type RunReport,
  type VerdictGroup,
} from './run-report.ts';

/**
 * The reads behind `recon report`. Each is one set-based statement whose result is bounded by currencies,
 * statuses and days; the open exceptions, which may be most of a million verdicts, come in keyset pages.
 * Amounts are cast to text in SQL so that neither driver turns them into a number on the way.
 */

/** The warnings a report lists unless asked for another number: every one of them is counted. */
export const WARNINGS_LISTED = 100;

/**
 * The run named, or the run a report shows by default (see findRun). Its days are dates in `timeZone`
 * (RECON_REPORT_TIMEZONE), UTC unless given.
 */
export async function loadRunReport(
  db: Kysely<Schema>,
  runId?: string,
  options: ReportOptions = {},
): Promise<RunReport> {
  return loadReportOf(db, await findRun(db, runId), options);
}

interface ReportOptions {
  readonly timeZone?: string;
  readonly warningsListed?: number;
}

/** The report of a run already found (findRun), for a caller that starts other reads of it first. */
export async function loadReportOf(db: Kysely<Schema>, run: RunFacts, options: ReportOptions = {}): Promise<RunReport> {
  const timeZone = options.timeZone ?? 'UTC';
  // The window starts on the verdicts' first day, known only once they are grouped; the money moved is read beside
  // them up to the day of as_of and cut to the window after. The view reads every transaction whatever the days asked
  // (a day in a zone is no index's range), so reading more days costs nothing, and waiting for the verdicts cost the
  // report a whole scan of the transactions after them.
  const asOfDay = dateInZone(run.asOf, timeZone);
  const [bridge, statusTotals, accounts, receivedToBridge, verdictGroups, ageing, verdictWarnings, movedUpToAsOf] =
    await Promise.all([
      loadBridge(db, run.runId),
      loadStatusTotals(db, run.runId),
      loadAccountTotals(db, run.runId),
      loadReceivedToBridge(db, run.runId),
      loadVerdictGroups(db, run.runId, timeZone),
      loadAgeing(db, run.runId),
      loadVerdictWarnings(db, run.runId, options.warningsListed ?? WARNINGS_LISTED),
      loadMoneyMoved(db, { to: asOfDay }, timeZone),
    ]);
  const read = reportWindow(verdictGroups, run.asOf, timeZone);
  // A window after as_of (orders created after it) is one day, read on its own.
  const days =
    read === null
      ? []
      : read.to > asOfDay
        ? await loadMoneyMoved(db, read, timeZone)
        : movedUpToAsOf.filter((day) => day.day >= read.from);
  const moneyMoved = { window: runDays(read, verdictGroups, days), days };
  return {
    run,
    timeZone,
    bridge,
    statusTotals,
    accounts,
    receivedToBridge,
    verdictGroups,
    moneyMoved,
    ageing,
    verdictWarnings,
  };
}

/**
 * The run named; by default the latest finished nightly run, or, before there is one, the latest finished run over
 * all orders (`--all`, `--created-since`): a backfill of two orders is never what a report shows unasked.
 */
export async function findRun(db: Kysely<Schema>, runId?: string): Promise<RunFacts> {
  const runs = () =>
    db
      .selectFrom('recon.reconciliation_runs as r')
      .leftJoin('recon.nightly_runs as n', 'n.nightly_run_id', 'r.nightly_run_id')
      .select([
        sql<string>`r.run_id::text`.as('run_id'),
        'r.kind',
        'r.description',
        sql<string | null>`r.nightly_run_id::text`.as('nightly_run_id'),
        sql<string | null>`n.run_date::text`.as('nightly_date'),
        'r.as_of',
        'r.scope',
        sql<string>`r.tolerance_minor::text`.as('tolerance_minor'),
        'r.grace_hours',
        'r.started_at',
        'r.finished_at',
        'r.orders_in_scope',
        'r.counts',
        'r.not_found',
        'r.not_found_count',
        'r.suspect',
        'r.suspect_reason',
        'r.pruned_at',
      ]);
  let row;
  let choice: RunChoice = 'named';
  if (runId !== undefined) {
    // A run is committed whole by reconcile; one without finished_at was cut short and is shown only when named.
    row = await runs().where('r.run_id', '=', runId).executeTakeFirst();
  } else {
    const finished = runs().where('r.finished_at', 'is not', null).orderBy('r.run_id', 'desc').limit(1);
    row = await finished.where('r.kind', '=', 'nightly').executeTakeFirst();
    choice = 'latest_nightly';
    if (!row) {
      row = await finished.where(sql<string>`r.scope ->> 'kind'`, 'in', ['all', 'created_since']).executeTakeFirst();
      choice = 'latest_over_all_orders';
    }
  }
  if (!row && runId === undefined) {
    throw new ReconError(
      'RUN_NOT_FOUND',
      'no nightly run and no run over all orders has finished yet: run `recon nightly --wait` or `recon reconcile --all`, or name a run with --run',
    );
  }
  if (!row) {
    const latest = await db
      .selectFrom('recon.reconciliation_runs')
      .select(sql<string | null>`max(run_id)::text`.as('run_id'))
      .executeTakeFirst();
    const which = latest?.run_id ? ` (the latest is ${latest.run_id})` : ' (there is none yet)';
    throw new ReconError(
      'RUN_NOT_FOUND',
      `no reconciliation run ${runId}${which}: \`recon runs\` lists the nightly runs with their reconciliation run, ` +
        'and `SELECT run_id, started_at FROM reporting.runs ORDER BY run_id DESC` lists every run',
    );
  }
  return {
    runId: row.run_id,
    kind: row.kind,
    description: row.description,
    nightlyRunId: row.nightly_run_id,
    nightlyDate: row.nightly_date,
    choice,
    asOf: row.as_of,
    scope: row.scope,
    toleranceMinor: row.tolerance_minor,
    graceHours: row.grace_hours,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    ordersInScope: row.orders_in_scope,
    counts: row.counts ?? {},
    notFound: row.not_found,
    notFoundCount: row.not_found_count,
    suspect: row.suspect,
    suspectReason: row.suspect_reason,
    prunedAt: row.pruned_at,
  };
}

async function loadBridge(db: Kysely<Schema>, runId: string): Promise<CurrencyBridge[]> {
  const rows = await db
    .selectFrom('recon.run_totals')
    .select([
      'currency',
      'orders',
      'unknown_orders',
      sql<string>`expected_minor::text`.as('expected_minor'),
      sql<string>`settled_minor::text`.as('settled_minor'),
    ])
    .where('run_id', '=', runId)
    .orderBy('currency')
    .execute();
  return rows.map((row) => ({
    currency: row.currency,
    orders: row.orders,
    unknownOrders: row.unknown_orders,
    expectedMinor: row.expected_minor,
    settledMinor: row.settled_minor,
  }));
}

/**
 * One pass over the run's verdicts. An unknown order has no creation date: it is placed on the day of its
 * earliest transaction considered (the only dates it has), so the chart and the totals agree.
 */
async function loadVerdictGroups(db: Kysely<Schema>, runId: string, timeZone: string): Promise<VerdictGroup[]> {
  // Grouped twice. First every verdict on its order's day, a verdict without an order alone by its transactions: a
  // key with no subquery in it and no order asked of it, which PostgreSQL may hash. Then those few thousand groups on
  // the day of their earliest transaction. Grouped at once on that subquery, the million verdicts were sorted on disk
  // (3.0 s of CPU against 2.1 s). Dates are written as text once per group: to_char per verdict cost a fifth.
  const perOrderDay = db
    .selectFrom(await runVerdicts(db, runId))
    .leftJoin('recon.orders as o', (join) => join.onRef('o.order_id', '=', 'v.order_id').on('v.known_order', '=', true))
    .select([
      sql<string | null>`(o.created_at AT TIME ZONE ${timeZone}::text)::date`.as('day'),
      'v.status',
      'v.lifecycle',
      sql<string[] | null>`CASE WHEN o.created_at IS NULL THEN v.transaction_ids END`.as('transaction_ids'),
      sql<string>`count(*)`.as('verdicts'),
    ])
    .groupBy([sql`1`, 'v.status', 'v.lifecycle', sql`4`])
    .as('g');
  const day = sql<string | null>`coalesce(g.day, ((SELECT min(t.occurred_at) FROM recon.transactions t
    WHERE t.transaction_id = ANY (g.transaction_ids)) AT TIME ZONE ${timeZone}::text)::date)`;
  const perDay = db
    .selectFrom(perOrderDay)
    .select([day.as('day'), 'g.status', 'g.lifecycle', sql<number>`sum(g.verdicts)::int`.as('verdicts')])
    .groupBy([sql`1`, 'g.status', 'g.lifecycle'])
    .as('d');
  const rows = await db
    .selectFrom(perDay)
    .select([sql<string | null>`to_char(d.day, 'YYYY-MM-DD')`.as('day'), 'd.status', 'd.lifecycle', 'd.verdicts'])
    .orderBy('d.day')
    .execute();
  return rows.map((row) => ({ day: row.day, status: row.status, lifecycle: row.lifecycle, verdicts: row.verdicts }));
}

async function exceptionsOf(db: Kysely<Schema>, runId: string) {
  return db
    .selectFrom(await runVerdicts(db, runId))
    .innerJoin('recon.reconciliation_runs as run', (join) => join.on('run.run_id', '=', runId))
    .leftJoin('recon.orders as o', (join) => join.onRef('o.order_id', '=', 'v.order_id').on('v.known_order', '=', true))
    .leftJoin('recon.exception_actions as ack', (join) => join.on(sql<boolean>`ack.action_id = ${latestAckSql}`))
    .leftJoin('recon.exception_actions as note', (join) => join.on(sql<boolean>`note.action_id = ${latestNoteSql}`))
    .select([
      'v.order_id',
      'v.known_order',
      'v.status',
      'v.lifecycle',
      sql<string | null>`v.first_seen_run_id::text`.as('first_seen_run_id'),
      'v.first_seen_at',
      'v.currency',
      sql<string>`v.expected_minor::text`.as('expected_minor'),
      sql<string>`v.settled_minor::text`.as('settled_minor'),
      sql<string>`v.delta_minor::text`.as('delta_minor'),
      atRiskMinorSql.as('at_risk_minor'),
      orderAgeDaysSql.as('order_age_days'),
      acknowledgedSql.as('acknowledged'),
      'ack.acted_by as ack_by',
      'ack.login as ack_login',
      'ack.acted_at as ack_at',
      'note.note as last_note',
      'note.acted_by as last_note_by',
      'note.login as last_note_login',
      'note.acted_at as last_note_at',
      'v.explanation',
      // The transactions considered, read from their ids as reporting.reconciliation reads them, as json text: the
      // explanation is made whole here (withTransactions), not by jsonb's || on the server.
      sql<
        unknown[]
      >`(SELECT coalesce(json_agg(recon.explained_transaction_json(t, f.name, t.updated_at > run.started_at)
          ORDER BY t.occurred_at, t.transaction_id), '[]'::json)
        FROM recon.transactions t LEFT JOIN recon.files f ON f.file_id = t.file_id
        WHERE t.transaction_id = ANY (v.transaction_ids))`.as('transactions'),
    ])
    .where('v.status', 'not in', NOT_EXCEPTIONS);
}

type ExceptionRow = Awaited<ReturnType<Awaited<ReturnType<typeof exceptionsOf>>['execute']>>[number];

function toOpenException(row: ExceptionRow): OpenException {
  return {
    orderId: row.order_id,
    knownOrder: row.known_order,
    status: row.status,
    lifecycle: row.lifecycle,
    firstSeenRunId: row.first_seen_run_id,
    firstSeenAt: row.first_seen_at,
    currency: row.currency?.trim() ?? null,
    expectedMinor: row.expected_minor,
    settledMinor: row.settled_minor,
    deltaMinor: row.delta_minor,
    atRiskMinor: row.at_risk_minor,
    orderAgeDays: row.order_age_days,
    acknowledged: row.acknowledged,
    acknowledgedBy: row.acknowledged ? row.ack_by : null,
    acknowledgedLogin: row.acknowledged ? row.ack_login : null,
    acknowledgedAt: row.acknowledged ? row.ack_at : null,
    lastNote: row.last_note,
    lastNoteBy: row.last_note_by,
    lastNoteLogin: row.last_note_login,
    lastNoteAt: row.last_note_at,
    explanation: withTransactions(row.explanation, row.transactions),
  };
}

/**
 * The stored explanation with the transactions considered, as reporting.reconciliation gives it (jsonb's `||`): its
 * keys in jsonb's order, shorter first then bytewise, so that the json report writes the view's document as it is
 * (recon's keys are ASCII, where the length in bytes and a comparison of strings are jsonb's).
 */
function withTransactions(stored: unknown, transactions: unknown[]): unknown {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return stored;
  // The stored keys (rule, reason, figures, warnings, conflicts) are all shorter: transactions goes last.
  if (Object.keys(stored).every((key) => key.length < 'transactions'.length)) return { ...stored, transactions };
  const entries = Object.entries(stored).filter(([key]) => key !== 'transactions');
  entries.push(['transactions', transactions]);
  entries.sort(([a], [b]) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

/**
 * Every open exception of the run by order_id, `pageSize` at a time. The pages' bounds are read first, in one walk of
 * the run's exceptions: each page is then a closed range of ORDERIDs, which every index it reads (the exceptions',
 * the history's, the orders') scans from its start to its end. Pages continued after the last ORDERID with only a
 * LIMIT walked each index from where it started or to its end, once per page: over a million orders the csv report
 * took 45 s.
 *
 * The reads start when this is called, not when the pages are first asked for, and `readsAhead` pages (2 unless
 * told) are read at once on their own connections while the caller writes the one before: a report reads its first
 * pages while its summary is still being computed, and the server's cores and the writer's stay busy together. Memory
 * holds `readsAhead` pages and the one being written. Reads left behind when the caller stops early are awaited by
 * nobody: their errors are dropped.
 */
export function openExceptionPages(
  db: Kysely<Schema>,
  runId: string,
  options: { pageSize?: number; readsAhead?: number; signal?: AbortSignal } = {},
): AsyncIterable<OpenException[]> {
  const pageSize = options.pageSize ?? 1000;
  const readsAhead = Math.max(1, options.readsAhead ?? 2);
  // A page is read by one backend: the planner gave each page two parallel workers for its scan of the exceptions,
  // two processes started for a thousand rows, taking the cores from the other page read at once and from the writer.
  // Without them the 124 pages of a million orders were read in 10 s instead of 14 s (pages alone, a busy machine).
  const read = (after: string | undefined, upTo: string | undefined) =>
    db.transaction().execute(async (trx) => {
      await sql`SET LOCAL max_parallel_workers_per_gather = 0`.execute(trx);
      return (await exceptionsOf(trx, runId))
        .$if(after !== undefined, (query) => query.where('v.order_id', '>', after!))
        .$if(upTo !== undefined, (query) => query.where('v.order_id', '<=', upTo!))
        .orderBy('v.order_id')
        .execute();
    });
  const ranges = pageBounds(db, runId, pageSize).then((bounds) =>
    [...bounds, undefined].map((upTo, index) => ({ after: index > 0 ? bounds[index - 1] : undefined, upTo })),
  );
  const inFlight: Promise<ExceptionRow[]>[] = [];
  let started = 0;
  // Each read is queued as the one before it is; the queue holds at most readsAhead.
  const startReads = (): Promise<void> =>
    ranges.then((all) => {
      while (inFlight.length < readsAhead && started < all.length) {
        const { after, upTo } = all[started++]!;
        const pending = read(after, upTo);
        pending.catch(() => undefined);
        inFlight.push(pending);
      }
    });
  const first = startReads();
  first.catch(() => undefined);
  return {
    async *[Symbol.asyncIterator]() {
      try {
        await first;
        while (inFlight.length > 0) {
          options.signal?.throwIfAborted();
          const rows = await inFlight.shift()!;
          await startReads();
          if (rows.length > 0) yield rows.map(toOpenException);
        }
      } finally {
        inFlight.length = 0;
      }
    },
  };
}

/** The last ORDERID of every full page of the run's open exceptions, in order. */
async function pageBounds(db: Kysely<Schema>, runId: string, pageSize: number): Promise<string[]> {
  const rows = await db
    .selectFrom(
      db
        .selectFrom(await runVerdicts(db, runId))
        .select(['v.order_id', sql<number>`row_number() OVER (ORDER BY v.order_id)`.as('position')])
        .where('v.status', 'not in', NOT_EXCEPTIONS)
        .as('e'),
    )
    .select('e.order_id')
    .where(sql<boolean>`e.position % ${pageSize} = 0`)
    .orderBy('e.order_id')
    .execute();
  return rows.map((row) => row.order_id);
}

/** The `limit` oldest open exceptions (first seen earliest), for the lists that show only the head. */
export async function oldestOpenExceptions(db: Kysely<Schema>, runId: string, limit: number): Promise<OpenException[]> {
  const rows = await (
    await exceptionsOf(db, runId)
  )
    .orderBy('v.first_seen_at')
    .orderBy('v.order_id')
    .limit(limit)
    .execute();
  return rows.map(toOpenException);
}

/**
 * The `perStatus` oldest open exceptions of each status, new and acknowledged apart, by status then first seen: the
 * html report's groups. The ranks take one more walk of the run's exceptions; what comes back is bounded by statuses
 * times perStatus, twice.
 */
export async function oldestOpenExceptionsPerStatus(
  db: Kysely<Schema>,
  runId: string,
  perStatus: number,
): Promise<OpenException[]> {
  const ranked = db
    .selectFrom(await runVerdicts(db, runId))
    .innerJoin('recon.reconciliation_runs as run', (join) => join.on('run.run_id', '=', runId))
    .select([
      'v.order_id',
      sql<number>`row_number() OVER (PARTITION BY v.status, ${acknowledgedSql}
        ORDER BY v.first_seen_at, v.order_id)`.as('status_rank'),
    ])
    .where('v.status', 'not in', NOT_EXCEPTIONS)
    .as('ranked');
  const rows = await (
    await exceptionsOf(db, runId)
  )
    .where(
      'v.order_id',
      'in',
      db.selectFrom(ranked).select('ranked.order_id').where('ranked.status_rank', '<=', perStatus),
    )
    .orderBy('v.status')
    .orderBy('v.first_seen_at')
    .orderBy('v.order_id')
    .execute();
  return rows.map(toOpenException);
}
