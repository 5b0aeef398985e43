import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../../src/db/database.ts';
import { insertLoadingFile } from '../../src/ingest/files-repository.ts';
import {
  beginStaging,
  mergeStaged,
  stageEntry,
  type MergeCounts,
  type StagedEntry,
} from '../../src/ingest/staged-file.ts';
import { createRepeatedIdFilter, type RepeatedIdFilter } from '../../src/ingest/repeated-id-filter.ts';
import { recordDigestSeed } from '../../src/ingest/row-digest.ts';
import { createStagingRowEncoder } from '../../src/ingest/staging-row-encoder.ts';
import type { TransactionRow } from '../../src/normalize/transaction-row.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const EMPTY_ROW: TransactionRow = {
  transaction_id: '',
  identifier: null,
  order_id: null,
  operation_type: null,
  occurred_at: null,
  amount_minor: null,
  currency: null,
  exec_code: null,
  fees_minor: null,
  schedule_index: null,
  schedule_count: null,
  retry_index: null,
  retry_count: null,
  client_email: null,
  client_address: null,
  card_full_name: null,
  card_type: null,
  card_country: null,
  three_d_secure: null,
  three_ds_global_status: null,
  rule_applied: null,
  extra: null,
};

function row(values: Partial<TransactionRow> & { transaction_id: string }): TransactionRow {
  return { ...EMPTY_ROW, ...values };
}

type Staged = { line: number; row: TransactionRow } | { line: number; raw: string; reason: string };

interface TestEntry extends StagedEntry {
  readonly rows: Staged[];
}

let fileCounter = 0;

/** Loads entries the way the ingest pipeline does, in one transaction, and returns the file id and counts. */
async function load(
  connection: Connection,
  entries: TestEntry[],
  ids?: RepeatedIdFilter,
): Promise<{ fileId: string; counts: MergeCounts }> {
  fileCounter++;
  const fileId = await insertLoadingFile(connection, {
    name: `test-${fileCounter}.csv`,
    sha256: fileCounter.toString(16).padStart(64, '0'),
    sizeBytes: 1,
    compression: 'none',
    arrival: { kind: 'ingest' },
  });
  const begun = await beginStaging(connection);
  const staged = ids ? { ...begun, ids } : begun;
  for (const [index, entry] of entries.entries()) {
    // The record a row came from: here the row itself, under a header of the entry's columns.
    const encoder = createStagingRowEncoder(
      index,
      entry,
      staged,
      recordDigestSeed(['transaction_id', ...entry.columns, String(entry.withExtra)], 'UTC'),
    );
    async function* text() {
      let batch = '';
      for (const staged of entry.rows) {
        batch +=
          'row' in staged
            ? encoder.accepted(staged.row, staged.line, [
                JSON.stringify(staged.row, (_, value: unknown) => (typeof value === 'bigint' ? String(value) : value)),
              ])
            : encoder.rejected(staged.line, staged.raw, staged.reason);
      }
      yield batch;
    }
    await stageEntry(connection, entry, text());
  }
  return { fileId, counts: await mergeStaged(connection, fileId, entries, staged, undefined, undefined) };
}

const ALL_COLUMNS: StagedEntry['columns'] = [
  'identifier',
  'order_id',
  'operation_type',
  'occurred_at',
  'amount_minor',
  'currency',
  'exec_code',
  'fees_minor',
  'schedule_index',
  'schedule_count',
  'retry_index',
  'retry_count',
  'client_email',
  'client_address',
  'card_full_name',
  'card_type',
  'card_country',
  'three_d_secure',
  'three_ds_global_status',
  'rule_applied',
];

describe.each(BACKENDS)('staging and upsert on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  async function transaction(id: string) {
    const { rows } = await testDb.database.transaction((c) =>
      c.query<Record<string, unknown>>(
        `SELECT transaction_id, order_id, occurred_at::text AS occurred_at, amount_minor::text AS amount_minor, currency, exec_code,
                schedule_index, schedule_count, client_address, extra, file_id::text AS file_id, entry, line
         FROM recon.transactions WHERE transaction_id = $1`,
        [id],
      ),
    );
    return rows[0];
  }

  it.skipIf(skip)('inserts, then leaves equal rows alone, then updates only changed ones', async () => {
    const full = (id: string, amount: bigint): TransactionRow =>
      row({
        transaction_id: id,
        order_id: `order-${id}`,
        occurred_at: '2017-03-01T09:28:30Z',
        amount_minor: amount,
        currency: 'EUR',
        exec_code: '0000',
        schedule_index: 1,
        schedule_count: 3,
        client_address: 'Rue\tdu "Port"\n12\\b',
      });
    const entry = (amounts: bigint[]): TestEntry => ({
      name: null,
      columns: ALL_COLUMNS,
      withExtra: false,
      rows: amounts.map((amount, i) => ({ line: i + 2, row: full(`A${i}`, amount) })),
    });

    const first = await testDb.database.transaction((c) => load(c, [entry([100n, 200n, 9007199254740993n])]));
    expect(first.counts).toEqual({ distinct: 3, inserted: 3, updated: 0, unchanged: 0, rejected: 0 });
    expect(await transaction('A2')).toEqual({
      transaction_id: 'A2',
      order_id: 'order-A2',
      occurred_at: '2017-03-01 09:28:30+00',
      amount_minor: '9007199254740993',
      currency: 'EUR',
      exec_code: '0000',
      schedule_index: 1,
      schedule_count: 3,
      client_address: 'Rue\tdu "Port"\n12\\b',
      extra: {},
      file_id: first.fileId,
      entry: null,
      line: 4,
    });

    const same = await testDb.database.transaction((c) => load(c, [entry([100n, 200n, 9007199254740993n])]));
    expect(same.counts).toEqual({ distinct: 3, inserted: 0, updated: 0, unchanged: 3, rejected: 0 });
    expect((await transaction('A0'))!.file_id).toBe(first.fileId);

    const changed = await testDb.database.transaction((c) => load(c, [entry([100n, 250n, 9007199254740993n])]));
    expect(changed.counts).toEqual({ distinct: 3, inserted: 0, updated: 1, unchanged: 2, rejected: 0 });
    expect(await transaction('A1')).toMatchObject({ amount_minor: '250', file_id: changed.fileId, line: 3 });
    expect((await transaction('A0'))!.file_id).toBe(first.fileId);
  });

  it.skipIf(skip)('a narrower export neither blanks nor compares the columns it lacks; extra merges', async () => {
    await testDb.database.transaction((c) =>
      load(c, [
        {
          name: null,
          columns: ['order_id', 'amount_minor', 'currency'],
          withExtra: true,
          rows: [
            {
              line: 2,
              row: row({
                transaction_id: 'N1',
                order_id: 'o1',
                amount_minor: 5n,
                currency: 'JPY',
                extra: { 'CUSTOM A': 'x' },
              }),
            },
          ],
        },
      ]),
    );
    const narrow = await testDb.database.transaction((c) =>
      load(c, [
        {
          name: 'part-1.csv',
          columns: ['amount_minor'],
          withExtra: true,
          rows: [{ line: 7, row: row({ transaction_id: 'N1', amount_minor: 5n, extra: { 'CUSTOM B': 'y' } }) }],
        },
      ]),
    );
    expect(narrow.counts).toEqual({ distinct: 1, inserted: 0, updated: 1, unchanged: 0, rejected: 0 });
    expect(await transaction('N1')).toMatchObject({
      order_id: 'o1',
      amount_minor: '5',
      currency: 'JPY',
      extra: { 'CUSTOM A': 'x', 'CUSTOM B': 'y' },
      entry: 'part-1.csv',
      line: 7,
    });

    const again = await testDb.database.transaction((c) =>
      load(c, [
        {
          name: null,
          columns: ['amount_minor'],
          withExtra: true,
          rows: [{ line: 2, row: row({ transaction_id: 'N1', amount_minor: 5n, extra: { 'CUSTOM A': 'x' } }) }],
        },
      ]),
    );
    expect(again.counts).toEqual({ distinct: 1, inserted: 0, updated: 0, unchanged: 1, rejected: 0 });
  });

  it.skipIf(skip)(
    'an edit of a stored row by hand clears its digest, so the next load of the same content restores it',
    async () => {
      const entry: TestEntry = {
        name: null,
        columns: ['order_id', 'amount_minor', 'currency'],
        withExtra: false,
        rows: [
          { line: 2, row: row({ transaction_id: 'DG1', order_id: 'o-dg1', amount_minor: 700n, currency: 'EUR' }) },
        ],
      };
      await testDb.database.transaction((c) => load(c, [entry]));
      const digest = async () =>
        (
          await testDb.database.db
            .selectFrom('recon.transactions')
            .select('row_digest')
            .where('transaction_id', '=', 'DG1')
            .executeTakeFirstOrThrow()
        ).row_digest;
      expect(await digest()).toMatch(/^\d+$/);

      await testDb.database.db
        .updateTable('recon.transactions')
        .set({ amount_minor: '1' })
        .where('transaction_id', '=', 'DG1')
        .execute();
      expect(await digest()).toBeNull();

      const restored = await testDb.database.transaction((c) => load(c, [entry]));
      expect(restored.counts).toEqual({ distinct: 1, inserted: 0, updated: 1, unchanged: 0, rejected: 0 });
      expect(await transaction('DG1')).toMatchObject({ amount_minor: '700', file_id: restored.fileId });
      expect(await digest()).toMatch(/^\d+$/);
    },
  );

  it.skipIf(skip)(
    'merges a mostly loaded file through its delta of new and changed ids, as merging every staged row would',
    async () => {
      const count = 12_000;
      const line = (i: number, amount: bigint, orderId = `order-${i}`) => ({
        line: i + 2,
        row: row({ transaction_id: `M${i}`, order_id: orderId, amount_minor: amount, currency: 'EUR' }),
      });
      const entry = (rows: TestEntry['rows']): TestEntry => ({
        name: null,
        columns: ['order_id', 'amount_minor', 'currency'],
        withExtra: false,
        rows,
      });
      const original = Array.from({ length: count }, (_, i) => line(i, BigInt(i)));
      await testDb.database.transaction((c) => load(c, [entry(original)]));

      // Three changed amounts, two new ids, and one id twice (its last line wins), among 12,000 rows already stored.
      const again = original.map((staged, i) => ([17, 5_000, 11_999].includes(i) ? line(i, -1n) : staged));
      again.push(line(count, 1n), line(count + 1, 2n), { ...line(42, 42n, 'order-42-corrected'), line: count + 4 });
      const merged = await testDb.database.transaction(async (c) => {
        const result = await load(c, [entry(again)]);
        const { rows } = await c.query<{ delta: string | null }>(
          "SELECT to_regclass('pg_temp.recon_delta')::text AS delta",
        );
        return { ...result, delta: rows[0]!.delta };
      });
      expect(merged.delta, 'a mostly loaded file of 12,000 rows takes the delta path').not.toBeNull();
      expect(merged.counts).toEqual({
        distinct: count + 2,
        inserted: 2,
        updated: 4,
        unchanged: count - 4,
        rejected: 0,
      });
      expect(await transaction('M5000')).toMatchObject({ amount_minor: '-1', file_id: merged.fileId, line: 5002 });
      expect(await transaction(`M${count + 1}`)).toMatchObject({ amount_minor: '2', file_id: merged.fileId });
      expect(await transaction('M42')).toMatchObject({
        order_id: 'order-42-corrected',
        line: count + 4,
        file_id: merged.fileId,
      });
      const untouched = await transaction('M43');
      expect(untouched!.file_id).not.toBe(merged.fileId);
    },
  );

  it.skipIf(skip)('keeps the last of several rows of one id, across lines and zip entries', async () => {
    const entry = (name: string, lines: [number, string][]): TestEntry => ({
      name,
      columns: ['order_id'],
      withExtra: false,
      rows: lines.map(([line, orderId]) => ({ line, row: row({ transaction_id: 'D1', order_id: orderId }) })),
    });
    const result = await testDb.database.transaction((c) =>
      load(c, [
        entry('a.csv', [
          [2, 'first'],
          [9, 'second'],
          [5, 'older'],
        ]),
        entry('b.csv', [[3, 'last']]),
        entry('c.csv', []),
      ]),
    );
    expect(result.counts).toEqual({ distinct: 1, inserted: 1, updated: 0, unchanged: 0, rejected: 0 });
    expect(await transaction('D1')).toMatchObject({ order_id: 'last', entry: 'b.csv', line: 3 });
  });

  it.skipIf(skip)('keeps the last row of an id staged twice that is already stored, and of bare ids', async () => {
    const stored = (orderId: string): TestEntry => ({
      name: null,
      columns: ['order_id'],
      withExtra: false,
      rows: [{ line: 2, row: row({ transaction_id: 'E1', order_id: orderId }) }],
    });
    await testDb.database.transaction((c) => load(c, [stored('stored')]));
    const twice: TestEntry = {
      name: null,
      columns: ['order_id'],
      withExtra: false,
      rows: [
        { line: 2, row: row({ transaction_id: 'E1', order_id: 'first' }) },
        { line: 3, row: row({ transaction_id: 'E2', order_id: 'new' }) },
        { line: 4, row: row({ transaction_id: 'E1', order_id: 'second' }) },
      ],
    };
    const result = await testDb.database.transaction((c) => load(c, [twice]));
    expect(result.counts).toEqual({ distinct: 2, inserted: 1, updated: 1, unchanged: 0, rejected: 0 });
    expect(await transaction('E1')).toMatchObject({ order_id: 'second', line: 4 });

    const bareIds: TestEntry = {
      name: null,
      columns: [],
      withExtra: false,
      rows: [2, 3, 4].map((line) => ({ line, row: row({ transaction_id: line === 3 ? 'E3' : 'E4' }) })),
    };
    const bare = await testDb.database.transaction((c) => load(c, [bareIds]));
    expect(bare.counts).toEqual({ distinct: 2, inserted: 2, updated: 0, unchanged: 0, rejected: 0 });
  });

  it.skipIf(skip)(
    'finds repeated ids among false positives, and among all rows once the candidates overflow',
    async () => {
      const entry = (prefix: string): TestEntry => ({
        name: null,
        columns: ['order_id'],
        withExtra: false,
        rows: [
          ['1', 'a'],
          ['2', 'b'],
          ['1', 'c'],
          ['3', 'd'],
          ['1', 'e'],
          ['2', 'f'],
        ].map(([id, orderId], i) => ({
          line: i + 2,
          row: row({ transaction_id: `${prefix}${id}`, order_id: orderId! }),
        })),
      });
      // 32 bits for every id: nearly every id is a candidate, most of them false positives.
      const crowded = await testDb.database.transaction((c) =>
        load(c, [entry('F')], createRepeatedIdFilter({ exactIds: 0, bitsLog2: 5 })),
      );
      expect(crowded.counts).toEqual({ distinct: 3, inserted: 3, updated: 0, unchanged: 0, rejected: 0 });
      expect(await transaction('F1')).toMatchObject({ order_id: 'e', line: 6 });
      expect(await transaction('F2')).toMatchObject({ order_id: 'f', line: 7 });

      const overflowing = createRepeatedIdFilter({ maxCandidates: 1 });
      const overflowed = await testDb.database.transaction((c) => load(c, [entry('H')], overflowing));
      expect(overflowing.overflowed).toBe(true);
      expect(overflowed.counts).toEqual({ distinct: 3, inserted: 3, updated: 0, unchanged: 0, rejected: 0 });
      expect(await transaction('H1')).toMatchObject({ order_id: 'e', line: 6 });
    },
  );

  it.skipIf(skip)('gives entries with other columns their own statement, in entry order', async () => {
    const result = await testDb.database.transaction((c) =>
      load(c, [
        {
          name: 'wide.csv',
          columns: ['order_id', 'currency'],
          withExtra: false,
          rows: [{ line: 2, row: row({ transaction_id: 'G1', order_id: 'o', currency: 'EUR' }) }],
        },
        {
          name: 'narrow.csv',
          columns: ['currency'],
          withExtra: false,
          rows: [{ line: 2, row: row({ transaction_id: 'G1', currency: 'USD' }) }],
        },
      ]),
    );
    expect(result.counts).toEqual({ distinct: 2, inserted: 1, updated: 1, unchanged: 0, rejected: 0 });
    expect(await transaction('G1')).toMatchObject({ order_id: 'o', currency: 'USD', entry: 'narrow.csv' });
  });

  it.skipIf(skip)('stores rejected rows with their raw text and reason, apart from the transactions', async () => {
    const { fileId } = await testDb.database.transaction((c) =>
      load(c, [
        {
          name: 'r.csv',
          columns: ['exec_code'],
          withExtra: false,
          rows: [
            { line: 2, row: row({ transaction_id: 'R1', exec_code: '0000' }) },
            { line: 3, raw: 'R2;"a;b";x\ty\\z', reason: 'EXECCODE: "x" is not 1-4 digits' },
            { line: 5, raw: 'nul\u0000here', reason: 'column count' },
          ],
        },
      ]),
    );
    const { rows } = await testDb.database.transaction((c) =>
      c.query('SELECT entry, line, raw, reason FROM recon.rejected_rows WHERE file_id = $1 ORDER BY line', [fileId]),
    );
    expect(rows).toEqual([
      { entry: 'r.csv', line: 3, raw: 'R2;"a;b";x\ty\\z', reason: 'EXECCODE: "x" is not 1-4 digits' },
      { entry: 'r.csv', line: 5, raw: 'nul\uFFFDhere', reason: 'column count' },
    ]);
    expect(await transaction('R2')).toBeUndefined();
  });

  it.skipIf(skip)('round-trips any text through COPY', async () => {
    const texts = fc.sample(
      fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\0')),
      300,
    );
    texts.push('\\N', '\\.', '\\', '\r\n', '\t');
    const entry: TestEntry = {
      name: null,
      columns: ['client_address'],
      withExtra: true,
      rows: texts.map((text, i) => ({
        line: i + 2,
        row: row({ transaction_id: `P${i}`, client_address: text, extra: { [text]: text } }),
      })),
    };
    await testDb.database.transaction((c) => load(c, [entry]));
    const { rows } = await testDb.database.transaction((c) =>
      c.query<{ line: number; client_address: string; extra: Record<string, string> }>(
        "SELECT line, client_address, extra FROM recon.transactions WHERE transaction_id LIKE 'P%' ORDER BY line",
      ),
    );
    expect(rows.map((r) => r.client_address)).toEqual(texts);
    expect(rows.map((r) => r.extra)).toEqual(texts.map((text) => ({ [text]: text })));
  });
});
