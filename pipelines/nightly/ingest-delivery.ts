import { sql, type Kysely } from 'kysely';
import type { Histogram } from 'prom-client';
import { ingestExportFile } from '../ingest-files.ts';
import type { IngestLimits } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import type { Schema } from '../../src/db/schema.ts';
import { isTransientDatabaseError } from '../../src/db/sql-state.ts';
import { describeError, ReconError } from '../../src/errors.ts';
import type { FileResult } from '../../src/ingest/file-result.ts';
import { silentLogger, type Logger } from '../../src/log/logger.ts';
import { spoolDelivery } from '../../src/receive/spool-delivery.ts';
import { endFailedAttempt, startIngestAttempt } from '../../src/nightly/delivery-attempts.ts';
import { fillFileAccount } from '../../src/ingest/file-account.ts';
import { deliveryScope, type DeliveryScope } from '../../src/nightly/delivery-scope.ts';
import { deliveryFileName, readDeliveryFacts, type DeliveryFacts } from '../../src/nightly/delivery-file-name.ts';

export interface IngestDeliveryOptions {
  readonly timezone: string;
  readonly limits: IngestLimits;
  /** What a decoder accepted with a warning (bytes after an archive's end). */
  readonly onWarning?: (message: string) => void;
  /** Told when a delivery is quarantined (failed for good after two equal failures). */
  readonly onQuarantined?: (deliveryId: string, reason: string) => void;
  /** Told of each ingest: its file, rows and seconds (the caller's logger carries the delivery's id). */
  readonly log?: Logger;
  /** Where each attempt's seconds are observed, by outcome (loaded, duplicate, failed, error). */
  readonly ingestSeconds?: Histogram<'outcome'>;
}

/**
 * A stored delivery through the ingest path: its bytes, read back from the database, become a local file (a zip
 * needs random access), which is loaded in one transaction as any export, under the delivery's own name
 * (delivery-file-name.ts) rather than the temporary path.
 * Run again after a crash at any point, it loads the same rows: identical bytes are recognised by their sha256,
 * and a load that did not commit left nothing behind. Each run is an attempt (delivery-attempts.ts): a delivery that
 * kills its worker twice, or fails the same way twice, is quarantined. Returns the nightly run the delivery answers.
 */
export async function ingestDelivery(
  database: Database,
  deliveryId: string,
  options: IngestDeliveryOptions,
): Promise<string | null> {
  const attempt = await startIngestAttempt(database.db, deliveryId);
  if (attempt.kind === 'quarantined') options.onQuarantined?.(deliveryId, attempt.reason);
  if (attempt.kind !== 'ingest') return attempt.nightlyRunId;
  const timer = options.ingestSeconds?.startTimer();
  try {
    const outcome = await ingestOnce(database, deliveryId, options);
    timer?.({ outcome });
  } catch (error) {
    timer?.({ outcome: 'error' });
    const transient = error instanceof DatabaseFailedDuringLoad || isTransientDatabaseError(error);
    // Recorded when the database lets it be; when it does not, the next attempt takes this one for a dead worker.
    const quarantined = await endFailedAttempt(database.db, deliveryId, describeError(error), transient).catch(
      () => undefined,
    );
    if (quarantined === undefined) throw error;
    options.onQuarantined?.(deliveryId, quarantined);
  }
  return attempt.nightlyRunId;
}

/** Returns the file's status: loaded, duplicate or failed. */
async function ingestOnce(
  database: Database,
  deliveryId: string,
  options: IngestDeliveryOptions,
): Promise<FileResult['status']> {
  const facts = await readDeliveryFacts(database.db, deliveryId);
  const started = performance.now();
  const scope = await deliveryScope(database.db, deliveryId);
  const result = await ingestSpooled(database, deliveryId, deliveryFileName(facts), scope, options);
  logIngest(options.log ?? silentLogger, facts, result, (performance.now() - started) / 1000);
  const failure = result.status === 'failed' ? result : undefined;
  // The database failed, not the file: the job is retried (by pg-boss, or the worker's sweep) and loads it then.
  if (failure?.errorCode === 'DATABASE_TRANSIENT')
    throw new DatabaseFailedDuringLoad(`delivery ${deliveryId}: ${failure.error}`);
  // A loaded file recorded its delivery in its own transaction (ingestSpooled).
  if (result.status !== 'loaded')
    await database.db
      .transaction()
      .execute((trx) => recordOutcome(trx, deliveryId, result.fileId, failure ? failure.error : null));
  return result.status;
}

/**
 * The delivery's end, and its export request's: ingested (failure null), or failed. A loaded file records it in the
 * file's own transaction, so its rows and its delivery's state commit together.
 */
async function recordOutcome(
  db: Kysely<Schema>,
  deliveryId: string,
  fileId: string | null,
  failure: string | null,
): Promise<void> {
  const delivery = await db
    .updateTable('recon.deliveries')
    .set({
      state: failure ? 'failed' : 'ingested',
      file_id: fileId,
      attempt_open: false,
      failure,
      failed_at: failure ? sql<Date>`now()` : null,
    })
    .where('delivery_id', '=', deliveryId)
    .returning('request_id')
    .executeTakeFirstOrThrow();
  await db
    .updateTable('recon.export_requests')
    .set(failure ? { state: 'failed', failure } : { state: 'ingested', ingested_at: sql<Date>`now()`, failure: null })
    .where('request_id', '=', delivery.request_id)
    .where('state', '=', 'delivered')
    .execute();
}

/**
 * The delivery spooled to a temp folder of its own and ingested under its own name; the folder is gone before the
 * attempt's outcome is recorded, so that a delivery seen ingested, failed or waiting for its retry has left nothing.
 * Only what its request asked for is written (`scope`): any other row is a rejected row of its file.
 */
async function ingestSpooled(
  database: Database,
  deliveryId: string,
  name: string,
  { scope, soleAccount }: DeliveryScope,
  options: IngestDeliveryOptions,
): Promise<FileResult> {
  const spooled = await spoolDelivery(database.db, deliveryId);
  try {
    return await ingestExportFile(
      database,
      { path: spooled.path, name, arrival: { kind: 'delivery', deliveryId } },
      {
        ...options,
        scope,
        beforeCommit: async (connection, loaded) => {
          // The rows are read: the copy goes before the outcome commits, or a delivery seen ingested would still
          // have its file in the temp folder for a moment.
          await spooled.remove();
          if (soleAccount !== null) await fillFileAccount(connection.db, loaded.fileId, soleAccount);
          await recordOutcome(connection.db, deliveryId, loaded.fileId, null);
        },
      },
    );
  } finally {
    await spooled.remove();
  }
}

/** One record an ingest: its file, counts and seconds, with the nightly run's date and batch it answers. */
function logIngest(log: Logger, facts: DeliveryFacts, result: FileResult, seconds: number): void {
  const ids = { request: facts.requestId, date: facts.runDate, batch: facts.batch, attempt: facts.attempt };
  const took = { seconds: Math.round(seconds * 1000) / 1000 };
  switch (result.status) {
    case 'loaded':
      return log.info(
        {
          ...ids,
          file: result.fileId,
          rows: result.rows,
          inserted: result.inserted,
          updated: result.updated,
          unchanged: result.unchanged,
          rejected: result.rejected,
          bytes: result.sizeBytes,
          ...took,
        },
        'delivery ingested',
      );
    case 'duplicate':
      return log.info({ ...ids, file: result.fileId, ...took }, 'delivery ingested: the same file was loaded before');
    case 'failed':
      return log.error(
        { ...ids, file: result.fileId, err: { code: result.errorCode, message: result.error }, ...took },
        'delivery failed to ingest',
      );
  }
}

/** The load failed for the database's sake (a lost connection, a deadlock), not the file's. */
class DatabaseFailedDuringLoad extends ReconError {
  constructor(message: string) {
    super('DATABASE', message);
  }
}
