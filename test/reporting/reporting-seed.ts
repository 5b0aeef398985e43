import { sql, type Insertable } from 'kysely';
import type { Connection, Database } from '../../src/db/database.ts';
import type {
  FilesTable,
  OrdersTable,
  ReconciliationRunsTable,
  TransactionsTable,
  VerdictsTable,
  VerdictStatus,
} from '../../src/db/schema.ts';

/** Every view of schema reporting, in name order. */
export const REPORTING_VIEWS = [
  'accounts',
  'daily_summary',
  'exception_actions',
  'exception_ageing',
  'exceptions',
  'files',
  'orders',
  'received_to_bridge',
  'reconciliation',
  'rejected_rows',
  'run_account_totals',
  'run_orders',
  'run_status_totals',
  'run_totals',
  'runs',
  'settlement_daily',
  'transactions',
  'verdict_history',
  'warnings',
] as const;

/** Above 2^53: a total that went through a float anywhere would come out wrong. */
export const BIG = 9007199254740993n;

const HOUR = 3_600_000;

export interface ReportingSeed {
  /** as_of of the runs in whole seconds: runs 1 and 2 10.5 and 2.5 days ago, so exception ages are 10 and 2 at any hour. */
  readonly asOf1: Date;
  readonly asOf2: Date;
  readonly asOf3: Date;
  readonly asOf4: Date;
  readonly fileA: string;
  readonly fileB: string;
  readonly fileC: string;
  /** A nightly delivery (run 2026-03-04, batch 2, attempt 2) and a backfill's answer, every row unchanged. */
  readonly fileD: string;
  readonly fileE: string;
  readonly deliveryD: string;
  readonly nightlyRunD: string;
  readonly importFile: string;
  readonly importDb: string;
  readonly run1: string;
  readonly run2: string;
  readonly run3: string;
  readonly run4: string;
}

/**
 * A small history written straight into recon's tables: five export files (three given to recon ingest, one of them
 * failed, a nightly delivery and a backfill), six transactions,
 * five orders from two imports, rejected rows of both kinds, and four runs: run 1 judges everything, run 2
 * re-judges O1 (still an exception), O4 (resolved) and a new unknown ORDERID, run 3 is a suspect run,
 * run 4 never finished.
 */
export async function seedReporting(database: Database): Promise<ReportingSeed> {
  const db = database.db;
  const secondsAgo = (ms: number) => new Date(Math.floor((Date.now() - ms) / 1000) * 1000);
  const asOf1 = secondsAgo(252 * HOUR);
  const asOf2 = secondsAgo(60 * HOUR);
  const asOf3 = secondsAgo(12 * HOUR);
  const asOf4 = secondsAgo(HOUR);

  const file = async (values: Insertable<FilesTable>) =>
    String((await db.insertInto('recon.files').values(values).returning('file_id').executeTakeFirstOrThrow()).file_id);
  const fileA = await file({
    name: 'exports/2026-03-02.csv',
    arrival: 'ingest',
    sha256: 'a'.repeat(64),
    size_bytes: 512,
    compression: 'none',
    received_at: '2026-03-02T06:00:00Z',
    finished_at: '2026-03-02T06:00:01Z',
    status: 'loaded',
    rows_total: 4,
    rows_inserted: 3,
    rows_updated: 0,
    rows_unchanged: 0,
    rows_rejected: 1,
  });
  const fileB = await file({
    name: 'exports/2026-03-03.zip',
    arrival: 'ingest',
    sha256: 'b'.repeat(64),
    size_bytes: 300,
    compression: 'zip',
    received_at: '2026-03-03T06:00:00Z',
    finished_at: '2026-03-03T06:00:02Z',
    status: 'loaded',
    rows_total: 3,
    rows_inserted: 3,
    rows_updated: 0,
    rows_unchanged: 0,
    rows_rejected: 0,
  });
  const fileC = await file({
    name: 'exports/broken.csv.gz',
    arrival: 'ingest',
    sha256: 'c'.repeat(64),
    size_bytes: 20,
    compression: 'gzip',
    received_at: '2026-03-04T06:00:00Z',
    finished_at: '2026-03-04T06:00:00Z',
    status: 'failed',
    error_code: 'ARCHIVE_CORRUPT',
    error: 'truncated or corrupt gzip data (unexpected end of file)',
  });
  const { nightly_run_id: nightlyRunD } = await db
    .insertInto('recon.nightly_runs')
    .values({ run_date: '2026-03-04', as_of: '2026-03-04T01:30:00Z', state: 'reconciled' })
    .returning('nightly_run_id')
    .executeTakeFirstOrThrow();
  const { request_id } = await db
    .insertInto('recon.export_requests')
    .values({
      token: 'seedD0tok',
      nightly_run_id: nightlyRunD,
      order_ids: ['O1'],
      compression: 'gzip',
      batch: 2,
      attempt: 2,
      state: 'ingested',
      expires_at: '2026-03-05T01:30:00Z',
    })
    .returning('request_id')
    .executeTakeFirstOrThrow();
  const { delivery_id: deliveryD } = await db
    .insertInto('recon.deliveries')
    .values({
      request_id,
      received_at: '2026-03-04T02:31:00Z',
      sha256: 'd'.repeat(64),
      bytes: 90,
      filename: 'transactions-0304.csv.gz',
      state: 'ingested',
    })
    .returning('delivery_id')
    .executeTakeFirstOrThrow();
  const fileD = await file({
    name: `nightly 2026-03-04 batch 2 attempt 2: transactions-0304.csv.gz (delivery ${deliveryD})`,
    arrival: 'delivery',
    delivery_id: deliveryD,
    sha256: 'd'.repeat(64),
    size_bytes: 90,
    compression: 'gzip',
    received_at: '2026-03-04T02:31:05Z',
    finished_at: '2026-03-04T02:31:06Z',
    status: 'loaded',
    rows_total: 1,
    rows_inserted: 0,
    rows_updated: 0,
    rows_unchanged: 1,
    rows_rejected: 0,
  });
  await db.updateTable('recon.deliveries').set({ file_id: fileD }).where('delivery_id', '=', deliveryD).execute();
  const fileE = await file({
    name: 'backfill:getTransactions 2026-03-05T10:00:00Z O2',
    arrival: 'backfill',
    sha256: 'e'.repeat(64),
    size_bytes: 120,
    compression: 'none',
    received_at: '2026-03-05T10:00:01Z',
    finished_at: '2026-03-05T10:00:01Z',
    status: 'loaded',
    rows_total: 1,
    rows_inserted: 0,
    rows_updated: 0,
    rows_unchanged: 1,
    rows_rejected: 0,
  });

  await db.insertInto('recon.accounts').values({ identifier: 'merchant', account_group: 'shop' }).execute();
  const transaction = (
    id: string,
    fileId: string,
    line: number,
    fields: Partial<Insertable<TransactionsTable>>,
  ): Insertable<TransactionsTable> => ({
    // Loaded before every run below: an explanation marks a transaction changed after its run.
    transaction_id: id,
    identifier: 'merchant',
    extra: '{}',
    file_id: fileId,
    line,
    updated_at: '2026-03-03T06:00:02Z',
    ...fields,
  });
  await db
    .insertInto('recon.transactions')
    .values([
      transaction('T1', fileA, 2, {
        order_id: 'O1',
        operation_type: 'payment',
        occurred_at: '2026-03-01T23:35:00Z',
        amount_minor: '1000',
        currency: 'EUR',
        exec_code: '0000',
        fees_minor: '25',
        schedule_index: 1,
        schedule_count: 3,
        card_type: 'CB',
        card_country: 'FR',
        client_email: 'someone@example.org',
      }),
      transaction('T2', fileB, 3, {
        order_id: 'O4',
        operation_type: 'payment',
        occurred_at: '2026-03-01T12:05:00Z',
        amount_minor: BIG.toString(),
        currency: 'EUR',
        exec_code: '0000',
        entry: 'export.csv',
      }),
      transaction('T3', fileB, 4, {
        order_id: 'O2',
        operation_type: 'authorization',
        occurred_at: '2026-03-02T00:15:00Z',
        amount_minor: '3000',
        currency: 'EUR',
        exec_code: '0002',
        retry_index: 1,
        retry_count: 2,
        entry: 'export.csv',
      }),
      transaction('T4', fileA, 3, {
        order_id: 'UNK-9',
        operation_type: 'payment',
        occurred_at: '2026-03-01T08:00:00Z',
        amount_minor: '700',
        currency: 'EUR',
        exec_code: '0000',
      }),
      transaction('T5', fileA, 4, {}),
      transaction('T6', fileB, 5, {
        order_id: 'UNK-0',
        operation_type: 'payment',
        occurred_at: '2026-03-02T09:00:00Z',
        amount_minor: '400',
        currency: 'EUR',
        exec_code: '0000',
        entry: 'export.csv',
      }),
    ])
    .execute();
  await db
    .insertInto('recon.rejected_rows')
    .values({ file_id: fileA, line: 5, raw: 'T7;O1;payment;x', reason: 'AMOUNT: not a decimal number' })
    .execute();

  const orderImport = async (source: 'file' | 'database', name: string) =>
    String(
      (
        await db
          .insertInto('recon.order_imports')
          .values({
            source,
            name,
            status: 'loaded',
            started_at: '2026-03-02T05:00:00Z',
            finished_at: '2026-03-02T05:00:01Z',
          })
          .returning('import_id')
          .executeTakeFirstOrThrow()
      ).import_id,
    );
  const importFile = await orderImport('file', 'orders/march.csv');
  const importDb = await orderImport('database', 'shop-db.internal/shop');
  const order = (
    id: string,
    fields: Pick<Insertable<OrdersTable>, 'amount_minor' | 'status' | 'created_at'> & Partial<Insertable<OrdersTable>>,
  ): Insertable<OrdersTable> => ({
    order_id: id,
    currency: 'EUR',
    refunded_minor: '0',
    payment_method: 'wallet',
    updated_at: '2026-03-02T05:00:01Z',
    import_id: importDb,
    line: null,
    ...fields,
  });
  await db
    .insertInto('recon.orders')
    .values([
      order('O1', {
        amount_minor: '1250',
        status: 'paid',
        payment_method: 'instalment',
        created_at: '2026-03-01T23:30:00Z',
        import_id: importFile,
        line: 2,
      }),
      order('O2', {
        amount_minor: '3000',
        status: 'authorized',
        created_at: '2026-03-02T00:10:00Z',
        import_id: importFile,
        line: 4,
      }),
      order('O3', { amount_minor: '500', currency: 'JPY', status: 'cancelled', created_at: '2026-03-01T10:00:00Z' }),
      order('O4', {
        amount_minor: BIG.toString(),
        status: 'paid',
        payment_method: 'instalment',
        created_at: '2026-03-01T12:00:00Z',
      }),
      // Never judged: no verdict, so no row in the reconciliation views or the daily summary.
      order('O5', { amount_minor: '100', status: 'paid', created_at: '2026-03-01T13:00:00Z' }),
    ])
    .execute();
  await db
    .insertInto('recon.rejected_order_rows')
    .values({ import_id: importFile, line: 3, raw: 'O9;1,5;EUR', reason: 'amount: not a decimal number' })
    .execute();

  const run = async (asOf: Date, fields: Partial<Insertable<ReconciliationRunsTable>>) =>
    String(
      (
        await db
          .insertInto('recon.reconciliation_runs')
          .values({
            as_of: asOf,
            scope: '{"kind":"all"}',
            description: 'all orders and unknown ORDERIDs',
            tolerance_minor: '0',
            grace_hours: 24,
            started_at: asOf,
            ...fields,
          })
          .returning('run_id')
          .executeTakeFirstOrThrow()
      ).run_id,
    );
  const run1 = await run(asOf1, {
    finished_at: new Date(asOf1.getTime() + 2000),
    orders_in_scope: 5,
    counts: JSON.stringify({ amount_mismatch: 1, pending: 1, matched: 1, missing_at_provider: 1, unknown_order: 1 }),
  });
  const run2 = await run(asOf2, {
    scope: JSON.stringify({ kind: 'orders', count: 4 }),
    description: '4 orders',
    tolerance_minor: '5',
    finished_at: new Date(asOf2.getTime() + 1000),
    orders_in_scope: 3,
    not_found: ['NOPE'],
    not_found_count: 1,
    counts: JSON.stringify({ amount_mismatch: 1, matched: 1, unknown_order: 1 }),
  });
  await db
    .insertInto('recon.run_scope_orders')
    .values(['O1', 'O4', 'UNK-0', 'NOPE'].map((order_id) => ({ run_id: run2, order_id })))
    .execute();
  const run3 = await run(asOf3, {
    scope: JSON.stringify({ kind: 'created_since', since: '2026-04-01' }),
    description: 'orders created since 2026-04-01',
    finished_at: new Date(asOf3.getTime() + 1000),
    orders_in_scope: 0,
    counts: '{}',
    suspect: true,
    suspect_reason: 'orders expect money but no transaction at all was found',
  });
  const run4 = await run(asOf4, {});

  type VerdictFields = Pick<Insertable<VerdictsTable>, 'status' | 'expected_minor' | 'settled_minor' | 'delta_minor'> &
    Partial<Insertable<VerdictsTable>>;
  const verdict = (runId: string, orderId: string, fields: VerdictFields): Insertable<VerdictsTable> => ({
    run_id: runId,
    order_id: orderId,
    known_order: true,
    lifecycle: null,
    first_seen_run_id: null,
    first_seen_at: null,
    currency: 'EUR',
    transaction_ids: [],
    warnings: null,
    explanation:
      fields.status === 'matched' ? null : JSON.stringify({ rule: fields.status, transactions: [], warnings: [] }),
    ...fields,
  });
  const firstSeen = (runId: string, asOf: Date) => ({
    lifecycle: 'new' as const,
    first_seen_run_id: runId,
    first_seen_at: asOf,
  });
  // Each order's current verdict, and the versions run 2 replaced (O1's and O4's of run 1) as history.
  const versions = [
    verdict(run1, 'O1', {
      status: 'amount_mismatch',
      ...firstSeen(run1, asOf1),
      expected_minor: '1250',
      settled_minor: '1000',
      delta_minor: '-250',
      at_risk_minor: '250',
    }),
    verdict(run1, 'O2', {
      status: 'pending',
      expected_minor: '3000',
      settled_minor: '0',
      delta_minor: '-3000',
      at_risk_minor: '0',
    }),
    verdict(run1, 'O3', {
      status: 'matched',
      currency: 'JPY',
      expected_minor: '0',
      settled_minor: '0',
      delta_minor: '0',
      at_risk_minor: '0',
    }),
    verdict(run1, 'O4', {
      status: 'missing_at_provider',
      ...firstSeen(run1, asOf1),
      expected_minor: BIG.toString(),
      settled_minor: '0',
      delta_minor: (-BIG).toString(),
      at_risk_minor: BIG.toString(),
    }),
    verdict(run1, 'UNK-9', {
      status: 'unknown_order',
      known_order: false,
      ...firstSeen(run1, asOf1),
      expected_minor: '0',
      settled_minor: '700',
      delta_minor: '700',
      at_risk_minor: '700',
    }),
    verdict(run2, 'O1', {
      status: 'amount_mismatch',
      ...firstSeen(run1, asOf1),
      lifecycle: 'persisting',
      expected_minor: '1250',
      settled_minor: '1000',
      delta_minor: '-250',
      at_risk_minor: '250',
      transaction_ids: ['T1'],
      warnings: ['instalment SCHEDULE position missing: 2, 3'],
      explanation: JSON.stringify({
        rule: 'amount_mismatch',
        reason: 'settled 10.00 EUR, 2.50 EUR less than the expected 12.50 EUR',
        warnings: ['instalment SCHEDULE position missing: 2, 3'],
      }),
    }),
    verdict(run2, 'O4', {
      status: 'matched',
      lifecycle: 'resolved',
      expected_minor: BIG.toString(),
      settled_minor: BIG.toString(),
      delta_minor: '0',
      at_risk_minor: '0',
      transaction_ids: ['T2'],
      warnings: ['abandoned at the redirect step (0002), no money moved: T9'],
    }),
    verdict(run2, 'UNK-0', {
      status: 'unknown_order',
      known_order: false,
      ...firstSeen(run2, asOf2),
      expected_minor: '0',
      settled_minor: '400',
      delta_minor: '400',
      at_risk_minor: '400',
    }),
  ];
  const replaced = versions.filter((row) => row.run_id === run1 && (row.order_id === 'O1' || row.order_id === 'O4'));
  await db
    .insertInto('recon.verdicts')
    .values(versions.filter((row) => !replaced.includes(row)))
    .execute();
  await db
    .insertInto('recon.verdict_history')
    .values(replaced.map((row) => ({ ...row, until_run_id: run2 })))
    .execute();
  await db
    .insertInto('recon.run_totals')
    .values([
      {
        run_id: run1,
        currency: 'EUR',
        orders: 3,
        unknown_orders: 1,
        expected_minor: (1250n + 3000n + BIG).toString(),
        settled_minor: '1700',
      },
      { run_id: run1, currency: 'JPY', orders: 1, unknown_orders: 0, expected_minor: '0', settled_minor: '0' },
      {
        run_id: run2,
        currency: 'EUR',
        orders: 2,
        unknown_orders: 1,
        expected_minor: (1250n + BIG).toString(),
        settled_minor: (1000n + BIG + 400n).toString(),
      },
    ])
    .execute();
  // The same runs per status, as a run writes them when it finishes.
  const statusTotal = (runId: string, currency: string, status: VerdictStatus, known: boolean, amounts: bigint[]) => ({
    run_id: runId,
    currency,
    status,
    verdicts: 1,
    orders: known ? 1 : 0,
    unknown_orders: known ? 0 : 1,
    expected_minor: amounts[0]!.toString(),
    settled_minor: amounts[1]!.toString(),
    delta_minor: amounts[2]!.toString(),
    at_risk_minor: amounts[3]!.toString(),
    at_risk_unknown: 0,
  });
  await db
    .insertInto('recon.run_status_totals')
    .values([
      statusTotal(run1, 'EUR', 'amount_mismatch', true, [1250n, 1000n, -250n, 250n]),
      statusTotal(run1, 'EUR', 'pending', true, [3000n, 0n, -3000n, 0n]),
      statusTotal(run1, 'JPY', 'matched', true, [0n, 0n, 0n, 0n]),
      statusTotal(run1, 'EUR', 'missing_at_provider', true, [BIG, 0n, -BIG, BIG]),
      statusTotal(run1, 'EUR', 'unknown_order', false, [0n, 700n, 700n, 700n]),
      statusTotal(run2, 'EUR', 'amount_mismatch', true, [1250n, 1000n, -250n, 250n]),
      statusTotal(run2, 'EUR', 'matched', true, [BIG, BIG, 0n, 0n]),
      statusTotal(run2, 'EUR', 'unknown_order', false, [0n, 400n, 400n, 400n]),
    ])
    .execute();
  // What the account settled through run 2's verdicts (O1's T1, O4's T2), as it finished.
  await db
    .insertInto('recon.run_account_totals')
    .values({
      run_id: run2,
      identifier: 'merchant',
      currency: 'EUR',
      orders: 2,
      transactions: 2,
      paid_minor: (1000n + BIG).toString(),
      refunded_minor: '0',
      fees_minor: '25',
    })
    .execute();
  // An accountant looked at O1: the audit trail has a row, and O1 reads as acknowledged.
  await sql`SELECT reporting.exception_action('O1', 'ack', 'asked the shop for the missing 2.50 EUR', 'alice')`.execute(
    db,
  );

  return {
    asOf1,
    asOf2,
    asOf3,
    asOf4,
    fileA,
    fileB,
    fileC,
    fileD,
    fileE,
    deliveryD: String(deliveryD),
    nightlyRunD: String(nightlyRunD),
    importFile,
    importDb,
    run1,
    run2,
    run3,
    run4,
  };
}

type Value = string | number | boolean | null | unknown[] | Record<string, unknown>;

/**
 * Every column of a reporting view, read the same way on both backends (pg and PGlite decode bigint and
 * timestamps differently): each cast to text in a UTC session, then integers to numbers, booleans to
 * booleans, jsonb parsed; bigint money stays a string. `orderBy` empty keeps the view's own order.
 */
export async function readView(connection: Connection, view: string, orderBy = ''): Promise<Record<string, Value>[]> {
  await connection.query("SET LOCAL TIME ZONE 'UTC'");
  const { rows: columns } = await connection.query<{ column_name: string; data_type: string }>(
    "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'reporting' AND table_name = $1 ORDER BY ordinal_position",
    [view],
  );
  const list = columns.map((c) => `${quote(c.column_name)}::text AS ${quote(c.column_name)}`).join(', ');
  const { rows } = await connection.query<Record<string, string | null>>(
    `SELECT ${list} FROM reporting.${quote(view)}${orderBy ? ` ORDER BY ${orderBy}` : ''}`,
  );
  return rows.map((row) =>
    Object.fromEntries(
      columns.map(({ column_name: name, data_type: type }) => {
        const text = row[name] ?? null;
        if (text === null) return [name, null];
        if (type === 'integer' || type === 'smallint') return [name, Number(text)];
        if (type === 'boolean') return [name, text === 'true'];
        if (type === 'jsonb') return [name, JSON.parse(text) as Value];
        return [name, text];
      }),
    ),
  );
}

/** A timestamptz as PostgreSQL writes it in a UTC session (whole seconds). */
export function utcText(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('.000Z', '+00');
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
