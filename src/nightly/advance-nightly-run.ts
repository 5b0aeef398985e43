import { sql, type Kysely } from 'kysely';
import type { PaymentClient } from '../client/payment-client.ts';
import type { NightlyConfig, ReconcileSettings } from '../config/config.ts';
import type { Database } from '../db/database.ts';
import type { ExportRequestState, NightlyRunState, Schema } from '../db/schema.ts';
import { describeError, ReconError } from '../errors.ts';
import { EXPORT_COLUMNS } from '../protocol/export-columns.ts';
import { reconcile } from '../reconcile/reconcile.ts';
import { callbackEndpoint } from '../receive/callback-url.ts';
import { issueExportToken } from '../receive/export-token.ts';
import { findNightlyRun, type NightlyRun } from './nightly-run.ts';
import { runOrderIdsSql } from './run-orders-sql.ts';

export interface NightlyDependencies {
  readonly database: Database;
  readonly client: Pick<PaymentClient, 'getTransactions'>;
  readonly nightly: NightlyConfig;
  readonly reconcile: ReconcileSettings;
  /** RECON_CALLBACK_BASE_URL: every request's CALLBACKURL is this plus its token. */
  readonly callbackBaseUrl: string;
  readonly now?: () => Date;
  /** Asks for the run to be advanced again: at once, or at `at` (the next export deadline). */
  readonly scheduleAdvance: (nightlyRunId: string, at?: Date) => Promise<void>;
  readonly log?: (message: string) => void;
}

/** A run stuck in `reconciling` longer than this lost its reconciler (a killed process): another takes over. */
const RECONCILE_LEASE_MS = 10 * 60_000;

/**
 * Moves a nightly run on as far as it can go now, and says where it stands. Safe to call at any time, from any
 * number of processes at once, as often as wanted: each step is claimed by a conditional UPDATE, so only one
 * caller plans the batches, sends a request, asks again for a late export, or reconciles.
 *
 * 1. requesting: the run's ORDERIDs (run-orders-sql.ts) in batches of RECON_EXPORT_BATCH_SIZE, one export
 *    request each, with its own single-use token.
 * 2. each request not yet sent is sent (asynchronous getTransactions to CALLBACKURL). A request whose sending
 *    failed after the client's retries (a read: the client retries what is safe) stays sent_at-less for the
 *    next advance; a request claimed by a process that died before sending counts as sent and times out.
 * 3. a batch whose latest request got no ingested delivery within RECON_EXPORT_TIMEOUT_SECONDS is asked for again
 *    with a new token, up to RECON_EXPORT_ATTEMPTS requests, then given up. A late delivery on an older token
 *    still counts while the token lives: the export is the same whichever request it answers.
 * 4. when every batch is ingested or given up: the run's orders are reconciled as of the run's start; the run
 *    is `reconciled`, or `failed` when a batch was given up (its orders were judged without their export).
 */
export async function advanceNightlyRun(deps: NightlyDependencies, nightlyRunId: string): Promise<NightlyRunState> {
  const now = deps.now ?? (() => new Date());
  const run = await findNightlyRun(deps.database.db, nightlyRunId);
  if (!run) throw new ReconError('RUN_NOT_FOUND', `nightly run ${nightlyRunId} does not exist`);
  if (run.state === 'reconciled' || run.state === 'failed') return run.state;
  if (run.state === 'requesting') await planBatches(deps, run, now());
  await sendUnsentRequests(deps, run, now);
  const progress = await expireLateRequests(deps, run, now());
  if (progress.pendingBatches > 0) {
    await deps.database.db
      .updateTable('recon.nightly_runs')
      .set({ state: 'waiting', updated_at: now() })
      .where('nightly_run_id', '=', run.nightlyRunId)
      .where('state', '=', 'requesting')
      .execute();
    await deps.scheduleAdvance(run.nightlyRunId, progress.nextDeadline);
    return 'waiting';
  }
  return finishRun(deps, run, progress.givenUpBatches, now());
}

async function planBatches(deps: NightlyDependencies, run: NightlyRun, now: Date): Promise<void> {
  const { exportBatchSize, lookbackDays, exportCompression } = deps.nightly;
  await deps.database.db.transaction().execute(async (trx) => {
    const { rows } = await runOrderIdsSql(run.asOf, lookbackDays).execute(trx);
    const batches: string[][] = [];
    for (let i = 0; i < rows.length; i += exportBatchSize) batches.push(rows.slice(i, i + exportBatchSize).map((row) => row.order_id));
    const claimed = await trx
      .updateTable('recon.nightly_runs')
      .set({ orders: rows.length, batches: batches.length, updated_at: now })
      .where('nightly_run_id', '=', run.nightlyRunId)
      .where('batches', 'is', null)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) return;
    for (const [index, orderIds] of batches.entries()) {
      await issueExportToken(trx, {
        callbackBaseUrl: deps.callbackBaseUrl,
        nightlyRunId: run.nightlyRunId,
        batch: index + 1,
        attempt: 1,
        orderIds,
        compression: exportCompression,
        expiresAt: tokenExpiry(deps.nightly, now),
      });
    }
  });
}

/** A token lives through every attempt of its batch, so a late first delivery is still taken. */
function tokenExpiry(nightly: NightlyConfig, from: Date): Date {
  return new Date(from.getTime() + nightly.exportTimeoutSeconds * 1000 * (nightly.exportAttempts + 1));
}

async function sendUnsentRequests(deps: NightlyDependencies, run: NightlyRun, now: () => Date): Promise<void> {
  const unsent = await deps.database.db
    .selectFrom('recon.export_requests')
    .select(['request_id', 'token', 'order_ids', 'compression'])
    .where('nightly_run_id', '=', run.nightlyRunId)
    .where('state', '=', 'requested')
    .where('sent_at', 'is', null)
    .orderBy('batch')
    .orderBy('attempt')
    .execute();
  for (const request of unsent) {
    const claimed = await deps.database.db
      .updateTable('recon.export_requests')
      .set({ sent_at: now() })
      .where('request_id', '=', request.request_id)
      .where('sent_at', 'is', null)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) continue;
    try {
      await deps.client.getTransactions({
        ORDERID: request.order_ids,
        COLUMNS: EXPORT_COLUMNS,
        COMPRESSION: request.compression as NightlyConfig['exportCompression'],
        CALLBACKURL: callbackUrl(deps.callbackBaseUrl, request.token),
      });
    } catch (error) {
      // Not sent: the next advance sends it again (an export request only reads, so asking twice is harmless).
      await deps.database.db.updateTable('recon.export_requests').set({ sent_at: null, failure: describeError(error) }).where('request_id', '=', request.request_id).execute();
      deps.log?.(`nightly run ${run.runDate}: export request ${request.request_id} not sent: ${describeError(error)}`);
    }
  }
}

function callbackUrl(baseUrl: string, token: string): string {
  return callbackEndpoint(baseUrl).base + token;
}

/** A request for a batch and attempt that another process already made is that process's to send. */
async function issueOnce(db: Kysely<Schema>, request: Parameters<typeof issueExportToken>[1]): Promise<void> {
  try {
    await issueExportToken(db, request);
  } catch (error) {
    if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
  }
}

const UNIQUE_VIOLATION = '23505';

interface Progress {
  readonly pendingBatches: number;
  readonly givenUpBatches: number;
  readonly nextDeadline: Date | undefined;
}

async function expireLateRequests(deps: NightlyDependencies, run: NightlyRun, now: Date): Promise<Progress> {
  const timeoutMs = deps.nightly.exportTimeoutSeconds * 1000;
  // The latest request of each batch, and whether any request of the batch got its export ingested.
  const { rows: batches } = await sql<{
    batch: number; request_id: string; attempt: number; state: string; order_ids: string[]; compression: string;
    sent_at: Date | null; ingested: boolean;
  }>`SELECT DISTINCT ON (r.batch) r.batch, r.request_id, r.attempt, r.state, r.order_ids, r.compression, r.sent_at,
      bool_or(r.state = 'ingested') OVER (PARTITION BY r.batch) AS ingested
    FROM recon.export_requests r
    WHERE r.nightly_run_id = ${run.nightlyRunId}
    ORDER BY r.batch, r.attempt DESC`.execute(deps.database.db);
  let pendingBatches = 0;
  let givenUpBatches = 0;
  let nextDeadline: Date | undefined;
  for (const batch of batches) {
    if (batch.ingested) continue;
    if (batch.state === 'given_up') {
      givenUpBatches++;
      continue;
    }
    const sentAt = batch.sent_at && new Date(batch.sent_at);
    const deadline = sentAt && new Date(sentAt.getTime() + timeoutMs);
    // A delivery that failed to ingest (a corrupt file) is asked for again at once, as is a late one.
    const late = batch.state === 'requested' && deadline !== null && deadline <= now;
    if (late || batch.state === 'failed') {
      const lastAttempt = batch.attempt >= deps.nightly.exportAttempts;
      const expired = await deps.database.db
        .updateTable('recon.export_requests')
        .set({
          state: lastAttempt ? 'given_up' : late ? 'timed_out' : 'failed',
          ...(late ? { failure: `no export delivered within ${deps.nightly.exportTimeoutSeconds} s` } : {}),
        })
        .where('request_id', '=', batch.request_id)
        .where('state', '=', batch.state as ExportRequestState)
        .where('attempt', '=', batch.attempt)
        .executeTakeFirst();
      if (lastAttempt) {
        givenUpBatches++;
        deps.log?.(`nightly run ${run.runDate}: batch ${batch.batch} given up after ${batch.attempt} request(s)`);
        continue;
      }
      if (expired.numUpdatedRows > 0n) {
        await issueOnce(deps.database.db, {
          callbackBaseUrl: deps.callbackBaseUrl,
          nightlyRunId: run.nightlyRunId,
          batch: batch.batch,
          attempt: batch.attempt + 1,
          orderIds: batch.order_ids,
          compression: batch.compression as NightlyConfig['exportCompression'],
          expiresAt: tokenExpiry(deps.nightly, now),
        });
        deps.log?.(`nightly run ${run.runDate}: batch ${batch.batch} asked again (request ${batch.attempt + 1} of ${deps.nightly.exportAttempts})`);
      }
      pendingBatches++;
      nextDeadline = now;
      continue;
    }
    pendingBatches++;
    const due = deadline ?? now;
    if (!nextDeadline || due < nextDeadline) nextDeadline = due;
  }
  return { pendingBatches, givenUpBatches, nextDeadline };
}

async function finishRun(deps: NightlyDependencies, run: NightlyRun, givenUpBatches: number, now: Date): Promise<NightlyRunState> {
  const claimed = await deps.database.db
    .updateTable('recon.nightly_runs')
    .set({ state: 'reconciling', updated_at: now })
    .where('nightly_run_id', '=', run.nightlyRunId)
    .where((eb) => eb.or([
      eb('state', 'in', ['requesting', 'waiting']),
      eb.and([eb('state', '=', 'reconciling'), eb('updated_at', '<', new Date(now.getTime() - RECONCILE_LEASE_MS))]),
    ]))
    .executeTakeFirst();
  if (claimed.numUpdatedRows === 0n) return 'reconciling';
  try {
    const { rows } = await sql<{ order_id: string }>`SELECT DISTINCT unnest(order_ids) AS order_id FROM recon.export_requests
      WHERE nightly_run_id = ${run.nightlyRunId} AND attempt = 1 ORDER BY 1`.execute(deps.database.db);
    const summary = await reconcile(deps.database, {
      scope: { kind: 'orders', orderIds: rows.map((row) => row.order_id) },
      asOf: run.asOf,
      ...deps.reconcile,
    });
    const state: NightlyRunState = givenUpBatches > 0 ? 'failed' : 'reconciled';
    await deps.database.db
      .updateTable('recon.nightly_runs')
      .set({
        state,
        reconciliation_run_id: summary.runId,
        failure: givenUpBatches > 0 ? `${givenUpBatches} export batch(es) given up after ${deps.nightly.exportAttempts} request(s): their orders were reconciled without them` : null,
        finished_at: sql<Date>`clock_timestamp()`,
        updated_at: sql<Date>`clock_timestamp()`,
      })
      .where('nightly_run_id', '=', run.nightlyRunId)
      .execute();
    return state;
  } catch (error) {
    // Hand the run back: the job's retry reconciles it again.
    await deps.database.db.updateTable('recon.nightly_runs').set({ state: 'waiting', failure: describeError(error) }).where('nightly_run_id', '=', run.nightlyRunId).execute();
    throw error;
  }
}
