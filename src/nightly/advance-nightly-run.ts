import { retry } from '@recon/protocol';
import { sql, type Kysely } from 'kysely';
import { batchOrderIds } from '../backfill/order-id-list.ts';
import type { NightlyConfig, ReconcileSettings } from '../config/config.ts';
import type { Database } from '../db/database.ts';
import { isDatabaseUnavailable, isUniqueViolation } from '../db/sql-state.ts';
import type { ExportRequestState, NightlyRunState, Schema } from '../db/schema.ts';
import { describeError, ReconError } from '../errors.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import { reconcile } from '../reconcile/reconcile.ts';
import { exportUnits, type ExportAccount } from '../client/export-accounts.ts';
import { findNightlyRun, type NightlyRun } from './nightly-run.ts';
import { runOrderIds } from './run-order-ids.ts';
import { IN_FLIGHT_WAIT_MS, sendUnsentRequests } from './send-export-requests.ts';
import { issueExportTokens } from '../receive/export-token.ts';

export interface NightlyDependencies {
  readonly database: Database;
  /** The merchant's accounts, each asked for the run's ORDERIDs (a group once, by its first account). */
  readonly accounts: readonly ExportAccount[];
  readonly nightly: NightlyConfig;
  readonly reconcile: ReconcileSettings;
  /** RECON_CALLBACK_BASE_URL: every request's CALLBACKURL is this plus its token. */
  readonly callbackBaseUrl: string;
  readonly now?: () => Date;
  /** Asks for the run to be advanced again: at once, or at `at` (the next deadline). */
  readonly scheduleAdvance: (nightlyRunId: string, at?: Date) => Promise<void>;
  /** Told of every state change, request and reconciliation; each record carries the run's id and date. */
  readonly log?: Logger;
  /** Checks, once per run before its requests go out, that the callback base reaches recon's receiver. */
  readonly probeCallbackBase?: (nightlyRunId: string) => Promise<void>;
  /** Where the seconds of each reconciliation are observed. */
  readonly reconcileSeconds?: { observe(seconds: number): void };
}

/** The dependencies of one run's advance: the logger is the run's own. */
type RunDependencies = NightlyDependencies & { readonly log: Logger };

/** A run stuck in `reconciling` longer than this lost its reconciler (a killed process): another takes over. */
const RECONCILE_LEASE_MS = 10 * 60_000;
/**
 * How long the end of a reconciliation (the run's new state, or the claim handed back) is tried again while the
 * database is away: a connection cut in the middle of the run must not leave it `reconciling` until its lease ends.
 */
const SETTLE_WAIT_MS = 60_000;

/**
 * `write`, tried again while the database cannot be reached (the protocol's retry): 100 ms, then twice as long each
 * time up to 2 s apart, for SETTLE_WAIT_MS in all.
 */
function settled<T>(write: () => Promise<T>): Promise<T> {
  return retry(
    write,
    { attempts: Infinity, baseDelayMs: 100, maxDelayMs: 2000 },
    { shouldRetry: isDatabaseUnavailable, signal: AbortSignal.timeout(SETTLE_WAIT_MS) },
  );
}

/**
 * Moves a nightly run on as far as it can go now, and says where it stands. Safe to call at any time, from any
 * number of processes at once, as often as wanted: each step is claimed by a conditional UPDATE (or a unique
 * key), so only one caller plans the batches, sends a request, asks again for a late export, or reconciles.
 *
 * 1. requesting: the run's ORDERIDs (run-order-ids.ts) in batches of RECON_EXPORT_BATCH_SIZE, one export
 *    request each for each account (or group: export-accounts.ts), with its own single-use token. The batches of
 *    the accounts interleave (batch 1 of each account, then batch 2...), so that every account is asked early.
 * 2. each request not yet sent is sent (asynchronous getTransactions to CALLBACKURL, dates in UTC), under the
 *    protocol's retry rules (send-export-requests.ts).
 * 3. a batch whose latest request got no export within RECON_EXPORT_TIMEOUT_SECONDS, or whose export failed to
 *    ingest, is asked for again with a new token, up to RECON_EXPORT_ATTEMPTS requests, then given up. A late
 *    export on an older token still completes the batch while that token lives.
 * 4. when every batch of every account is ingested or given up: the run's orders are reconciled as of the run's start; the run is
 *    `reconciled`, or `failed` when a batch was given up (its orders were judged without their export).
 * While batches are pending, the run's next advance is scheduled for the earliest deadline, once.
 */
export async function advanceNightlyRun(
  dependencies: NightlyDependencies,
  nightlyRunId: string,
): Promise<NightlyRunState> {
  const now = dependencies.now ?? (() => new Date());
  const run = await findNightlyRun(dependencies.database.db, nightlyRunId);
  if (!run) throw new ReconError('RUN_NOT_FOUND', `nightly run ${nightlyRunId} does not exist`);
  if (run.state === 'reconciled' || run.state === 'failed') return run.state;
  const log = (dependencies.log ?? silentLogger).child({ run: run.nightlyRunId, date: run.runDate });
  const deps: RunDependencies = { ...dependencies, log };
  if (run.state === 'requesting') {
    await planBatches(deps, run, now());
    await deps.probeCallbackBase?.(run.nightlyRunId);
  }
  await askAgainForLateBatches(deps, run, now());
  await sendUnsentRequests(deps, run.nightlyRunId, now);
  const progress = await progressOf(deps, run, now());
  if (progress.pendingBatches > 0) {
    const moved = await deps.database.db
      .updateTable('recon.nightly_runs')
      .set({ state: 'waiting', updated_at: now() })
      .where('nightly_run_id', '=', run.nightlyRunId)
      .where('state', '=', 'requesting')
      .executeTakeFirst();
    if (moved.numUpdatedRows > 0n)
      log.info({ state: 'waiting', pendingBatches: progress.pendingBatches }, 'nightly run waiting for its exports');
    if (progress.nextDue) await scheduleOnce(deps, run, progress.nextDue, now());
    return 'waiting';
  }
  return finishRun(deps, run, now());
}

async function planBatches(deps: RunDependencies, run: NightlyRun, now: Date): Promise<void> {
  const { exportBatchSize, lookbackDays, exportCompression } = deps.nightly;
  const units = exportUnits(deps.accounts);
  if (units.length === 0) throw new ReconError('CONFIG', 'a nightly run needs at least one account to ask');
  const planned = await deps.database.db.transaction().execute(async (trx) => {
    const orderIds = await runOrderIds(trx, run.asOf, lookbackDays);
    const batches = batchOrderIds(orderIds, exportBatchSize).flatMap((orderIds) =>
      units.map((unit) => ({ orderIds, unit })),
    );
    const claimed = await trx
      .updateTable('recon.nightly_runs')
      .set({ orders: orderIds.length, batches: batches.length, updated_at: now })
      .where('nightly_run_id', '=', run.nightlyRunId)
      .where('batches', 'is', null)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) return undefined;
    await issueExportTokens(
      trx,
      batches.map(({ orderIds, unit }, index) => ({
        callbackBaseUrl: deps.callbackBaseUrl,
        nightlyRunId: run.nightlyRunId,
        batch: index + 1,
        attempt: 1,
        orderIds,
        compression: exportCompression,
        expiresAt: tokenExpiry(deps.nightly, now),
        identifier: unit.identifier,
        scope: unit.scope,
      })),
    );
    return { orders: orderIds.length, batches: batches.length };
  });
  if (planned)
    deps.log.info(
      { state: 'requesting', ...planned, accounts: units.map((unit) => unit.identifier) },
      `nightly run planned: ${planned.orders} order(s) in ${planned.batches} batch(es)` +
        (units.length > 1 ? ` for ${units.length} accounts or groups` : ''),
    );
}

/** A token lives through every attempt of its batch, so a late first export is still taken. */
function tokenExpiry(nightly: NightlyConfig, from: Date): Date {
  return new Date(from.getTime() + nightly.exportTimeoutSeconds * 1000 * (nightly.exportAttempts + 1));
}

interface Progress {
  readonly pendingBatches: number;
  /** The earliest moment something is due: a deadline or a send to retry. */
  readonly nextDue: Date | undefined;
}

interface LatestRequest {
  readonly batch: number;
  readonly request_id: string;
  readonly attempt: number;
  readonly state: ExportRequestState;
  readonly sent_at: Date | null;
  readonly retry_at: Date | null;
  readonly ingested: boolean;
}

/** The latest request of each batch, and whether any request of the batch got its export ingested. */
async function latestRequests(db: Kysely<Schema>, nightlyRunId: string): Promise<LatestRequest[]> {
  return (await db
    .selectFrom('recon.export_requests as r')
    .distinctOn('r.batch')
    .select(['r.batch', 'r.request_id', 'r.attempt', 'r.state', 'r.sent_at', 'r.retry_at'])
    .select(sql<boolean>`bool_or(r.state = 'ingested') OVER (PARTITION BY r.batch)`.as('ingested'))
    .where('r.nightly_run_id', '=', nightlyRunId)
    .orderBy('r.batch')
    .orderBy('r.attempt', 'desc')
    .execute()) as LatestRequest[];
}

const isOpen = (batch: LatestRequest) => !batch.ingested && batch.state !== 'given_up';
const deadlineOf = (batch: LatestRequest, timeoutMs: number) =>
  batch.sent_at && new Date(new Date(batch.sent_at).getTime() + timeoutMs);

/** Asks again for every batch whose latest request is late (sent, no export in time), failed to ingest, or closed. */
async function askAgainForLateBatches(deps: RunDependencies, run: NightlyRun, now: Date): Promise<void> {
  const timeoutMs = deps.nightly.exportTimeoutSeconds * 1000;
  for (const batch of await latestRequests(deps.database.db, run.nightlyRunId)) {
    if (!isOpen(batch)) continue;
    const deadline = deadlineOf(batch, timeoutMs);
    const late = batch.state === 'requested' && deadline !== null && deadline <= now;
    if (late || batch.state === 'failed' || batch.state === 'timed_out') await askAgain(deps, run, batch, late, now);
  }
}

/** How many batches are still open, and the earliest moment one of them is due: its deadline, or a send to retry. */
async function progressOf(deps: NightlyDependencies, run: NightlyRun, now: Date): Promise<Progress> {
  const timeoutMs = deps.nightly.exportTimeoutSeconds * 1000;
  let pendingBatches = 0;
  let nextDue: Date | undefined;
  for (const batch of await latestRequests(deps.database.db, run.nightlyRunId)) {
    if (!isOpen(batch)) continue;
    pendingBatches++;
    // A delivered export is being ingested: its job advances the run when done.
    if (batch.state !== 'requested') continue;
    // A request waiting for room among those in flight is sent after an ingest; at the latest, once the requests
    // in flight now have waited their time. Looked at again no later than a timeout from now: a request an ingest
    // sends meanwhile has its deadline after that, and is then scheduled for it.
    const due =
      deadlineOf(batch, timeoutMs) ??
      (batch.retry_at ? new Date(batch.retry_at) : new Date(now.getTime() + Math.min(IN_FLIGHT_WAIT_MS, timeoutMs)));
    if (!nextDue || due < nextDue) nextDue = due;
  }
  return { pendingBatches, nextDue };
}

/**
 * A new request for a late or failed batch, in one transaction with the old request's new state, so that a crash
 * never leaves a batch whose latest request is closed and has no successor. The (run, batch, attempt) key makes
 * two processes asking again at once make one request. The last attempt gives the batch up instead.
 */
async function askAgain(
  deps: RunDependencies,
  run: NightlyRun,
  batch: LatestRequest,
  late: boolean,
  now: Date,
): Promise<void> {
  const lastAttempt = batch.attempt >= deps.nightly.exportAttempts;
  const closed: ExportRequestState = lastAttempt ? 'given_up' : late ? 'timed_out' : batch.state;
  const failure = late ? `no export delivered within ${deps.nightly.exportTimeoutSeconds} s` : undefined;
  try {
    await deps.database.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('recon.export_requests')
        .set({ state: closed, ...(failure ? { failure } : {}) })
        .where('request_id', '=', batch.request_id)
        .where('state', '=', batch.state)
        .execute();
      if (lastAttempt) return;
      // Read for this batch only: a run's ORDERIDs are too many to read with every batch's state.
      const asked = await trx
        .selectFrom('recon.export_requests')
        .select(['order_ids', 'compression', 'identifier', 'scope'])
        .where('request_id', '=', batch.request_id)
        .executeTakeFirstOrThrow();
      // The same account asks again; a request from before accounts were recorded was the first account's.
      const unit =
        asked.identifier !== null && asked.scope !== null
          ? { identifier: asked.identifier, scope: asked.scope }
          : exportUnits(deps.accounts)[0]!;
      await issueExportTokens(trx, [
        {
          callbackBaseUrl: deps.callbackBaseUrl,
          nightlyRunId: run.nightlyRunId,
          batch: batch.batch,
          attempt: batch.attempt + 1,
          orderIds: asked.order_ids,
          compression: asked.compression,
          expiresAt: tokenExpiry(deps.nightly, now),
          identifier: unit.identifier,
          scope: unit.scope,
        },
      ]);
    });
  } catch (error) {
    // Another process asked again first: its request is the batch's now.
    if (!isUniqueViolation(error)) throw error;
    return;
  }
  const batchLog = deps.log.child({ batch: batch.batch, request: String(batch.request_id) });
  if (lastAttempt) batchLog.warn({ attempts: batch.attempt, reason: failure ?? batch.state }, 'export batch given up');
  else
    batchLog.info(
      { attempt: batch.attempt + 1, attempts: deps.nightly.exportAttempts, reason: failure ?? batch.state },
      'export batch asked again',
    );
}

/** Schedules the run's next advance at `at` unless one is already due at or before it. */
async function scheduleOnce(deps: NightlyDependencies, run: NightlyRun, at: Date, now: Date): Promise<void> {
  const claimed = await deps.database.db
    .updateTable('recon.nightly_runs')
    .set({ next_advance_at: at })
    .where('nightly_run_id', '=', run.nightlyRunId)
    .where((eb) =>
      eb.or([eb('next_advance_at', 'is', null), eb('next_advance_at', '<=', now), eb('next_advance_at', '>', at)]),
    )
    .executeTakeFirst();
  if (claimed.numUpdatedRows > 0n) await deps.scheduleAdvance(run.nightlyRunId, at);
}

async function finishRun(deps: RunDependencies, run: NightlyRun, now: Date): Promise<NightlyRunState> {
  const db = deps.database.db;
  const leaseEnd = new Date(now.getTime() - RECONCILE_LEASE_MS);
  const claimed = await db
    .updateTable('recon.nightly_runs')
    .set({ state: 'reconciling', updated_at: now })
    .where('nightly_run_id', '=', run.nightlyRunId)
    .where((eb) =>
      eb.or([
        eb('state', 'in', ['requesting', 'waiting']),
        eb.and([eb('state', '=', 'reconciling'), eb('updated_at', '<', leaseEnd)]),
      ]),
    )
    .executeTakeFirst();
  if (claimed.numUpdatedRows === 0n) {
    // Another process is reconciling: look again when its lease ends, in case it died on the way.
    const current = await db
      .selectFrom('recon.nightly_runs')
      .select(['state', 'updated_at'])
      .where('nightly_run_id', '=', run.nightlyRunId)
      .executeTakeFirstOrThrow();
    if (current.state === 'reconciling')
      await scheduleOnce(deps, run, new Date(new Date(current.updated_at).getTime() + RECONCILE_LEASE_MS), now);
    return current.state;
  }
  deps.log.info({ state: 'reconciling' }, 'nightly run reconciling');
  try {
    const orders = await db
      .selectFrom('recon.export_requests')
      .select(sql<string>`unnest(order_ids)`.as('order_id'))
      .distinct()
      .where('nightly_run_id', '=', run.nightlyRunId)
      .where('attempt', '=', 1)
      .execute();
    const started = performance.now();
    const summary = await reconcile(deps.database, {
      scope: { kind: 'orders', orderIds: orders.map((row) => row.order_id) },
      origin: { kind: 'nightly', nightlyRunId: run.nightlyRunId, runDate: run.runDate },
      asOf: run.asOf,
      ...deps.reconcile,
    });
    deps.log.info(
      {
        reconciliation: summary.runId,
        orders: summary.ordersInScope,
        counts: summary.counts,
        lifecycle: summary.lifecycle,
        notFound: summary.notFoundCount,
        suspect: summary.suspect,
        seconds: Math.round(performance.now() - started) / 1000,
      },
      'orders reconciled',
    );
    deps.reconcileSeconds?.observe((performance.now() - started) / 1000);
    const givenUp = await givenUpBatches(db, run.nightlyRunId);
    const state: NightlyRunState = givenUp.length > 0 ? 'failed' : 'reconciled';
    const failure =
      givenUp.length > 0
        ? `${givenUp.length} export batch(es) given up, their orders reconciled without them: ${givenUp.map((b) => `batch ${b.batch} (${b.failure ?? 'no reason recorded'})`).join('; ')}`
        : null;
    await settled(() =>
      db
        .updateTable('recon.nightly_runs')
        .set({
          state,
          reconciliation_run_id: summary.runId,
          failure,
          finished_at: sql<Date>`clock_timestamp()`,
          updated_at: sql<Date>`clock_timestamp()`,
        })
        .where('nightly_run_id', '=', run.nightlyRunId)
        .execute(),
    );
    if (failure) deps.log.error({ state, reconciliation: summary.runId, failure }, 'nightly run failed');
    else deps.log.info({ state, reconciliation: summary.runId }, 'nightly run reconciled');
    return state;
  } catch (error) {
    // Hand the run back: the job's retry reconciles it again. Should the database stay away longer than the wait,
    // the run stays claimed until its lease ends, and the first error is the story.
    const handedBack = await settled(() =>
      db
        .updateTable('recon.nightly_runs')
        .set({ state: 'waiting', failure: describeError(error) })
        .where('nightly_run_id', '=', run.nightlyRunId)
        .where('state', '=', 'reconciling')
        .execute(),
    ).then(
      () => true,
      () => false,
    );
    if (handedBack)
      deps.log.error({ state: 'waiting', err: error }, 'nightly run not reconciled: handed back to be tried again');
    else
      deps.log.error(
        { state: 'reconciling', err: error },
        'nightly run not reconciled, and not handed back (the database is away): taken over when its lease ends',
      );
    throw error;
  }
}

async function givenUpBatches(
  db: Kysely<Schema>,
  nightlyRunId: string,
): Promise<{ batch: number | null; failure: string | null }[]> {
  return db
    .selectFrom('recon.export_requests')
    .select(['batch', 'failure'])
    .where('nightly_run_id', '=', nightlyRunId)
    .where('state', '=', 'given_up')
    .orderBy('batch')
    .execute();
}
