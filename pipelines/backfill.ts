import type { BackfillRequest, BackfillResult, BackfillVerdict } from '../src/backfill/backfill-result.ts';
import { exportLagNote, exportMayLag } from '../src/backfill/export-lag.ts';
import { backfillFileIdentity } from '../src/backfill/backfill-request.ts';
import { batchOrderIds } from '../src/backfill/order-id-list.ts';
import { exportUnits, type ExportAccount, type ExportUnit } from '../src/client/export-accounts.ts';
import type { Connection, Database } from '../src/db/database.ts';
import { describeError, ReconError } from '../src/errors.ts';
import { NulCharacterError } from '../src/ingest/copy-text.ts';
import type { LoadedFile } from '../src/ingest/file-result.ts';
import {
  askedAt,
  findLoadedFileId,
  insertFailedFile,
  insertLoadingFile,
  recordLoadedFile,
  type FileIdentity,
} from '../src/ingest/files-repository.ts';
import { beginStaging, mergeStaged, stageEntry, type StagedEntry } from '../src/ingest/staged-file.ts';
import { recordDigestSeed } from '../src/ingest/row-digest.ts';
import { createStagingRowEncoder, type StagingRowEncoder } from '../src/ingest/staging-row-encoder.ts';
import { planHeader } from '../src/normalize/header-plan.ts';
import { createRecordNormalizer } from '../src/normalize/record-normalizer.ts';
import { readExportAnswer, type ExportAnswer, type ExportAnswerRecord } from '../src/parse/export-answer.ts';
import { EXPORT_COLUMNS } from '@recon/protocol';
import { loadCurrentVerdicts } from '../src/reconcile/current-verdicts.ts';
import { reconcile } from '../src/reconcile/reconcile.ts';
import { describeFailure, isConcurrentLoadOfSameBytes } from '../src/ingest/ingest-failure.ts';
import { fillFileAccount } from '../src/ingest/file-account.ts';
import { ACCOUNT_NOT_ASKED, guardedAccounts, requestScope, type RequestScope } from '../src/normalize/row-scope.ts';

/**
 * `recon backfill`: an operator's few orders, now. For each batch of ORDERIDs one synchronous getTransactions, whose
 * DATA goes the way a csv export goes (the same record normalizer, staging and upsert, a bad record kept in
 * recon.rejected_rows with its reason), with its own recon.files row for lineage, in a transaction of its own; then
 * one reconciliation run of those orders, and their verdicts.
 *
 * Every account is asked (a group once, SCOPE=CLIENTSGROUP, by its first account; see export-accounts.ts), whatever
 * the order's payment method: a payment on an account that does not serve it is what the verdict must warn of.
 *
 * An answer identical to one loaded before (same ORDERIDs asked, same DATA) is a duplicate, as a file of the same
 * bytes is: nothing is written, and the orders are reconciled all the same. A request that fails stops the backfill
 * before anything is reconciled; the requests loaded before it stay loaded (they are correct data, and loading them
 * again changes nothing).
 */
export interface BackfillOptions {
  /** Each once, checked (see order-id-list.ts). */
  readonly orderIds: readonly string[];
  /** ORDERIDs per request (RECON_EXPORT_BATCH_SIZE). */
  readonly batchSize: number;
  readonly toleranceMinor: bigint;
  readonly graceHours: number;
  /** When each request is stamped (and the run's ages measured, without asOf); the system clock by default. */
  readonly now?: () => Date;
  /**
   * The instant the run's ages are measured at, as `recon reconcile --as-of`; now() when absent. The requests are
   * stamped by `now` whatever this says: a later export is told from an earlier one by those stamps alone.
   */
  readonly asOf?: Date;
  /** Checked between requests and before the reconciliation. */
  readonly signal?: AbortSignal;
}

/** The accounts a backfill asks, each with the client that signs as it. */
export type BackfillAccounts = readonly ExportAccount[];

/** recon asks for UTC wall times, so reading them depends on no setting (RECON_TIMEZONE is for files it did not ask for). */
const EXPORT_TIME_ZONE = 'UTC';

export async function backfill(
  database: Database,
  accounts: BackfillAccounts,
  options: BackfillOptions,
): Promise<BackfillResult> {
  const now = options.now ?? (() => new Date());
  const units = exportUnits(accounts);
  if (units.length === 0) throw new ReconError('CONFIG', 'a backfill needs at least one account to ask');
  const asks = batchOrderIds(options.orderIds, options.batchSize).flatMap((orderIds) =>
    units.map((unit) => ({ orderIds, unit })),
  );
  const requests: BackfillRequest[] = [];
  for (const { orderIds, unit } of asks) {
    options.signal?.throwIfAborted();
    const account = accounts.find((each) => each.identifier === unit.identifier)!;
    try {
      const scope = askedScope(accounts, unit, orderIds);
      requests.push(await fetchAndLoad(database, account, unit, accounts.length > 1, orderIds, scope, now()));
    } catch (error) {
      throw requests.length === 0 ? error : afterSomeLoaded(error, requests.length, asks.length);
    }
  }
  options.signal?.throwIfAborted();
  const run = await reconcile(database, {
    scope: { kind: 'orders', orderIds: options.orderIds },
    origin: { kind: 'backfill' },
    asOf: options.asOf ?? now(),
    toleranceMinor: options.toleranceMinor,
    graceHours: options.graceHours,
  });
  const current = new Map(
    (await loadCurrentVerdicts(database.db, options.orderIds)).map((verdict) => [verdict.orderId, verdict]),
  );
  const verdicts = options.orderIds.flatMap((orderId): BackfillVerdict[] => {
    const verdict = current.get(orderId);
    // Every ORDERID of the run's scope that has a current verdict was judged by it (an id it found nothing for
    // left the current set in it); the verdict holds from the run that found it, this one or an earlier one.
    if (verdict === undefined) return [];
    const lags = exportMayLag(verdict, run.asOf, options.graceHours);
    return [{ ...verdict, lagNote: lags ? exportLagNote(orderId, verdict.orderCreatedAt!, run.asOf) : null }];
  });
  return { requests, run, verdicts };
}

/** `named`: the merchant has several accounts, so each request's file names the account (or group) asked. */
async function fetchAndLoad(
  database: Database,
  account: ExportAccount,
  unit: ExportUnit,
  named: boolean,
  orderIds: string[],
  scope: RequestScope,
  requestedAt: Date,
): Promise<BackfillRequest> {
  const data = await account.client.getTransactions({
    ORDERID: orderIds,
    COLUMNS: EXPORT_COLUMNS,
    SCOPE: unit.scope,
    TIMEZONE: EXPORT_TIME_ZONE,
  });
  const answer = readExportAnswer(orderIds, data, EXPORT_COLUMNS);
  const identity = backfillFileIdentity(answer, orderIds, requestedAt, named ? unit : undefined);
  const facts = {
    file: identity.name,
    sha256: identity.sha256,
    sizeBytes: identity.sizeBytes,
    compression: identity.compression,
    orderIds,
    identifier: unit.identifier,
  };

  const loadedBefore = await findLoadedFileId(database.db, identity.sha256);
  if (loadedBefore !== undefined) return { ...facts, status: 'duplicate', fileId: loadedBefore };
  try {
    const loaded = await database.transaction(async (connection) => {
      const file = await loadAnswer(connection, identity, answer, scope);
      // An answer without IDENTIFIER values for one account alone: they are that account's.
      if (unit.scope === 'CLIENT') await fillFileAccount(connection.db, file.fileId, unit.identifier);
      return file;
    });
    return { ...loaded, orderIds, identifier: unit.identifier };
  } catch (error) {
    if (isConcurrentLoadOfSameBytes(error)) {
      const fileId = await findLoadedFileId(database.db, identity.sha256);
      if (fileId !== undefined) return { ...facts, status: 'duplicate', fileId };
    }
    const failure = describeFailure(error, identity.name);
    let recorded: string;
    try {
      recorded = `recorded as failed file ${await insertFailedFile(database.db, identity, failure)}`;
    } catch (recordError) {
      recorded = `and recording the failure failed: ${describeError(recordError)}`;
    }
    // Anything but a ReconError or a database error is a bug: it goes on as it is, with its stack for RECON_DEBUG.
    if (!(error instanceof ReconError) && failure.code !== 'DATABASE') throw error;
    throw new ReconError(error instanceof ReconError ? error.code : 'DATABASE', `${failure.message} (${recorded})`, {
      cause: error,
    });
  }
}

/**
 * What a request's answer may write: the rows of the account asked (or of its group's accounts) for the ORDERIDs
 * asked. The service answers exactly that; anything else in DATA is rejected, as in a delivered file.
 */
function askedScope(accounts: BackfillAccounts, unit: ExportUnit, orderIds: readonly string[]): RequestScope {
  const group = unit.scope === 'CLIENTSGROUP' && accounts.find((each) => each.identifier === unit.identifier)?.group;
  return requestScope({
    accounts: group
      ? accounts.filter((each) => each.group === group).map((each) => each.identifier)
      : [unit.identifier],
    scope: unit.scope,
    orderIds,
  });
}

/** A `whole-file` load (src/ingest/load-records.ts) of one csv entry, fed by the answer's records: one COPY, one merge. */
async function loadAnswer(
  connection: Connection,
  identity: FileIdentity,
  answer: ExportAnswer,
  scope: RequestScope,
): Promise<LoadedFile> {
  const fileId = await insertLoadingFile(connection, identity);
  const staged = await beginStaging(connection);
  const plan = planHeader(answer.header, identity.name);
  const entry: StagedEntry = {
    name: null,
    columns: plan.presentColumns.filter((column) => column !== 'transaction_id'),
    withExtra: plan.extraHeaders.length > 0,
  };
  const normalize = createRecordNormalizer(plan, { timezone: EXPORT_TIME_ZONE, scope });
  const encoder = createStagingRowEncoder(0, entry, staged, recordDigestSeed(plan.header, EXPORT_TIME_ZONE));
  let text = '';
  let rejected = 0;
  for (const record of answer.records) {
    const encoded = encodeRecord(record, normalize, encoder);
    text += encoded.text;
    if (encoded.rejected) rejected++;
  }
  if (text !== '') await stageEntry(connection, entry, once(text));
  const accounts = guardedAccounts(scope);
  const merged = await mergeStaged(
    connection,
    fileId,
    [entry],
    staged,
    undefined,
    accounts && {
      accounts,
      reason: ACCOUNT_NOT_ASKED,
      rawLines: async (wanted) => new Map([[0, rawRecords(answer, wanted.get(0))]]),
    },
    askedAt(identity.arrival),
  );
  return recordLoadedFile(connection, fileId, identity, { rows: answer.records.length, rejected }, merged);
}

/** A record's COPY line: accepted as normalized, or rejected with its canonical JSON and the reason. */
function encodeRecord(
  record: ExportAnswerRecord,
  normalize: ReturnType<typeof createRecordNormalizer>,
  encoder: StagingRowEncoder,
): { text: string; rejected: boolean } {
  let reason: string;
  if (record.missing.length > 0) {
    reason = `the record has no ${record.missing.map((key) => JSON.stringify(key)).join(', ')}, which other records of the answer have`;
  } else {
    const result = normalize(record.values);
    if (!result.ok) reason = result.reason;
    else {
      try {
        return { text: encoder.accepted(result.row, record.line, record.values), rejected: false };
      } catch (error) {
        if (!(error instanceof NulCharacterError)) throw error;
        reason = error.message;
      }
    }
  }
  return { text: encoder.rejected(record.line, record.raw, reason), rejected: true };
}

/** The answer's records at `lines`, as their rejected rows keep them. */
function rawRecords(answer: ExportAnswer, lines: ReadonlySet<number> | undefined): Map<number, string> {
  return new Map(answer.records.filter((record) => lines?.has(record.line)).map((record) => [record.line, record.raw]));
}

async function* once(text: string): AsyncGenerator<string> {
  yield text;
}

/** A later request failed: the message says what stays loaded, since the run was not made. */
function afterSomeLoaded(error: unknown, loaded: number, requests: number): unknown {
  if (!(error instanceof ReconError)) return error;
  return new ReconError(
    error.code,
    `${error.message} (${loaded} of ${requests} requests were loaded before it; nothing was reconciled: run the backfill again)`,
    { cause: error },
  );
}
