import pg from 'pg';
import QueryStream from 'pg-query-stream';
import { ReconError } from '../errors.ts';
import { checkQueryColumns, type OrderQueryRow } from './order-query-row.ts';

/**
 * The merchant's own database, read by `recon sync-orders`: RECON_ORDERS_QUERY runs once, through a cursor, in
 * a read-only transaction (a query that would write fails instead of touching the merchant's data), and its rows
 * arrive a batch at a time, never as one array.
 *
 * Every value arrives as the text PostgreSQL wrote: the connection's type parsers are all the identity, so a
 * bigint never passes through a JS number nor a timestamptz through a Date (which would drop microseconds). The
 * session writes timestamps in ISO style in UTC (`2024-05-01 10:00:00.123456+00`), whatever the server's defaults.
 *
 * Every failure of the source (unreachable, refused, a failing query, missing columns) is a one-line ReconError
 * ORDERS_SOURCE naming the database by `name`.
 */
export interface OrdersQuery {
  /** The query's rows in batches of up to `batchRows`, checked to carry the order columns (checkQueryColumns) first. */
  readonly batches: AsyncIterable<OrderQueryRow[]>;
  /** Ends the cursor and the connection; safe to call at any point, and more than once. */
  close(): Promise<void>;
}

export interface OrdersQueryOptions {
  /** Rows per fetch from the cursor. */
  readonly batchRows?: number | undefined;
  /** Ends the read at once, even while the merchant's database makes it wait: the next read rejects with its reason. */
  readonly signal?: AbortSignal | undefined;
}

/** Rows per fetch: a round trip per thousand rows costs little, and a thousand small objects are little memory. */
const DEFAULT_BATCH_ROWS = 1000;
/** An address that drops packets would otherwise leave the sync waiting forever. */
const CONNECT_TIMEOUT_MS = 30_000;

const RAW_TEXT: pg.CustomTypesConfig = { getTypeParser: () => (value: string) => value };

export async function openOrdersQuery(
  url: string,
  query: string,
  name: string,
  options: OrdersQueryOptions = {},
): Promise<OrdersQuery> {
  const client = new pg.Client({ connectionString: url, types: RAW_TEXT, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // Whatever goes wrong on the connection ends the read with that error (see `failure` below); set up first, as an
  // 'error' without a listener would kill the process.
  let fail: (error: unknown) => void = () => {};
  const failure = new Promise<never>((_resolve, reject) => (fail = reject));
  failure.catch(() => {});
  let ending = false;
  client.on('error', (error) => fail(error));
  client.on('end', () => ending || fail(new Error('the connection ended unexpectedly')));
  const end = async () => {
    if (ending) return;
    ending = true;
    await client.end().catch(() => {});
  };
  // A stop while connecting ends the attempt at once: a host that drops packets would otherwise hold it until the
  // connect timeout.
  let abandonConnect = () => {};
  const stopped = new Promise<never>((_resolve, reject) => (abandonConnect = () => reject(options.signal!.reason)));
  stopped.catch(() => {});
  options.signal?.addEventListener('abort', abandonConnect, { once: true });
  try {
    options.signal?.throwIfAborted();
    await Promise.race([client.connect(), stopped]);
    await Promise.race([client.query(`SET TIME ZONE 'UTC'; SET DateStyle = 'ISO, YMD'; BEGIN READ ONLY`), stopped]);
  } catch (error) {
    if (options.signal?.aborted) {
      // pg's end() on a connection still being made only says goodbye politely and waits for an answer that a
      // silent host never gives, keeping the process alive until the connect timeout: cut the socket instead.
      ending = true;
      (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      throw options.signal.reason;
    }
    await end();
    throw new ReconError(
      'ORDERS_SOURCE',
      `${name}: cannot connect to the orders database: ${sourceErrorDetail(error)}`,
      { cause: error },
    );
  } finally {
    options.signal?.removeEventListener('abort', abandonConnect);
  }

  const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
  const stream = new QueryStream(query, [], { batchSize: batchRows, highWaterMark: batchRows });
  /*
   * pg-query-stream loses an error that arrives while no read is pending, and a read that waits on a connection
   * that died never settles (brianc/node-postgres#2707 and brianc/node-postgres#2870): a query that fails to parse,
   * or names a missing table, would leave the sync waiting forever. So every read races the cursor's and the connection's errors.
   */
  (stream.cursor as NodeJS.EventEmitter).on('error', (error: unknown) => fail(error));
  const { signal } = options;
  const stop = () => fail(signal!.reason);
  signal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted) stop();
  client.query(stream);

  async function* batches(): AsyncGenerator<OrderQueryRow[]> {
    const rows = stream[Symbol.asyncIterator]() as AsyncIterator<OrderQueryRow>;
    let checked = false;
    let batch: OrderQueryRow[] = [];
    const check = () => {
      checked = true;
      const fields = (stream._result as { fields: { name: string }[] }).fields;
      checkQueryColumns(
        fields.map((field) => field.name),
        name,
      );
    };
    for (;;) {
      let next: IteratorResult<OrderQueryRow>;
      try {
        next = await Promise.race([rows.next(), failure]);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw new ReconError('ORDERS_SOURCE', `${name}: the orders query failed: ${sourceErrorDetail(error)}`, {
          cause: error,
        });
      }
      if (next.done === true) break;
      if (!checked) check();
      batch.push(next.value);
      if (batch.length >= batchRows) {
        yield batch;
        batch = [];
      }
    }
    if (!checked) check();
    if (batch.length > 0) yield batch;
  }

  return {
    batches: batches(),
    async close() {
      signal?.removeEventListener('abort', stop);
      // Not waiting for the cursor to close: on a broken connection it never would. Ending the client is enough.
      stream.destroy();
      await end();
    },
  };
}

/**
 * One line from a pg or socket error. Connecting to a name with several addresses (localhost: ::1 and
 * 127.0.0.1) fails with an AggregateError whose own message is empty: its first error says what happened.
 */
function sourceErrorDetail(error: unknown): string {
  let detail = error;
  if (error instanceof AggregateError && !error.message && error.errors.length > 0) detail = error.errors[0];
  const message =
    detail instanceof Error ? detail.message || (detail as NodeJS.ErrnoException).code || detail.name : String(detail);
  return message.replace(/\s+/g, ' ').trim();
}
