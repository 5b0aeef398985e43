import type { IngestLimits } from '../src/config/config.ts';
import type { Connection, Database } from '../src/db/database.ts';
import { fileErrorDetail } from '../src/decompress/archive-error.ts';
import { openExport, type CsvEntrySource } from '../src/decompress/open-export.ts';
import { ReconError } from '../src/errors.ts';
import type { LoadedOrderImport, OrderImportResult } from '../src/orders/order-import-result.ts';
import type { ImportIdentity } from '../src/orders/order-imports-repository.ts';
import { createCsvOrderNormalizer, planOrderHeader } from '../src/orders/order-csv.ts';
import { formatRawRecord } from '../src/parse/format-raw-record.ts';
import { parseCsv, type CsvRecord } from '../src/parse/parse-csv.ts';
import { identifyFile } from '../src/ingest/identify-file.ts';
import { loadOrders, recordFailedImport } from './load-orders.ts';

/**
 * `recon import-orders`: each csv file of orders (plain, or gzip, bzip2 or zip holding one csv: openExport) is
 * read, normalized and upserted into recon.orders in a transaction of its own: decompress -> parse -> normalize
 * -> COPY into staging -> one upsert. A file that fails in any way is rolled back whole and recorded as failed;
 * the next file still loads. The same bytes imported again are read again (and change nothing): orders also
 * come from sync-orders, so an older file may well be worth re-applying on purpose.
 */
export interface ImportOrdersOptions {
  readonly limits: IngestLimits;
  /** Called as each file finishes, before the next starts, so a long run reports as it goes. */
  readonly onResult?: (result: OrderImportResult) => void;
  /** Called after each batch of records of a file, with its records read so far. */
  readonly onProgress?: (progress: { readonly file: string; readonly rows: number }) => void;
  /**
   * Stops between batches and before a file commits: the current file rolls back, is not recorded as failed,
   * and importOrderFiles rejects with the signal's reason.
   */
  readonly signal?: AbortSignal;
}

export async function importOrderFiles(
  database: Database,
  paths: readonly string[],
  options: ImportOrdersOptions,
): Promise<OrderImportResult[]> {
  const results: OrderImportResult[] = [];
  for (const filePath of paths) {
    options.signal?.throwIfAborted();
    const result = await importOrderFile(database, filePath, options);
    options.onResult?.(result);
    results.push(result);
  }
  return results;
}

async function importOrderFile(
  database: Database,
  filePath: string,
  options: ImportOrdersOptions,
): Promise<OrderImportResult> {
  const identity: ImportIdentity = { source: 'file', name: filePath, sha256: null };
  let sha256: string;
  try {
    ({ sha256 } = await identifyFile(filePath));
  } catch (error) {
    // No bytes, no sha256, but the attempt is still recorded.
    const reason =
      error instanceof ReconError
        ? error
        : new ReconError('FILE_UNREADABLE', `${filePath}: cannot read the file (${fileErrorDetail(error)})`);
    return recordFailedImport(database, identity, reason, filePath);
  }
  const identified = { ...identity, sha256 };
  try {
    return await database.transaction((connection) => loadFile(connection, identified, options));
  } catch (error) {
    if (options.signal?.aborted) throw error;
    return recordFailedImport(database, identified, error, filePath);
  }
}

async function loadFile(
  connection: Connection,
  identity: ImportIdentity,
  options: ImportOrdersOptions,
): Promise<LoadedOrderImport> {
  const filePath = identity.name;
  const opened = await openExport(filePath, options.limits);
  try {
    const source = await onlyEntry(filePath, opened.entries);
    const parsed = await parseCsv(await source.open(), { label: source.label });
    const plan = planOrderHeader(parsed.header, source.label);
    const normalize = createCsvOrderNormalizer(plan);
    const { onProgress } = options;
    return await loadOrders(
      connection,
      identity,
      parsed.records,
      {
        line: (record: CsvRecord) => record.line,
        normalize: (record) => normalize(record.values),
        raw: (record) => formatRawRecord(record.values, parsed.delimiter),
      },
      {
        keepLines: true,
        signal: options.signal,
        onProgress: onProgress && ((rows) => onProgress({ file: filePath, rows })),
      },
    );
  } finally {
    await opened.close();
  }
}

/**
 * An orders file is one csv. A zip of several would need the entry in every order's lineage, and no shop exports
 * its orders that way: it is refused rather than guessed at.
 */
async function onlyEntry(filePath: string, entries: AsyncIterable<CsvEntrySource>): Promise<CsvEntrySource> {
  const sources: CsvEntrySource[] = [];
  for await (const source of entries) sources.push(source);
  if (sources.length !== 1) {
    const names = sources.map((source) => source.name).join(', ');
    throw new ReconError(
      'ARCHIVE_CORRUPT',
      `${filePath}: the zip holds ${sources.length} csv entries (${names}); an orders file must be one csv`,
    );
  }
  return sources[0]!;
}
