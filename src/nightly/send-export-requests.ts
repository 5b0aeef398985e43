import { EXPORT_COLUMNS, isRetryableExecCode } from '@recon/protocol';
import { ServiceError } from '../client/service-error.ts';
import { TransportError } from '../client/transport-error.ts';
import { sql, type Kysely } from 'kysely';
import type { NightlyConfig } from '../config/config.ts';
import type { Database } from '../db/database.ts';
import type { ExportCompression, ExportScope, Schema } from '../db/schema.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';
import { callbackEndpoint } from '../receive/callback-url.ts';
import type { ExportAccount } from '../client/export-accounts.ts';

/** What sending a run's requests needs of the advance's dependencies (advance-nightly-run.ts). */
export interface SendDependencies {
  readonly database: Database;
  /** The accounts asked for exports: each request is signed by the account it records. */
  readonly accounts: readonly ExportAccount[];
  /** Every request's CALLBACKURL is this plus its token. */
  readonly callbackBaseUrl: string;
  readonly nightly: Pick<NightlyConfig, 'exportInFlight'>;
  /** The run's logger. */
  readonly log: Logger;
}

/** A request that did not reach the service (refused connection, the service busy) is sent again after this. */
const SEND_RETRY_MS = 60_000;
/**
 * A request sent this long ago and still without its delivery no longer holds its place among those in flight: a
 * service that lost a delivery or takes its time does not stop the rest of the run being asked for.
 */
export const IN_FLIGHT_WAIT_MS = 60_000;
/** Requests claimed and sent together, each on its own connection to the service. */
const SENDS_AT_ONCE = 8;

/**
 * Sends the run's requests not yet sent (or whose retry is due), in order of batch, while fewer than
 * RECON_EXPORT_IN_FLIGHT of them are in flight: sent in the last IN_FLIGHT_WAIT_MS and not delivered, or delivered
 * and not ingested. Called by each advance of the run and after each of its ingests, so the service is asked for
 * the next export as soon as there is room, and its deliveries never pile up faster than the workers take them.
 *
 * Each request is claimed (sent_at set, rows locked SKIP LOCKED) before it is sent, so no two processes send it. The
 * protocol's retry rules: a request that provably never reached the service, or that the service answered busy, is
 * sent again a minute on; a timeout after sending is never repeated blindly (the service may be preparing the file):
 * it counts as sent, and its export timeout asks again with a new token; any other refusal gives the batch up.
 */
export async function sendUnsentRequests(deps: SendDependencies, nightlyRunId: string, now: () => Date): Promise<void> {
  const base = callbackEndpoint(deps.callbackBaseUrl).base;
  for (;;) {
    const claimed = await claimUnsent(deps.database.db, nightlyRunId, deps.nightly.exportInFlight, now());
    // Every claimed request is sent, whatever happens to the others: a claimed request left unsent would wait out
    // its export timeout. A send's own failure is recorded on its request; the first failure of the database is
    // thrown once all have ended.
    const sent = await Promise.allSettled(claimed.map((request) => sendRequest(deps, request, base, now)));
    const failure = sent.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    // Fewer than a full group: no room, or nothing left, for more.
    if (claimed.length < SENDS_AT_ONCE) return;
  }
}

/**
 * The next requests to send, at most SENDS_AT_ONCE and no more than there is room for among the `inFlight`, claimed
 * in one statement (the room is counted in it); rows another process is claiming are skipped.
 */
async function claimUnsent(db: Kysely<Schema>, nightlyRunId: string, inFlight: number, now: Date) {
  const flying = db
    .selectFrom('recon.export_requests')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('nightly_run_id', '=', nightlyRunId)
    .where((eb) =>
      eb.or([
        eb('state', '=', 'delivered'),
        eb.and([eb('state', '=', 'requested'), eb('sent_at', '>', new Date(now.getTime() - IN_FLIGHT_WAIT_MS))]),
      ]),
    );
  // The rows to claim are chosen once, in a materialized CTE: as the inner side of a join the SKIP LOCKED subquery
  // may be scanned again for each row, skip the rows this very statement has just updated, and claim past the room.
  const claimed = await db
    .with(
      (cte) => cte('claimable').materialized(),
      (qb) =>
        qb
          .selectFrom('recon.export_requests')
          .select('request_id')
          .where('nightly_run_id', '=', nightlyRunId)
          .where('state', '=', 'requested')
          .where('sent_at', 'is', null)
          .where((w) => w.or([w('retry_at', 'is', null), w('retry_at', '<=', now)]))
          .orderBy('batch')
          .orderBy('attempt')
          .limit(sql<number>`greatest(0, least(${SENDS_AT_ONCE}, ${inFlight} - (${flying})))`)
          .forUpdate()
          .skipLocked(),
    )
    .updateTable('recon.export_requests')
    .set({ sent_at: now })
    .where('request_id', 'in', (eb) => eb.selectFrom('claimable').select('claimable.request_id'))
    .where('sent_at', 'is', null)
    .returning([
      'request_id',
      'batch',
      'attempt',
      'token',
      'order_ids',
      'compression',
      'failure',
      'retry_at',
      'identifier',
      'scope',
    ])
    .execute();
  return claimed.sort((a, b) => (a.batch ?? 0) - (b.batch ?? 0) || a.attempt - b.attempt);
}

interface UnsentRequest {
  readonly request_id: string;
  readonly batch: number | null;
  readonly attempt: number;
  readonly token: string;
  readonly order_ids: string[];
  readonly compression: ExportCompression;
  readonly failure: string | null;
  readonly retry_at: Date | null;
  readonly identifier: string | null;
  readonly scope: ExportScope | null;
}

async function sendRequest(deps: SendDependencies, request: UnsentRequest, base: string, now: () => Date) {
  const db = deps.database.db;
  const requestLog = deps.log.child({
    batch: request.batch,
    request: String(request.request_id),
    attempt: request.attempt,
    ...(request.identifier === null ? {} : { account: request.identifier }),
  });
  // A request from before accounts were recorded was the single account's.
  const account =
    request.identifier === null
      ? deps.accounts[0]
      : deps.accounts.find((each) => each.identifier === request.identifier);
  if (!account) {
    const failure = `account ${request.identifier} is no longer configured (RECON_ACCOUNTS): its request cannot be signed`;
    await db
      .updateTable('recon.export_requests')
      .set({ state: 'given_up', failure })
      .where('request_id', '=', request.request_id)
      .execute();
    requestLog.error(failure);
    return;
  }
  try {
    await account.client.getTransactions(
      {
        ORDERID: request.order_ids,
        // IDENTIFIER among them: a group's export says which account each transaction went through.
        COLUMNS: EXPORT_COLUMNS,
        ...(request.scope === null ? {} : { SCOPE: request.scope }),
        COMPRESSION: request.compression,
        // Dates in UTC, whatever the account's default zone: the delivery is then read without a guess.
        TIMEZONE: 'UTC',
        CALLBACKURL: base + request.token,
      },
      { log: requestLog },
    );
    // A request sent again after a failed send forgets that failure; a first send has nothing to forget.
    if (request.failure !== null || request.retry_at !== null)
      await db
        .updateTable('recon.export_requests')
        .set({ failure: null, retry_at: null })
        .where('request_id', '=', request.request_id)
        .execute();
  } catch (error) {
    const after = afterFailedSend(error, now());
    await db.updateTable('recon.export_requests').set(after).where('request_id', '=', request.request_id).execute();
    requestLog.error(
      { err: error },
      'state' in after
        ? 'export request refused: its batch is given up'
        : 'retry_at' in after
          ? 'export request not sent: it is sent again in a minute'
          : 'export request unanswered: it may have reached the service, the export timeout asks again',
    );
  }
}

/** What a failed send leaves on its request (see sendUnsentRequests). */
function afterFailedSend(error: unknown, now: Date) {
  const failure = describeError(error);
  if (error instanceof TransportError && !error.neverSent) {
    return { failure: `${failure} (it may have reached the service: the export timeout asks again)` };
  }
  if (error instanceof ServiceError && !isRetryableExecCode(error.execCode)) {
    return { state: 'given_up' as const, failure };
  }
  return { sent_at: null, retry_at: new Date(now.getTime() + SEND_RETRY_MS), failure };
}
