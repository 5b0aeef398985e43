import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFromStdin } from 'pg-copy-streams';
import {
  feesMinorOf,
  MERCHANT_IDENTIFIER,
  reconcileScenarios,
  transactionIdOf,
  type BenchOrder,
  type BenchTransaction,
  type ScenarioKind,
} from './reconcile-scenarios.ts';

export interface LoadedData {
  orders: number;
  transactions: number;
  kinds: Partial<Record<ScenarioKind, number>>;
}

const ORDER_COLUMNS =
  'order_id, amount_minor, currency, status, refunded_minor, payment_method, created_at, import_id, line';
const TRANSACTION_COLUMNS =
  'transaction_id, identifier, order_id, operation_type, occurred_at, amount_minor, currency, exec_code, fees_minor, file_id, line';
/** Lines per chunk handed to COPY: large enough that the stream's per-chunk cost vanishes. */
const CHUNK_LINES = 2000;

const orderLine = (o: BenchOrder, importId: string, line: number) =>
  `${o.orderId}\t${o.amountMinor}\t${o.currency}\t${o.status}\t${o.refundedMinor}\t${o.method}\t${new Date(o.createdMs).toISOString()}\t${importId}\t${line}\n`;

const transactionLine = (t: BenchTransaction, id: number, fileId: string) =>
  `${transactionIdOf(id)}\t${MERCHANT_IDENTIFIER}\t${t.orderId}\t${t.operation}\t${new Date(t.occurredMs).toISOString()}\t` +
  `${t.amountMinor}\t${t.currency}\t${t.execCode}\t${feesMinorOf(t.amountMinor)}\t${fileId}\t${id}\n`;

/**
 * Fills recon.orders and recon.transactions of a migrated database with the scenarios of `orders` orders, by
 * COPY, the two tables at once on two connections (each walks the same seeded sequence), under one
 * order_imports row and one files row, then VACUUM ANALYZE so every reader finds the same settled state.
 */
export async function loadReconcileData(url: string, orders: number): Promise<LoadedData> {
  const [importId, fileId] = await withClient(url, async (client) => {
    const imported = await client.query<{ import_id: string }>(
      `INSERT INTO recon.order_imports (source, name, status, rows_total, rows_inserted, finished_at)
       VALUES ('file', 'bench-orders.csv', 'loaded', $1, $1, now()) RETURNING import_id`,
      [orders],
    );
    const file = await client.query<{ file_id: string }>(
      `INSERT INTO recon.files (name, arrival, sha256, size_bytes, compression, status, finished_at)
       VALUES ('bench-export.csv', 'ingest', repeat('0', 64), 0, 'none', 'loaded', now()) RETURNING file_id`,
    );
    return [imported.rows[0]!.import_id, file.rows[0]!.file_id];
  });

  const kinds: Partial<Record<ScenarioKind, number>> = {};
  let transactions = 0;
  async function* orderLines(): AsyncGenerator<string> {
    let chunk = '';
    let line = 0;
    for (const { order } of reconcileScenarios(orders)) {
      if (!order) continue;
      chunk += orderLine(order, importId, ++line);
      if (line % CHUNK_LINES === 0) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
  async function* transactionLines(): AsyncGenerator<string> {
    let chunk = '';
    let lines = 0;
    for (const { kind, transactions: list } of reconcileScenarios(orders)) {
      kinds[kind] = (kinds[kind] ?? 0) + 1;
      for (const transaction of list) {
        chunk += transactionLine(transaction, ++transactions, fileId);
        if (++lines % CHUNK_LINES === 0) {
          yield chunk;
          chunk = '';
        }
      }
    }
    if (chunk) yield chunk;
  }
  await Promise.all([
    withClient(url, (client) =>
      pipeline(
        Readable.from(orderLines()),
        client.query(copyFromStdin(`COPY recon.orders (${ORDER_COLUMNS}) FROM STDIN`)),
      ),
    ),
    withClient(url, (client) =>
      pipeline(
        Readable.from(transactionLines()),
        client.query(copyFromStdin(`COPY recon.transactions (${TRANSACTION_COLUMNS}) FROM STDIN`)),
      ),
    ),
  ]);
  await withClient(url, async (client) => {
    await client.query('VACUUM ANALYZE recon.orders');
    await client.query('VACUUM ANALYZE recon.transactions');
  });
  return { orders, transactions, kinds };
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
