import { requireOrdersSource, type OrdersSourceConfig } from '../src/config/config.ts';
import type { Database } from '../src/db/database.ts';
import type { OrderImportResult } from '../src/orders/order-import-result.ts';
import type { ImportIdentity } from '../src/orders/order-imports-repository.ts';
import { createQueryRowNormalizer, type OrderQueryRow } from '../src/orders/order-query-row.ts';
import { openOrdersQuery, type OrdersQuery } from '../src/orders/orders-database.ts';
import { describeOrdersSource } from '../src/orders/orders-source-name.ts';
import { loadOrders, recordFailedImport } from './load-orders.ts';

/**
 * `recon sync-orders`: RECON_ORDERS_QUERY runs against the merchant's database and its rows stream through the
 * order rules into staging and one upsert, all in one transaction of recon's database, recorded in
 * recon.order_imports (source 'database'). A source that cannot be read (unreachable, a failing query, missing
 * columns) or a failing load commits nothing and is recorded as failed.
 */
export interface SyncOrdersOptions {
  /** Rows per fetch from the merchant's database. */
  readonly batchRows?: number;
  /** Called after each batch of rows, with the rows read so far. */
  readonly onProgress?: (rows: number) => void;
  /**
   * Stops the read at once (even while the merchant's database makes it wait) or the load before it commits:
   * nothing is committed nor recorded, and syncOrders rejects with the signal's reason.
   */
  readonly signal?: AbortSignal;
}

export async function syncOrders(
  database: Database,
  config: OrdersSourceConfig,
  options: SyncOrdersOptions = {},
): Promise<OrderImportResult> {
  const source = requireOrdersSource(config);
  const identity: ImportIdentity = { source: 'database', name: describeOrdersSource(source.databaseUrl), sha256: null };
  let query: OrdersQuery;
  try {
    query = await openOrdersQuery(source.databaseUrl, source.query, identity.name, {
      batchRows: options.batchRows,
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    return recordFailedImport(database, identity, error, identity.name);
  }
  try {
    const normalize = createQueryRowNormalizer();
    return await database.transaction((connection) =>
      loadOrders(
        connection,
        identity,
        query.batches,
        {
          line: (_row: OrderQueryRow, position) => position,
          normalize,
          raw: (row) => JSON.stringify(row),
        },
        { keepLines: false, signal: options.signal, onProgress: options.onProgress },
      ),
    );
  } catch (error) {
    if (options.signal?.aborted) throw error;
    return recordFailedImport(database, identity, error, identity.name);
  } finally {
    await query.close();
  }
}
