import { Readable } from 'node:stream';
import type { Connection } from '../db/database.ts';
import { createOrderStagingTable, ORDER_STAGING_COPY_SQL } from './order-staging.ts';
import { moveRejectedOrderRows, upsertStagedOrders } from './order-upsert.ts';

/**
 * One import's orders on their way into recon.orders, inside the caller's transaction: `begin` creates the
 * staging table, `stage` COPYs the import's rows into it, `merge` moves the rejected rows and upserts the
 * accepted ones. Nothing here commits; the caller's rollback undoes it all.
 */
export interface OrderMergeCounts {
  /** Distinct order ids among the accepted rows. */
  readonly distinct: number;
  readonly inserted: number;
  readonly updated: number;
  readonly unchanged: number;
}

export async function beginOrderStaging(connection: Connection): Promise<void> {
  await createOrderStagingTable(connection.db);
}

/**
 * `copyText`: lines from encodeAcceptedOrder and encodeRejectedOrder, many rows per string. As a byte stream
 * each string becomes one Buffer as soon as it is made, so about one batch waits for the database at a time.
 */
export async function stageOrders(connection: Connection, copyText: AsyncIterable<string>): Promise<void> {
  await connection.copyFrom(ORDER_STAGING_COPY_SQL, Readable.from(copyText, { objectMode: false }));
}

export async function mergeStagedOrders(
  connection: Connection,
  importId: string,
  keepLines: boolean,
): Promise<OrderMergeCounts> {
  await moveRejectedOrderRows(connection.db, importId);
  const { distinct, inserted, updated } = await upsertStagedOrders(connection.db, importId, keepLines);
  return { distinct, inserted, updated, unchanged: distinct - inserted - updated };
}
