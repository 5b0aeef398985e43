import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import {
  BACKENDS,
  createTestDatabase,
  createTestDatabaseBefore,
  hasPostgres,
  type TestDatabase,
} from '../support/test-database.ts';

const limits = loadConfig({}).limits;
const HEADER = 'TRANSACTIONID;OPERATIONTYPE;DATE;AMOUNT;CURRENCY;EXECCODE;BILLINGFEES INCL. VAT';
const ZONES = ['UTC', 'America/St_Johns', 'Asia/Kathmandu', 'Pacific/Chatham', 'Australia/Lord_Howe', 'Europe/Paris'];

/** recon.money_moved as the transactions stored now make it, each quarter summed anew: what the triggers must keep. */
const RECOMPUTED = `
  SELECT date_bin('15 minutes', occurred_at, timestamptz '2000-01-01 00:00+00') AS quarter, currency,
    count(*) AS counted, count(*) FILTER (WHERE exec_code = '0000') AS transactions,
    count(*) FILTER (WHERE exec_code = '0000' AND lower(btrim(operation_type)) IN ('payment', 'capture')) AS payments,
    count(*) FILTER (WHERE exec_code = '0000' AND lower(btrim(operation_type)) = 'refund') AS refunds,
    coalesce(sum(amount_minor) FILTER (WHERE exec_code = '0000'
      AND lower(btrim(operation_type)) IN ('payment', 'capture')), 0) AS paid_minor,
    coalesce(sum(amount_minor) FILTER (WHERE exec_code = '0000' AND lower(btrim(operation_type)) = 'refund'), 0)
      AS refunded_minor,
    coalesce(sum(fees_minor), 0) AS fees_minor
  FROM recon.transactions
  WHERE occurred_at IS NOT NULL AND (exec_code = '0000' OR fees_minor <> 0)
  GROUP BY 1, 2`;

/** reporting.settlement_daily as it was defined before the quarters: every transaction summed at every read. */
const SETTLEMENT_OF_EACH_TRANSACTION = (zone: string) => `
  SELECT (occurred_at AT TIME ZONE '${zone}')::date AS day, currency,
    count(*) FILTER (WHERE succeeded)::integer AS transactions,
    count(*) FILTER (WHERE succeeded AND op IN ('payment', 'capture'))::integer AS payments,
    count(*) FILTER (WHERE succeeded AND op = 'refund')::integer AS refunds,
    coalesce(sum(amount_minor) FILTER (WHERE succeeded AND op IN ('payment', 'capture')), 0)::bigint AS paid_minor,
    coalesce(sum(amount_minor) FILTER (WHERE succeeded AND op = 'refund'), 0)::bigint AS refunded_minor,
    coalesce(sum(fees_minor), 0)::bigint AS fees_minor
  FROM (SELECT occurred_at, currency, amount_minor, fees_minor, lower(btrim(operation_type)) AS op,
      exec_code = '0000' AS succeeded
    FROM recon.transactions WHERE occurred_at IS NOT NULL AND (exec_code = '0000' OR fees_minor <> 0)) t
  GROUP BY 1, 2`;

const SETTLEMENT_COLUMNS =
  'day::text, currency, transactions, payments, refunds, paid_minor::text, refunded_minor::text, fees_minor::text';

async function rowsOf(database: Database, text: string): Promise<unknown[]> {
  const { rows } = await database.transaction((c) => c.query(text));
  return rows;
}

/** The stored quarters that count anything, and the same summed from the transactions, in one order. */
async function storedAndRecomputed(database: Database) {
  const ordered = (from: string) => `SELECT quarter::text, currency, counted::text, transactions::text,
      payments::text, refunds::text, paid_minor::text, refunded_minor::text, fees_minor::text
    FROM (${from}) m
    WHERE (counted, transactions, payments, refunds, paid_minor, refunded_minor, fees_minor) <> (0, 0, 0, 0, 0, 0, 0)
    ORDER BY quarter, currency NULLS FIRST`;
  return {
    stored: await rowsOf(database, ordered('SELECT * FROM recon.money_moved')),
    recomputed: await rowsOf(database, ordered(RECOMPUTED)),
  };
}

async function settlementBothWays(database: Database, zone: string) {
  const order = 'ORDER BY day, currency NULLS FIRST';
  const view = await database.transaction(async (c) => {
    await c.query(`SET LOCAL recon.report_timezone = '${zone}'`);
    return (await c.query(`SELECT ${SETTLEMENT_COLUMNS} FROM reporting.settlement_daily ${order}`)).rows;
  });
  const reference = await rowsOf(
    database,
    `SELECT ${SETTLEMENT_COLUMNS} FROM (${SETTLEMENT_OF_EACH_TRANSACTION(zone)}) s ${order}`,
  );
  return { view, reference };
}

describe.each(BACKENDS)('the money moved per quarter hour on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let dir: string;
  const database = () => testDb.database;
  const ingest = async (name: string, lines: string[], options: { chunkRows?: number } = {}) => {
    const file = path.join(dir, name);
    await writeFile(file, [HEADER, ...lines].join('\n') + '\n');
    const [result] = await ingestFiles(testDb.database, [file], { timezone: 'UTC', limits, ...options });
    expect(result?.status).toBe('loaded');
  };
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-money-moved-'));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)(
    "keeps each quarter's sums those of its transactions as files load and revise them, and as rows go",
    async () => {
      // Payments, a refund, a capture spelled loosely, a refused refund charged a fee, an authorization with a fee, a
      // refused payment without one (not counted), in three quarters and three currencies, one row without any.
      await ingest('first.csv', [
        'P1;payment;2026-03-02 10:00:00;12.34;EUR;0000;0.10',
        'P2;payment;2026-03-02 10:14:59;5.00;EUR;0000;',
        'R1;refund;2026-03-02 10:15:00;2.00;EUR;0000;0.05',
        'R2;refund;2026-03-02 10:20:00;9.99;EUR;0005;0.07',
        'A1;authorization;2026-03-02 10:31:00;50.00;EUR;0000;0.05',
        'C1; Capture ;2026-03-02 10:05:00;1500;JPY;0000;20',
        'F1;payment;2026-03-02 10:06:00;3.00;EUR;0005;',
        'N1;payment;2026-03-02 10:07:00;4.00;;0000;',
      ]);
      let both = await storedAndRecomputed(database());
      expect(both.stored.length).toBe(5);
      expect(both.stored).toEqual(both.recomputed);

      // A second export revises rows (refused now, another amount, another quarter, another currency) and adds one.
      await ingest('second.csv', [
        'P1;payment;2026-03-02 10:00:00;12.34;EUR;0005;0.10',
        'P2;payment;2026-03-02 10:14:59;6.00;EUR;0000;',
        'R1;refund;2026-03-02 11:45:00;2.00;EUR;0000;0.05',
        'C1; Capture ;2026-03-02 10:05:00;15.00;EUR;0000;0.20',
        'P3;payment;2026-03-02 10:01:00;7.00;EUR;0000;',
      ]);
      both = await storedAndRecomputed(database());
      expect(both.stored).toEqual(both.recomputed);

      // A file loaded in chunks of three rows, through the staging table.
      await ingest(
        'chunked.csv',
        Array.from({ length: 10 }, (_, n) => `K${n};payment;2026-03-03 0${n}:30:00;1.0${n};GBP;0000;0.01`),
        { chunkRows: 3 },
      );
      both = await storedAndRecomputed(database());
      expect(both.stored).toEqual(both.recomputed);

      await sql`DELETE FROM recon.transactions WHERE transaction_id IN ('P2', 'K3')`.execute(database().db);
      both = await storedAndRecomputed(database());
      expect(both.stored).toEqual(both.recomputed);
      for (const zone of ZONES) {
        const { view, reference } = await settlementBothWays(database(), zone);
        expect(view.length).toBeGreaterThan(0);
        expect(view).toEqual(reference);
      }

      await sql`TRUNCATE recon.transactions`.execute(database().db);
      expect(await rowsOf(database(), 'SELECT * FROM recon.money_moved')).toEqual([]);
    },
  );

  it.skipIf(skip)(
    'dates each transaction in any zone as summing them one by one did, reading those before 2011 one by one',
    async () => {
      // St. John's turned its clocks back at 00:01 until 2010: on 2009-11-01 at 02:31Z, inside a quarter hour. The
      // two payments of that quarter fall on two days there; one quarter's sum could not tell them apart.
      await ingest('st-johns.csv', [
        'J1;payment;2009-11-01 02:30:30;1.00;CAD;0000;',
        'J2;payment;2009-11-01 02:40:00;2.00;CAD;0000;',
        'J3;payment;2026-11-01 02:40:00;3.00;CAD;0000;',
        'J4;refund;2026-11-01 03:40:00;0.50;CAD;0000;0.01',
      ]);
      for (const zone of ZONES) {
        const { view, reference } = await settlementBothWays(database(), zone);
        expect(view).toEqual(reference);
      }
      const { view } = await settlementBothWays(database(), 'America/St_Johns');
      expect(view.filter((row) => (row as { day: string }).day < '2011-01-01')).toEqual([
        expect.objectContaining({ day: '2009-10-31', paid_minor: '200' }),
        expect.objectContaining({ day: '2009-11-01', paid_minor: '100' }),
      ]);
    },
  );

  it.skipIf(backend !== 'postgres' || !hasPostgres)(
    'adds up two loads that write the same quarter at once, the second waiting for the first',
    async () => {
      const connect = async () => {
        const client = new pg.Client({ connectionString: testDb.env.DATABASE_URL });
        await client.connect();
        return client;
      };
      const [first, second] = [await connect(), await connect()];
      try {
        const fileId = (await first.query<{ file_id: string }>(`SELECT max(file_id)::text AS file_id FROM recon.files`))
          .rows[0]!.file_id;
        const insert = (id: string, amount: number) =>
          `INSERT INTO recon.transactions (transaction_id, operation_type, occurred_at, amount_minor, currency,
            exec_code, extra, file_id, line)
           VALUES ('${id}', 'payment', '2026-06-01T08:05:00Z', ${amount}, 'SEK', '0000', '{}', ${fileId}, 1)`;
        await first.query('BEGIN');
        await first.query(insert('S1', 100));
        // The second load's upsert meets the first's uncommitted quarter and waits on it: held, not raced.
        const waiting = second.query(insert('S2', 250));
        await expect
          .poll(
            async () => {
              const { rows } = await first.query<{ waiting: boolean }>(
                `SELECT count(*) > 0 AS waiting FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              );
              return rows[0]!.waiting;
            },
            { timeout: 20_000 },
          )
          .toBe(true);
        await first.query('COMMIT');
        await waiting;
        const { rows } = await first.query<{ payments: string; paid: string }>(
          `SELECT payments::text, paid_minor::text AS paid FROM recon.money_moved WHERE currency = 'SEK'`,
        );
        expect(rows).toEqual([{ payments: '2', paid: '350' }]);
      } finally {
        await first.end();
        await second.end();
      }
    },
  );
});

describe.each(BACKENDS)('migration 0038 over transactions stored before it on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabaseBefore(backend, '0038_money_moved_per_quarter_hour.sql');
    const db = testDb.database.db;
    const file = await sql<{ file_id: string }>`INSERT INTO recon.files (name, arrival, sha256, size_bytes,
        compression, received_at, finished_at, status, rows_total, rows_inserted, rows_updated, rows_rejected)
      VALUES ('export.csv', 'ingest', ${'b'.repeat(64)}, 100, 'none', now(), now(), 'loaded', 4, 4, 0, 0)
      RETURNING file_id::text`.execute(db);
    await sql`INSERT INTO recon.transactions (transaction_id, operation_type, occurred_at, amount_minor, currency,
        exec_code, fees_minor, extra, file_id, line)
      SELECT id, op, at::timestamptz, amount, currency, code, fees, '{}', ${file.rows[0]!.file_id}::bigint, line
      FROM (VALUES ('T1', 'payment', '2026-11-19T23:50:00Z', 1000, 'EUR', '0000', 10, 2),
        ('T2', 'refund', '2026-11-20T00:10:00Z', 300, 'EUR', '0000', NULL, 3),
        ('T3', 'payment', '2026-11-20T00:20:00Z', 500, 'EUR', '0005', 4, 4),
        ('T4', 'payment', '2009-11-01T02:35:00Z', 700, 'CAD', '0000', NULL, 5))
        AS t (id, op, at, amount, currency, code, fees, line)`.execute(db);
    await migrate(testDb.database);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)('sums what was stored into its quarters, so that the days read the same', async () => {
    const both = await storedAndRecomputed(testDb.database);
    expect(both.stored.length).toBe(4);
    expect(both.stored).toEqual(both.recomputed);
    for (const zone of ZONES) {
      const { view, reference } = await settlementBothWays(testDb.database, zone);
      expect(view).toEqual(reference);
    }
  });

  it.skipIf(skip)('empties with the transactions, even in a TRUNCATE that names both', async () => {
    await sql`TRUNCATE recon.transactions, recon.money_moved`.execute(testDb.database.db);
    expect(await rowsOf(testDb.database, 'SELECT * FROM recon.money_moved')).toEqual([]);
  });
});
