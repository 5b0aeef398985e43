import { EXPORT_COLUMNS, isRetryableExecCode } from '@recon/protocol';
import type { PaymentClient } from '../client/payment-client.ts';
import { ServiceError } from '../client/service-error.ts';
import { TransportError } from '../client/transport-error.ts';
import type { Database } from '../db/database.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';
import { callbackEndpoint } from '../receive/callback-url.ts';

/** What sending a run's requests needs of the advance's dependencies (advance-nightly-run.ts). */
export interface SendDependencies {
  readonly database: Database;
  readonly client: Pick<PaymentClient, 'getTransactions'>;
  /** Every request's CALLBACKURL is this plus its token. */
  readonly callbackBaseUrl: string;
  /** The run's logger. */
  readonly log: Logger;
}

/** A request that did not reach the service (refused connection, the service busy) is sent again after this. */
const SEND_RETRY_MS = 60_000;

/**
 * Sends each request of the run not yet sent (or whose retry is due), claimed first by a conditional update so that
 * no two processes send it. The protocol's retry rules: a request that provably never reached the service, or that
 * the service answered busy, is sent again a minute on; a timeout after sending is never repeated blindly (the
 * service may be preparing the file): it counts as sent, and its export timeout asks again with a new token; any
 * other refusal gives the batch up.
 */
export async function sendUnsentRequests(deps: SendDependencies, nightlyRunId: string, now: () => Date): Promise<void> {
  const db = deps.database.db;
  const unsent = await db
    .selectFrom('recon.export_requests')
    .select(['request_id', 'batch', 'attempt', 'token', 'order_ids', 'compression'])
    .where('nightly_run_id', '=', nightlyRunId)
    .where('state', '=', 'requested')
    .where('sent_at', 'is', null)
    .where((eb) => eb.or([eb('retry_at', 'is', null), eb('retry_at', '<=', now())]))
    .orderBy('batch')
    .orderBy('attempt')
    .execute();
  const base = callbackEndpoint(deps.callbackBaseUrl).base;
  for (const request of unsent) {
    const claimed = await db
      .updateTable('recon.export_requests')
      .set({ sent_at: now() })
      .where('request_id', '=', request.request_id)
      .where('sent_at', 'is', null)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) continue;
    const requestLog = deps.log.child({
      batch: request.batch,
      request: String(request.request_id),
      attempt: request.attempt,
    });
    try {
      await deps.client.getTransactions(
        {
          ORDERID: request.order_ids,
          COLUMNS: EXPORT_COLUMNS,
          COMPRESSION: request.compression,
          // Dates in UTC, whatever the account's default zone: the delivery is then read without a guess.
          TIMEZONE: 'UTC',
          CALLBACKURL: base + request.token,
        },
        { log: requestLog },
      );
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
