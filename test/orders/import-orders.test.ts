import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importOrderFiles } from '../../pipelines/import-orders.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { LoadedOrderImport, OrderImportResult } from '../../src/orders/order-import-result.ts';
import { zipArchive } from '../../scripts/zip-archive.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const limits = loadConfig({}).limits;
const HEADER = 'order_id;amount;currency;status;refunded_amount;payment_method;created_at';

/** `count` good orders `<prefix><n>` in the canonical column order, `;`-delimited, then `tail` as is. */
function ordersCsv(prefix: string, count: number, tail = ''): string {
  let text = HEADER + '\n';
  for (let n = 1; n <= count; n++) text += `${prefix}${n};${n}.25;EUR;paid;;wallet;2024-05-01T12:00:00+02:00\n`;
  return text + tail;
}

interface StoredOrder {
  order_id: string;
  amount_minor: string;
  currency: string;
  status: string;
  refunded_minor: string;
  payment_method: string;
  created_at: string;
  import_id: string;
  line: number | null;
}

describe.each(BACKENDS)('importOrderFiles on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-orders-'));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const importFiles = (paths: string[], options: Partial<Parameters<typeof importOrderFiles>[2]> = {}) =>
    importOrderFiles(testDb.database, paths, { limits, ...options });

  async function query<Row = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<Row[]> {
    return (await testDb.database.transaction((c) => c.query<Row>(text, params))).rows;
  }

  async function write(name: string, data: string | Buffer): Promise<string> {
    const file = path.join(tmp, name);
    await writeFile(file, data);
    return file;
  }

  async function orders(prefix: string): Promise<StoredOrder[]> {
    return query<StoredOrder>(
      `SELECT order_id, amount_minor::text AS amount_minor, currency, status, refunded_minor::text AS refunded_minor, payment_method,
              to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at, import_id::text AS import_id, line
       FROM recon.orders WHERE order_id LIKE $1 || '%' ORDER BY order_id`,
      [prefix],
    );
  }

  // A file's name ends in -<prefix>.<extension>: matched there alone, since the temp folder's random name may hold the
  // prefix too (a folder named ...DB... once counted every import of the file).
  async function counts(prefix: string) {
    const [row] = await query<{ orders: number; rejected: number; imports: number }>(
      `SELECT (SELECT count(*) FROM recon.orders WHERE order_id LIKE $1 || '%')::int AS orders,
              (SELECT count(*) FROM recon.rejected_order_rows r JOIN recon.order_imports i USING (import_id) WHERE i.name LIKE '%-' || $1 || '.%')::int AS rejected,
              (SELECT count(*) FROM recon.order_imports WHERE name LIKE '%-' || $1 || '.%')::int AS imports`,
      [prefix],
    );
    return row!;
  }

  const loaded = (result: OrderImportResult | undefined): LoadedOrderImport => {
    if (result?.status !== 'loaded') throw new Error(`not loaded: ${JSON.stringify(result)}`);
    return result;
  };

  it.skipIf(skip)(
    'loads a semicolon file with BOM and CRLF: exact minor units, UTC instants, lineage and the import row',
    async () => {
      const file = await write(
        'good-GD.csv',
        '\uFEFF' +
          [
            HEADER,
            'GD1;120.50;EUR;paid;;wallet;2024-05-01T12:00:00+02:00',
            'GD2;1500;JPY;partially_refunded;500;instalment;2024-05-01 23:30:00-05:00',
            'GD3;1.5;KWD;refunded;1.500;wallet;2024-05-01T00:00:00.123456Z',
            'GD4;90071992547409.93;EUR;authorized;0;instalment;2024-05-01T12:00:00Z',
            'GD5;0;EUR;cancelled;;wallet;2024-05-01T12:00:00Z',
          ].join('\r\n') +
          '\r\n',
      );
      const [result] = await importFiles([file]);
      expect(result).toEqual({
        source: 'file',
        name: file,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        status: 'loaded',
        importId: expect.any(String),
        rows: 5,
        inserted: 5,
        updated: 0,
        unchanged: 0,
        superseded: 0,
        rejected: 0,
      });
      const importId = loaded(result).importId;
      expect(await orders('GD')).toEqual([
        {
          order_id: 'GD1',
          amount_minor: '12050',
          currency: 'EUR',
          status: 'paid',
          refunded_minor: '0',
          payment_method: 'wallet',
          created_at: '2024-05-01T10:00:00.000000Z',
          import_id: importId,
          line: 2,
        },
        {
          order_id: 'GD2',
          amount_minor: '1500',
          currency: 'JPY',
          status: 'partially_refunded',
          refunded_minor: '500',
          payment_method: 'instalment',
          created_at: '2024-05-02T04:30:00.000000Z',
          import_id: importId,
          line: 3,
        },
        {
          order_id: 'GD3',
          amount_minor: '1500',
          currency: 'KWD',
          status: 'refunded',
          refunded_minor: '1500',
          payment_method: 'wallet',
          created_at: '2024-05-01T00:00:00.123456Z',
          import_id: importId,
          line: 4,
        },
        {
          order_id: 'GD4',
          amount_minor: '9007199254740993',
          currency: 'EUR',
          status: 'authorized',
          refunded_minor: '0',
          payment_method: 'instalment',
          created_at: '2024-05-01T12:00:00.000000Z',
          import_id: importId,
          line: 5,
        },
        {
          order_id: 'GD5',
          amount_minor: '0',
          currency: 'EUR',
          status: 'cancelled',
          refunded_minor: '0',
          payment_method: 'wallet',
          created_at: '2024-05-01T12:00:00.000000Z',
          import_id: importId,
          line: 6,
        },
      ]);
      const [recorded] = await query(
        'SELECT source, name, sha256, status, rows_total, rows_inserted, rows_updated, rows_unchanged, rows_rejected, error, finished_at IS NOT NULL AS finished FROM recon.order_imports WHERE import_id = $1',
        [importId],
      );
      expect(recorded).toEqual({
        source: 'file',
        name: file,
        sha256: loaded(result).sha256,
        status: 'loaded',
        rows_total: 5,
        rows_inserted: 5,
        rows_updated: 0,
        rows_unchanged: 0,
        rows_rejected: 0,
        error: null,
        finished: true,
      });
    },
  );

  it.skipIf(skip)(
    'reads a comma file with reordered, differently cased columns, quoted values and extra columns',
    async () => {
      const file = await write(
        'comma-CM.csv',
        [
          'Created_At,NOTE,Payment_Method,Status,Currency,Amount,Order_Id',
          '2024-05-01T12:00:00Z,"gift, wrapped",wallet,paid,EUR,10.00,CM1',
          '2024-05-01T12:00:00Z,"said ""hi""",INSTALMENT,Authorized,usd,"2,5",CM2',
          '2024-05-01T12:00:00Z,,instalment,authorized,usd,2.5,"CM,3"',
        ].join('\n') + '\n',
      );
      const [result] = await importFiles([file]);
      expect(result).toMatchObject({ status: 'loaded', rows: 3, inserted: 2, rejected: 1 });
      expect(
        (await orders('CM')).map((o) => [
          o.order_id,
          o.amount_minor,
          o.currency,
          o.status,
          o.refunded_minor,
          o.payment_method,
          o.line,
        ]),
      ).toEqual([
        ['CM,3', '250', 'USD', 'authorized', '0', 'instalment', 4],
        ['CM1', '1000', 'EUR', 'paid', '0', 'wallet', 2],
      ]);
      const rejected = await query('SELECT line, raw, reason FROM recon.rejected_order_rows WHERE import_id = $1', [
        loaded(result).importId,
      ]);
      expect(rejected).toEqual([
        {
          line: 3,
          raw: '2024-05-01T12:00:00Z,"said ""hi""",INSTALMENT,Authorized,usd,"2,5",CM2',
          reason: 'Amount: "2,5" is not a decimal amount with a dot',
        },
      ]);
    },
  );

  it.skipIf(skip)('keeps every bad row with its line, raw text and reason, and loads the rest', async () => {
    const file = await write(
      'bad-BR.csv',
      ordersCsv(
        'BR',
        2,
        [
          'BR3;12,50;EUR;paid;;wallet;2024-05-01T12:00:00Z',
          'BR4;10.00;EUR;refunded;10.01;wallet;2024-05-01T12:00:00Z',
          'BR5;10.00;EUR;shipped;;wallet;2024-05-01T12:00:00Z',
          'BR6;10.00;EUR;paid;;card;2024-05-01T12:00:00Z',
          'BR7;10.00;EUR;paid;;wallet;2024-05-01T12:00:00',
          'BR8;10.00;XXY;paid;;wallet;2024-05-01T12:00:00Z',
          ';10.00;EUR;paid;;wallet;2024-05-01T12:00:00Z',
          'BR9;10.00;EUR;paid;;wallet',
          'BR10;10.00;EUR;paid;;wallet;2024-05-01T12:00:00Z',
        ].join('\n') + '\n',
      ),
    );
    const [result] = await importFiles([file]);
    expect(result).toMatchObject({
      status: 'loaded',
      rows: 11,
      inserted: 3,
      updated: 0,
      unchanged: 0,
      superseded: 0,
      rejected: 8,
    });
    expect((await orders('BR')).map((o) => o.order_id)).toEqual(['BR1', 'BR10', 'BR2']);
    const rejected = await query<{ line: number; raw: string; reason: string }>(
      'SELECT line, raw, reason FROM recon.rejected_order_rows WHERE import_id = $1 ORDER BY line',
      [loaded(result).importId],
    );
    expect(rejected.map((r) => [r.line, r.reason])).toEqual([
      [4, 'amount: "12,50" is not a decimal amount with a dot'],
      [5, 'refunded_amount: "10.01" is more than the amount "10.00"'],
      [6, 'status: "shipped" is not one of paid, authorized, cancelled, refunded, partially_refunded'],
      [7, 'payment_method: "card" is not one of instalment, wallet'],
      [8, 'created_at: "2024-05-01T12:00:00" has no UTC offset (Z or +hh:mm), so the instant it means is unknown'],
      [9, 'currency: "XXY" is not an ISO 4217 currency code'],
      [10, 'order_id: empty, but every order needs one'],
      [11, 'expected 7 columns, found 6'],
    ]);
    expect(rejected[0]!.raw).toBe('BR3;12,50;EUR;paid;;wallet;2024-05-01T12:00:00Z');
    expect(rejected[7]!.raw).toBe('BR9;10.00;EUR;paid;;wallet');
  });

  it.skipIf(skip)('lets the last line of an order win, counting the others as superseded', async () => {
    const file = await write(
      'twice-LW.csv',
      ordersCsv(
        'LW',
        2,
        [
          'LW1;99.00;EUR;refunded;99.00;wallet;2024-05-02T12:00:00Z',
          'LW3;1.00;EUR;paid;;wallet;2024-05-01T12:00:00Z',
          'LW1;5.00;EUR;paid;;wallet;2024-05-03T12:00:00Z',
          'LW3;bad;EUR;paid;;wallet;2024-05-01T12:00:00Z',
        ].join('\n') + '\n',
      ),
    );
    const [result] = await importFiles([file]);
    // LW1 three times (two superseded), LW3 once accepted then once rejected: the rejected row supersedes nothing.
    expect(result).toMatchObject({
      status: 'loaded',
      rows: 6,
      inserted: 3,
      updated: 0,
      unchanged: 0,
      superseded: 2,
      rejected: 1,
    });
    expect((await orders('LW')).map((o) => [o.order_id, o.amount_minor, o.status, o.line])).toEqual([
      ['LW1', '500', 'paid', 6],
      ['LW2', '225', 'paid', 3],
      ['LW3', '100', 'paid', 5],
    ]);
  });

  it.skipIf(skip)(
    're-imports: unchanged orders are left alone, changed ones updated with their lineage, new ones inserted',
    async () => {
      const first = await write('first-RI.csv', ordersCsv('RI', 4));
      const [initial] = await importFiles([first]);
      expect(initial).toMatchObject({ status: 'loaded', inserted: 4 });
      const before = await query<{ order_id: string; updated_at: string }>(
        "SELECT order_id, updated_at::text AS updated_at FROM recon.orders WHERE order_id LIKE 'RI%' ORDER BY order_id",
      );

      const [again] = await importFiles([first]);
      expect(again).toMatchObject({ status: 'loaded', rows: 4, inserted: 0, updated: 0, unchanged: 4, rejected: 0 });
      expect(loaded(again).importId).not.toBe(loaded(initial).importId);
      expect((await orders('RI')).every((o) => o.import_id === loaded(initial).importId)).toBe(true);

      const second = await write(
        'second-RI.csv',
        [
          HEADER,
          'RI5;5.00;EUR;paid;;wallet;2024-05-01T12:00:00Z',
          'RI2;2.25;EUR;partially_refunded;1.00;wallet;2024-05-01T12:00:00+02:00',
          'RI1;1.25;EUR;paid;;wallet;2024-05-01T10:00:00Z',
          'RI3;3.25;EUR;paid;;wallet;2024-05-01T12:00:00+02:00',
        ].join('\n') + '\n',
      );
      const [update] = await importFiles([second]);
      expect(update).toMatchObject({ status: 'loaded', rows: 4, inserted: 1, updated: 1, unchanged: 2, rejected: 0 });
      const after = await orders('RI');
      const secondId = loaded(update).importId;
      expect(
        after.map((o) => [
          o.order_id,
          o.status,
          o.refunded_minor,
          o.import_id === secondId ? 'second' : 'first',
          o.line,
        ]),
      ).toEqual([
        // RI1's created_at is the same instant written another way: unchanged, lineage untouched.
        ['RI1', 'paid', '0', 'first', 2],
        ['RI2', 'partially_refunded', '100', 'second', 3],
        ['RI3', 'paid', '0', 'first', 4],
        ['RI4', 'paid', '0', 'first', 5],
        ['RI5', 'paid', '0', 'second', 2],
      ]);
      const untouched = await query<{ order_id: string; updated_at: string }>(
        "SELECT order_id, updated_at::text AS updated_at FROM recon.orders WHERE order_id IN ('RI1', 'RI3', 'RI4') ORDER BY order_id",
      );
      expect(untouched).toEqual(before.filter((o) => o.order_id !== 'RI2'));
    },
  );

  it.skipIf(skip)('reads a gzip-compressed orders file like a plain one', async () => {
    const file = await write('orders-GZ.csv.gz', gzipSync(ordersCsv('GZ', 3)));
    const [result] = await importFiles([file]);
    expect(result).toMatchObject({ status: 'loaded', rows: 3, inserted: 3 });
  });

  it.skipIf(skip)('fails a file whole, records it with a one-line reason, and goes on with the next', async () => {
    const noColumn = await write(
      'no-column-FL.csv',
      'order_id;amount;currency;status;payment_method\nFL1;1.00;EUR;paid;wallet\n',
    );
    const lateQuote = await write(
      'late-quote-FL.csv',
      ordersCsv(
        'FLQ',
        3000,
        'FLBAD;x;EUR;paid;;wallet;2024-05-01T12:00:00Z\nFLX;"1.00;EUR;paid;;wallet;2024-05-01T12:00:00Z\n',
      ),
    );
    const truncated = gzipSync(ordersCsv('FLG', 5000));
    const truncatedGzip = await write('truncated-FL.csv.gz', truncated.subarray(0, truncated.length - 30));
    const twoEntries = await write(
      'two-entries-FL.zip',
      zipArchive([
        { name: 'a.csv', data: Buffer.from(ordersCsv('FLZ', 1)) },
        { name: 'b.csv', data: Buffer.from(ordersCsv('FLY', 1)) },
      ]),
    );
    const empty = await write('empty-FL.csv', '');
    const missing = path.join(tmp, 'missing-FL.csv');
    const good = await write('good-after-FL.csv', ordersCsv('FLOK', 2));

    const results = await importFiles([noColumn, lateQuote, truncatedGzip, twoEntries, empty, missing, good]);
    expect(results.map((r) => (r.status === 'failed' ? r.errorCode : r.status))).toEqual([
      'CSV_HEADER',
      'CSV_MALFORMED',
      'ARCHIVE_CORRUPT',
      'ARCHIVE_CORRUPT',
      'FILE_EMPTY',
      'FILE_UNREADABLE',
      'loaded',
    ]);
    const failed = results.filter((r) => r.status === 'failed');
    expect(failed.map((r) => r.error)).toEqual([
      `${noColumn}: the header has no column created_at (found: "order_id, amount, currency, status, payment_method")`,
      `${lateQuote}: line 3003: a quote opened in the record starting here is never closed`,
      expect.stringMatching(/truncated-FL\.csv\.gz: truncated or corrupt gzip data/),
      `${twoEntries}: the zip holds 2 csv entries (a.csv, b.csv); an orders file must be one csv`,
      `${empty}: the file is empty (0 bytes)`,
      `${missing}: cannot read the file (ENOENT: no such file or directory)`,
    ]);
    const recorded = await query<{
      name: string;
      status: string;
      error_code: string;
      error: string;
      sha256: string | null;
      rows_total: number | null;
    }>(
      "SELECT name, status, error_code, error, sha256, rows_total FROM recon.order_imports WHERE name LIKE '%-FL.%' AND status = 'failed' ORDER BY import_id",
    );
    expect(recorded.map((r) => [r.name, r.error_code, r.error, r.rows_total])).toEqual(
      failed.map((r) => [r.name, r.errorCode, r.error, null]),
    );
    expect(recorded.map((r) => r.sha256 !== null)).toEqual([true, true, true, true, true, false]);
    expect(await counts('FL')).toEqual({ orders: 2, rejected: 0, imports: 7 });
  });

  it.skipIf(skip)(
    'records a database error as a failed import naming the file, and the next file still loads',
    async () => {
      await testDb.database.transaction((c) =>
        c.exec(`
        CREATE FUNCTION public.refuse_boom_order() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.order_id = 'DBBOOM' THEN RAISE EXCEPTION 'refused by test trigger'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_boom_order BEFORE INSERT ON recon.orders FOR EACH ROW EXECUTE FUNCTION public.refuse_boom_order();`),
      );
      try {
        const boom = await write(
          'boom-DB.csv',
          ordersCsv(
            'DBA',
            2000,
            'DBBOOM;1.00;EUR;paid;;wallet;2024-05-01T12:00:00Z\nDBX;x;EUR;paid;;wallet;2024-05-01T12:00:00Z\n',
          ),
        );
        const next = await write('next-DB.csv', ordersCsv('DBN', 2));
        const results = await importFiles([boom, next]);
        expect(results[0]).toMatchObject({
          status: 'failed',
          errorCode: 'DATABASE',
          error: expect.stringMatching(/boom-DB\.csv: .*refused by test trigger/),
        });
        expect(results[1]).toMatchObject({ status: 'loaded', inserted: 2 });
        expect(await counts('DB')).toEqual({ orders: 2, rejected: 0, imports: 2 });
      } finally {
        await testDb.database.transaction((c) =>
          c.exec('DROP TRIGGER refuse_boom_order ON recon.orders; DROP FUNCTION public.refuse_boom_order();'),
        );
      }
    },
  );

  it.skipIf(skip)(
    'stopped mid-file: that file rolls back unrecorded, the next is not started, the reason is rethrown',
    async () => {
      const first = await write('first-ST.csv', ordersCsv('STA', 2));
      const big = await write('big-ST.csv', ordersCsv('STB', 5000));
      const last = await write('last-ST.csv', ordersCsv('STC', 2));
      const controller = new AbortController();
      const finished: string[] = [];
      const stop = new Error('stopped by the test');
      const run = importFiles([first, big, last], {
        signal: controller.signal,
        onResult: (result) => finished.push(result.name),
        // Deterministic: the stop lands after the second batch of the big file was read.
        onProgress: ({ file, rows }) => {
          if (file === big && rows >= 2000) controller.abort(stop);
        },
      });
      await expect(run).rejects.toBe(stop);
      expect(finished).toEqual([first]);
      expect(await counts('ST')).toEqual({ orders: 2, rejected: 0, imports: 1 });
    },
  );
});
