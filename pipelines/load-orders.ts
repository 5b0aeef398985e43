import type { Connection, Database } from '../src/db/database.ts';
import { describeError } from '../src/errors.ts';
import type { FailedOrderImport, LoadedOrderImport } from '../src/orders/order-import-result.ts';
import {
  insertFailedImport,
  insertLoadingImport,
  recordImportCounts,
  type ImportIdentity,
} from '../src/orders/order-imports-repository.ts';
import type { OrderNormalizeResult } from '../src/orders/order-normalizer.ts';
import { encodeAcceptedOrder, encodeRejectedOrder } from '../src/orders/order-staging.ts';
import { beginOrderStaging, mergeStagedOrders, stageOrders } from '../src/orders/staged-orders.ts';
import { describeFailure } from '../src/ingest/ingest-failure.ts';

/**
 * The steps both imports of orders share (`recon import-orders` per file, `recon sync-orders` per run), inside the
 * import's transaction: record the import, COPY every record of the source into staging (accepted or rejected),
 * one upsert, the counts. A stop asked for meanwhile rolls the import back with its transaction.
 */
export interface OrderSourceReader<T> {
  /** The record's lineage: its csv line, or `position` (1-based, in source order). */
  line(record: T, position: number): number;
  normalize(record: T): OrderNormalizeResult;
  /** The record as its source wrote it, kept beside the reason of a rejected one. */
  raw(record: T): string;
}

export interface LoadOrdersOptions {
  /** Whether recon.orders.line keeps the staged line (a csv line) or null (a database position). */
  readonly keepLines: boolean;
  readonly signal?: AbortSignal | undefined;
  /** Called after each batch of records, with the records read so far. */
  readonly onProgress?: ((rows: number) => void) | undefined;
}

export async function loadOrders<T>(
  connection: Connection,
  identity: ImportIdentity,
  batches: AsyncIterable<readonly T[]>,
  reader: OrderSourceReader<T>,
  options: LoadOrdersOptions,
): Promise<LoadedOrderImport> {
  const importId = await insertLoadingImport(connection, identity);
  await beginOrderStaging(connection);
  const counters = { rows: 0, rejected: 0 };
  await stageOrders(connection, copyText(batches, reader, counters, options));
  const merged = await mergeStagedOrders(connection, importId, options.keepLines);
  const counts = {
    rows: counters.rows,
    inserted: merged.inserted,
    updated: merged.updated,
    unchanged: merged.unchanged,
    rejected: counters.rejected,
  };
  await recordImportCounts(connection, importId, counts);
  // The merge is one statement that cannot be interrupted; a stop asked for meanwhile still rolls the import back.
  options.signal?.throwIfAborted();
  return {
    ...identity,
    status: 'loaded',
    importId,
    ...counts,
    superseded: counters.rows - counters.rejected - merged.distinct,
  };
}

/**
 * After the import's transaction rolled back: its failure is recorded in a row of its own, and described in one
 * line naming `label` (the file, or the database) unless the error already does.
 */
export async function recordFailedImport(
  database: Database,
  identity: ImportIdentity,
  error: unknown,
  label: string,
): Promise<FailedOrderImport> {
  const failure = describeFailure(error, label);
  let importId: string | null = null;
  let message = failure.message;
  try {
    importId = await insertFailedImport(database.db, identity, failure);
  } catch (recordError) {
    message += ` (and recording the failure failed: ${describeError(recordError)})`;
  }
  return { ...identity, status: 'failed', importId, errorCode: failure.code, error: message };
}

/** Below V8's large-object size, so each chunk is young garbage a scavenge frees (see entry-copy-items.ts). */
const COPY_CHUNK_CHARS = 32 * 1024;

async function* copyText<T>(
  batches: AsyncIterable<readonly T[]>,
  reader: OrderSourceReader<T>,
  counters: { rows: number; rejected: number },
  options: LoadOrdersOptions,
): AsyncGenerator<string> {
  let text = '';
  for await (const batch of batches) {
    options.signal?.throwIfAborted();
    for (let i = 0; i < batch.length; i++) {
      const record = batch[i]!;
      const line = reader.line(record, counters.rows + i + 1);
      const result = reader.normalize(record);
      if (result.ok) {
        text += encodeAcceptedOrder(result.row, line);
      } else {
        text += encodeRejectedOrder(line, reader.raw(record), result.reason);
        counters.rejected++;
      }
      if (text.length >= COPY_CHUNK_CHARS) {
        yield text;
        text = '';
      }
    }
    counters.rows += batch.length;
    options.onProgress?.(counters.rows);
  }
  if (text) yield text;
}
