import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { BIG, readView, REPORTING_VIEWS, seedReporting, utcText, type ReportingSeed } from './reporting-seed.ts';

describe.each(BACKENDS)('reporting views on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let seed: ReportingSeed;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    seed = await seedReporting(testDb.database);
  });
  afterAll(async () => testDb?.drop());

  const read = (view: string, orderBy = '') => testDb.database.transaction((c) => readView(c, view, orderBy));
  const explanationOf = (status: string) => ({ rule: status, transactions: [], warnings: [] });

  it.skipIf(skip)('holds views only, each of them and each of their columns commented', async () => {
    const { rows: relations } = await testDb.database.transaction((c) =>
      c.query<{ relname: string; relkind: string; comment: string | null }>(
        `SELECT c.relname, c.relkind, obj_description(c.oid, 'pg_class') AS comment
         FROM pg_class c WHERE c.relnamespace = 'reporting'::regnamespace ORDER BY c.relname`,
      ),
    );
    expect(relations.map((r) => r.relname)).toEqual([...REPORTING_VIEWS]);
    for (const relation of relations) {
      expect(relation.relkind, relation.relname).toBe('v');
      expect(relation.comment?.length ?? 0, `comment on view ${relation.relname}`).toBeGreaterThan(20);
    }

    const { rows: columns } = await testDb.database.transaction((c) =>
      c.query<{ relname: string; attname: string; type: string; comment: string | null }>(
        `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type, col_description(c.oid, a.attnum) AS comment
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         WHERE c.relnamespace = 'reporting'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped`,
      ),
    );
    expect(new Set(columns.map((c) => c.relname))).toEqual(new Set(REPORTING_VIEWS));
    for (const column of columns) {
      const name = `${column.relname}.${column.attname}`;
      expect(column.comment?.length ?? 0, `comment on ${name}`).toBeGreaterThan(5);
      // Units are part of the meaning: money says it is minor units, an instant says how it is stored.
      if (column.attname.endsWith('_minor')) expect(column.comment, name).toContain('minor units of currency');
      // The same amount in the currency's unit sits beside it, under the name without the suffix.
      if (column.type === 'numeric') expect(column.comment, name).toContain("in the currency's unit");
      if (column.type === 'numeric') expect(column.comment, name).not.toContain('minor units of currency');
      if (column.type === 'timestamp with time zone') expect(column.comment, name).toContain('timestamptz');
      if (column.type === 'jsonb' && column.attname === 'explanation')
        expect(column.comment, name).toContain('minor units');
    }
    // Every amount in minor units has its decimal companion, but a run's tolerance: it has no currency of its own.
    const typeOf = new Map(columns.map((c) => [`${c.relname}.${c.attname}`, c.type]));
    const companions = columns
      .filter((c) => c.attname.endsWith('_minor') && `${c.relname}.${c.attname}` !== 'runs.tolerance_minor')
      .map((c) => `${c.relname}.${c.attname.slice(0, -'_minor'.length)}`);
    expect(companions.map((name) => [name, typeOf.get(name)])).toEqual(companions.map((name) => [name, 'numeric']));
  });

  it.skipIf(skip)(
    'reporting.transactions: every transaction with its file, line and whether it succeeded',
    async () => {
      const common = {
        schedule_index: null,
        schedule_count: null,
        retry_index: null,
        retry_count: null,
        card_type: null,
        card_country: null,
        fees_minor: null,
        source_entry: null,
        fees: null,
        identifier: 'merchant',
        account_group: 'shop',
      };
      const fileA = { source_file: 'exports/2026-03-02.csv', source_file_id: seed.fileA };
      const fileB = { source_file: 'exports/2026-03-03.zip', source_entry: 'export.csv', source_file_id: seed.fileB };
      expect(await read('transactions', 'transaction_id')).toEqual([
        {
          ...common,
          ...fileA,
          transaction_id: 'T1',
          order_id: 'O1',
          operation_type: 'payment',
          occurred_at: '2026-03-01 23:35:00+00',
          amount_minor: '1000',
          currency: 'EUR',
          exec_code: '0000',
          succeeded: true,
          schedule_index: 1,
          schedule_count: 3,
          card_type: 'CB',
          card_country: 'FR',
          fees_minor: '25',
          source_line: 2,
          amount: '10.00',
          fees: '0.25',
        },
        {
          ...common,
          ...fileB,
          transaction_id: 'T2',
          order_id: 'O4',
          operation_type: 'payment',
          occurred_at: '2026-03-01 12:05:00+00',
          amount_minor: BIG.toString(),
          currency: 'EUR',
          exec_code: '0000',
          succeeded: true,
          source_line: 3,
          amount: '90071992547409.93',
        },
        {
          ...common,
          ...fileB,
          transaction_id: 'T3',
          order_id: 'O2',
          operation_type: 'authorization',
          occurred_at: '2026-03-02 00:15:00+00',
          amount_minor: '3000',
          currency: 'EUR',
          exec_code: '0002',
          succeeded: false,
          retry_index: 1,
          retry_count: 2,
          source_line: 4,
          amount: '30.00',
        },
        {
          ...common,
          ...fileA,
          transaction_id: 'T4',
          order_id: 'UNK-9',
          operation_type: 'payment',
          occurred_at: '2026-03-01 08:00:00+00',
          amount_minor: '700',
          currency: 'EUR',
          exec_code: '0000',
          succeeded: true,
          source_line: 3,
          amount: '7.00',
        },
        // Nothing but an id: not succeeded (never null), which keeps `WHERE NOT succeeded` honest.
        {
          ...common,
          ...fileA,
          transaction_id: 'T5',
          order_id: null,
          operation_type: null,
          occurred_at: null,
          amount_minor: null,
          currency: null,
          exec_code: null,
          succeeded: false,
          source_line: 4,
          amount: null,
        },
        {
          ...common,
          ...fileB,
          transaction_id: 'T6',
          order_id: 'UNK-0',
          operation_type: 'payment',
          occurred_at: '2026-03-02 09:00:00+00',
          amount_minor: '400',
          currency: 'EUR',
          exec_code: '0000',
          succeeded: true,
          source_line: 5,
          amount: '4.00',
        },
      ]);
    },
  );

  it.skipIf(skip)('reporting.orders: the orders as imported, with the source and name of their import', async () => {
    const fromFile = { import_id: seed.importFile, import_source: 'file', import_name: 'orders/march.csv' };
    const fromDb = {
      import_id: seed.importDb,
      import_source: 'database',
      import_name: 'shop-db.internal/shop',
      line: null,
    };
    const order = {
      currency: 'EUR',
      refunded_minor: '0',
      payment_method: 'wallet',
      updated_at: '2026-03-02 05:00:01+00',
      refunded: '0.00',
    };
    expect(await read('orders', 'order_id')).toEqual([
      {
        ...order,
        ...fromFile,
        order_id: 'O1',
        amount_minor: '1250',
        status: 'paid',
        payment_method: 'instalment',
        created_at: '2026-03-01 23:30:00+00',
        line: 2,
        amount: '12.50',
      },
      {
        ...order,
        ...fromFile,
        order_id: 'O2',
        amount_minor: '3000',
        status: 'authorized',
        created_at: '2026-03-02 00:10:00+00',
        line: 4,
        amount: '30.00',
      },
      {
        ...order,
        ...fromDb,
        order_id: 'O3',
        amount_minor: '500',
        currency: 'JPY',
        status: 'cancelled',
        created_at: '2026-03-01 10:00:00+00',
        // No minor unit: yen are whole.
        amount: '500',
        refunded: '0',
      },
      {
        ...order,
        ...fromDb,
        order_id: 'O4',
        amount_minor: BIG.toString(),
        status: 'paid',
        payment_method: 'instalment',
        created_at: '2026-03-01 12:00:00+00',
        amount: '90071992547409.93',
      },
      {
        ...order,
        ...fromDb,
        order_id: 'O5',
        amount_minor: '100',
        status: 'paid',
        created_at: '2026-03-01 13:00:00+00',
        amount: '1.00',
      },
    ]);
  });

  it.skipIf(skip)(
    'reporting.reconciliation: the latest verdict of each order and unknown ORDERID, with its run',
    async () => {
      const run1 = { run_id: seed.run1, as_of: utcText(seed.asOf1) };
      const run2 = { run_id: seed.run2, as_of: utcText(seed.asOf2) };
      const rows = await read('reconciliation', 'order_id');
      expect(rows).toEqual([
        {
          order_id: 'O1',
          known_order: true,
          status: 'amount_mismatch',
          lifecycle: 'persisting',
          expected_minor: '1250',
          settled_minor: '1000',
          delta_minor: '-250',
          currency: 'EUR',
          expected: '12.50',
          settled: '10.00',
          delta: '-2.50',
          at_risk_minor: '250',
          at_risk: '2.50',
          reason: 'settled 10.00 EUR, 2.50 EUR less than the expected 12.50 EUR',
          warnings: '{"instalment SCHEDULE position missing: 2, 3"}',
          first_seen: utcText(seed.asOf1),
          ...run2,
          explanation: {
            rule: 'amount_mismatch',
            reason: 'settled 10.00 EUR, 2.50 EUR less than the expected 12.50 EUR',
            // Read from the ids the verdict considered, whatever the stored explanation held.
            transactions: [
              {
                transaction_id: 'T1',
                operation_type: 'payment',
                exec_code: '0000',
                amount_minor: '1000',
                currency: 'EUR',
                occurred_at: '2026-03-01T23:35:00+00:00',
                source_file: 'exports/2026-03-02.csv',
                source_entry: null,
                source_line: 2,
              },
            ],
            warnings: ['instalment SCHEDULE position missing: 2, 3'],
          },
        },
        {
          order_id: 'O2',
          known_order: true,
          status: 'pending',
          lifecycle: null,
          expected_minor: '3000',
          settled_minor: '0',
          delta_minor: '-3000',
          currency: 'EUR',
          expected: '30.00',
          settled: '0.00',
          delta: '-30.00',
          at_risk_minor: '0',
          at_risk: '0.00',
          reason: null,
          warnings: '{}',
          first_seen: null,
          ...run1,
          explanation: explanationOf('pending'),
        },
        {
          order_id: 'O3',
          known_order: true,
          status: 'matched',
          lifecycle: null,
          expected_minor: '0',
          settled_minor: '0',
          delta_minor: '0',
          currency: 'JPY',
          expected: '0',
          settled: '0',
          delta: '0',
          at_risk_minor: '0',
          at_risk: '0',
          reason: 'settled 0 JPY equals the expected 0 JPY',
          warnings: '{}',
          first_seen: null,
          ...run1,
          // A matched verdict stores no explanation: the view assembles it from what the verdict kept.
          explanation: {
            rule: 'matched',
            reason: 'settled 0 JPY equals the expected 0 JPY',
            transactions: [],
            warnings: [],
            figures: { settled: '0', expected: '0', delta: '0', tolerance: '0' },
            assembled_on_read: true,
          },
        },
        // Resolved in run 2: run 1's missing_at_provider is history, not the current state.
        {
          order_id: 'O4',
          known_order: true,
          status: 'matched',
          lifecycle: 'resolved',
          expected_minor: BIG.toString(),
          settled_minor: BIG.toString(),
          delta_minor: '0',
          currency: 'EUR',
          expected: '90071992547409.93',
          settled: '90071992547409.93',
          delta: '0.00',
          at_risk_minor: '0',
          at_risk: '0.00',
          reason: 'settled 90071992547409.93 EUR equals the expected 90071992547409.93 EUR',
          warnings: '{"abandoned at the redirect step (0002), no money moved: T9"}',
          first_seen: null,
          ...run2,
          explanation: {
            rule: 'matched',
            reason: 'settled 90071992547409.93 EUR equals the expected 90071992547409.93 EUR',
            transactions: [
              {
                transaction_id: 'T2',
                operation_type: 'payment',
                exec_code: '0000',
                amount_minor: BIG.toString(),
                currency: 'EUR',
                occurred_at: '2026-03-01T12:05:00+00:00',
                source_file: 'exports/2026-03-03.zip',
                source_entry: 'export.csv',
                source_line: 3,
              },
            ],
            warnings: ['abandoned at the redirect step (0002), no money moved: T9'],
            figures: { settled: BIG.toString(), expected: BIG.toString(), delta: '0', tolerance: '5' },
            assembled_on_read: true,
          },
        },
        {
          order_id: 'UNK-0',
          known_order: false,
          status: 'unknown_order',
          lifecycle: 'new',
          expected_minor: '0',
          settled_minor: '400',
          delta_minor: '400',
          currency: 'EUR',
          expected: '0.00',
          settled: '4.00',
          delta: '4.00',
          at_risk_minor: '400',
          at_risk: '4.00',
          reason: null,
          warnings: '{}',
          first_seen: utcText(seed.asOf2),
          ...run2,
          explanation: explanationOf('unknown_order'),
        },
        {
          order_id: 'UNK-9',
          known_order: false,
          status: 'unknown_order',
          lifecycle: 'new',
          expected_minor: '0',
          settled_minor: '700',
          delta_minor: '700',
          currency: 'EUR',
          expected: '0.00',
          settled: '7.00',
          delta: '7.00',
          at_risk_minor: '700',
          at_risk: '7.00',
          reason: null,
          warnings: '{}',
          first_seen: utcText(seed.asOf1),
          ...run1,
          explanation: explanationOf('unknown_order'),
        },
      ]);
    },
  );

  it.skipIf(skip)(
    'reporting.exceptions: the open ones, oldest first, open for whole days, with the order when known',
    async () => {
      const rows = await read('exceptions', 'first_seen, order_id');
      expect(rows.map((r) => [r.order_id, r.status, r.lifecycle, r.first_seen, r.open_days])).toEqual([
        // The seed's as_of are 10.5 and 2.5 days ago: whole days round down.
        ['O1', 'amount_mismatch', 'persisting', utcText(seed.asOf1), 10],
        ['UNK-9', 'unknown_order', 'new', utcText(seed.asOf1), 10],
        ['UNK-0', 'unknown_order', 'new', utcText(seed.asOf2), 2],
      ]);
      // The deprecated name of open_days, kept for saved queries.
      expect(rows.map((r) => r.age_days)).toEqual(rows.map((r) => r.open_days));
      expect(rows[0]).toMatchObject({
        known_order: true,
        expected_minor: '1250',
        settled_minor: '1000',
        delta_minor: '-250',
        currency: 'EUR',
        order_created_at: '2026-03-01 23:30:00+00',
        order_status: 'paid',
        payment_method: 'instalment',
        order_amount_minor: '1250',
        run_id: seed.run2,
        as_of: utcText(seed.asOf2),
        reason: 'settled 10.00 EUR, 2.50 EUR less than the expected 12.50 EUR',
        expected: '12.50',
        settled: '10.00',
        delta: '-2.50',
        order_amount: '12.50',
      });
      // Counted from the order's creation (2026-03-01 23:30Z), not from when recon first saw the exception.
      const orderAge = Math.floor((Date.now() - Date.parse('2026-03-01T23:30:00Z')) / 86_400_000);
      expect(rows[0]?.order_age_days).toBeGreaterThanOrEqual(orderAge - 1);
      expect(rows[0]?.order_age_days).toBeLessThanOrEqual(orderAge);
      expect(rows[1]).toMatchObject({
        known_order: false,
        expected_minor: '0',
        settled_minor: '700',
        delta_minor: '700',
        order_created_at: null,
        order_status: null,
        payment_method: null,
        order_amount_minor: null,
        order_amount: null,
        order_age_days: null,
        reason: null,
        settled: '7.00',
        run_id: seed.run1,
        explanation: explanationOf('unknown_order'),
      });
    },
  );

  it.skipIf(skip)(
    'reporting.daily_summary: per UTC creation day and currency, whatever the session time zone',
    async () => {
      // In New York, O1 (23:30Z) and O2 (00:10Z the next day) fall on the same local day: the summary must not.
      const rows = await testDb.database.transaction(async (c) => {
        const result = await readView(c, 'daily_summary');
        await c.query("SET LOCAL TIME ZONE 'America/New_York'");
        const { rows: local } = await c.query<{ day: string }>('SELECT day::text AS day FROM reporting.daily_summary');
        return { result, local: local.map((r) => r.day) };
      });
      const summary = [
        // O1 (exception) and O4 (matched, resolved): O5 has no verdict yet, UNK-* have no order, neither counts.
        {
          day: '2026-03-01',
          currency: 'EUR',
          orders: 2,
          matched: 1,
          pending: 0,
          exceptions: 1,
          expected_minor: (1250n + BIG).toString(),
          settled_minor: (1000n + BIG).toString(),
          expected: '90071992547422.43',
          settled: '90071992547419.93',
        },
        {
          day: '2026-03-01',
          currency: 'JPY',
          orders: 1,
          matched: 1,
          pending: 0,
          exceptions: 0,
          expected_minor: '0',
          settled_minor: '0',
          expected: '0',
          settled: '0',
        },
        {
          day: '2026-03-02',
          currency: 'EUR',
          orders: 1,
          matched: 0,
          pending: 1,
          exceptions: 0,
          expected_minor: '3000',
          settled_minor: '0',
          expected: '30.00',
          settled: '0.00',
        },
      ];
      expect(rows.result).toEqual(summary);
      expect(rows.local).toEqual(summary.map((r) => r.day));
    },
  );

  it.skipIf(skip)(
    'reporting.runs and reporting.run_totals: every run with its counts, and its bridge per currency',
    async () => {
      const rows = await read('runs');
      expect(rows).toEqual([
        {
          run_id: seed.run1,
          as_of: utcText(seed.asOf1),
          scope: { kind: 'all' },
          tolerance_minor: '0',
          grace_hours: 24,
          started_at: utcText(seed.asOf1),
          finished_at: utcText(new Date(seed.asOf1.getTime() + 2000)),
          orders_in_scope: 5,
          counts: { amount_mismatch: 1, pending: 1, matched: 1, missing_at_provider: 1, unknown_order: 1 },
          matched: 1,
          pending: 1,
          exceptions: 3,
          suspect: false,
          suspect_reason: null,
          not_found: '{}',
          kind: 'manual',
          description: 'all orders and unknown ORDERIDs',
          nightly_run_id: null,
          nightly_date: null,
          not_found_count: 0,
          verdicts_computed: null,
          verdicts_changed: null,
          history_pruned_at: null,
        },
        {
          run_id: seed.run2,
          as_of: utcText(seed.asOf2),
          scope: { kind: 'orders', count: 4 },
          tolerance_minor: '5',
          grace_hours: 24,
          started_at: utcText(seed.asOf2),
          finished_at: utcText(new Date(seed.asOf2.getTime() + 1000)),
          orders_in_scope: 3,
          counts: { amount_mismatch: 1, matched: 1, unknown_order: 1 },
          matched: 1,
          pending: 0,
          exceptions: 2,
          suspect: false,
          suspect_reason: null,
          not_found: '{NOPE}',
          kind: 'manual',
          description: '4 orders',
          nightly_run_id: null,
          nightly_date: null,
          not_found_count: 1,
          verdicts_computed: null,
          verdicts_changed: null,
          history_pruned_at: null,
        },
        {
          run_id: seed.run3,
          as_of: utcText(seed.asOf3),
          scope: { kind: 'created_since', since: '2026-04-01' },
          tolerance_minor: '0',
          grace_hours: 24,
          started_at: utcText(seed.asOf3),
          finished_at: utcText(new Date(seed.asOf3.getTime() + 1000)),
          orders_in_scope: 0,
          counts: {},
          matched: 0,
          pending: 0,
          exceptions: 0,
          suspect: true,
          suspect_reason: 'orders expect money but no transaction at all was found',
          not_found: '{}',
          kind: 'manual',
          description: 'orders created since 2026-04-01',
          nightly_run_id: null,
          nightly_date: null,
          not_found_count: 0,
          verdicts_computed: null,
          verdicts_changed: null,
          history_pruned_at: null,
        },
        // Still running (or died): no counts yet, so no figures rather than zeros.
        {
          run_id: seed.run4,
          as_of: utcText(seed.asOf4),
          scope: { kind: 'all' },
          tolerance_minor: '0',
          grace_hours: 24,
          started_at: utcText(seed.asOf4),
          finished_at: null,
          orders_in_scope: null,
          counts: null,
          matched: null,
          pending: null,
          exceptions: null,
          suspect: false,
          suspect_reason: null,
          not_found: '{}',
          kind: 'manual',
          description: 'all orders and unknown ORDERIDs',
          nightly_run_id: null,
          nightly_date: null,
          not_found_count: 0,
          verdicts_computed: null,
          verdicts_changed: null,
          history_pruned_at: null,
        },
      ]);
      // Which orders each run judged: the named ones, or those a run over all orders or a date gave a verdict.
      const scoped = await read('run_orders', 'run_id, order_id');
      expect(scoped.filter((row) => row.run_id === seed.run2).map((row) => row.order_id)).toEqual([
        'NOPE',
        'O1',
        'O4',
        'UNK-0',
      ]);
      expect(scoped.filter((row) => row.run_id === seed.run1).map((row) => row.order_id)).toEqual([
        'O1',
        'O2',
        'O3',
        'O4',
        'UNK-9',
      ]);
      expect(await read('run_totals', 'run_id, currency')).toEqual([
        {
          run_id: seed.run1,
          currency: 'EUR',
          orders: 3,
          unknown_orders: 1,
          expected_minor: (4250n + BIG).toString(),
          settled_minor: '1700',
          expected: '90071992547452.43',
          settled: '17.00',
        },
        {
          run_id: seed.run1,
          currency: 'JPY',
          orders: 1,
          unknown_orders: 0,
          expected_minor: '0',
          settled_minor: '0',
          expected: '0',
          settled: '0',
        },
        {
          run_id: seed.run2,
          currency: 'EUR',
          orders: 2,
          unknown_orders: 1,
          expected_minor: (1250n + BIG).toString(),
          settled_minor: (1400n + BIG).toString(),
          expected: '90071992547422.43',
          settled: '90071992547423.93',
        },
      ]);
    },
  );

  it.skipIf(skip)(
    'reporting.files and reporting.rejected_rows: every file, and the rejected rows of exports and order imports',
    async () => {
      const files = await read('files', 'file_id');
      const deliveredName = `nightly 2026-03-04 batch 2 attempt 2: transactions-0304.csv.gz (delivery ${seed.deliveryD})`;
      const backfillName = 'backfill:getTransactions 2026-03-05T10:00:00Z O2';
      expect(files.map((f) => [f.file_id, f.name, f.compression, f.status, f.rows_rejected, f.error_code])).toEqual([
        [seed.fileA, 'exports/2026-03-02.csv', 'none', 'loaded', 1, null],
        [seed.fileB, 'exports/2026-03-03.zip', 'zip', 'loaded', 0, null],
        [seed.fileC, 'exports/broken.csv.gz', 'gzip', 'failed', null, 'ARCHIVE_CORRUPT'],
        [seed.fileD, deliveredName, 'gzip', 'loaded', 0, null],
        [seed.fileE, backfillName, 'none', 'loaded', 0, null],
      ]);
      const notDelivered = {
        delivery_id: null,
        nightly_run_id: null,
        nightly_run_date: null,
        batch: null,
        batch_attempt: null,
        bytes_pruned: null,
        bytes_pruned_at: null,
        asked_at: null,
        rows_outdated: null,
      };
      expect(files[2]).toEqual({
        file_id: seed.fileC,
        name: 'exports/broken.csv.gz',
        sha256: 'c'.repeat(64),
        size_bytes: '20',
        compression: 'gzip',
        received_at: '2026-03-04 06:00:00+00',
        finished_at: '2026-03-04 06:00:00+00',
        status: 'failed',
        rows_total: null,
        rows_inserted: null,
        rows_updated: null,
        rows_unchanged: null,
        rows_rejected: null,
        error_code: 'ARCHIVE_CORRUPT',
        error: 'truncated or corrupt gzip data (unexpected end of file)',
        arrival: 'ingest',
        arrived_at: '2026-03-04 06:00:00+00',
        ...notDelivered,
      });
      // A delivery arrived when the receiver stored it, before its ingest started.
      expect(files[3]).toEqual({
        file_id: seed.fileD,
        name: deliveredName,
        sha256: 'd'.repeat(64),
        size_bytes: '90',
        compression: 'gzip',
        received_at: '2026-03-04 02:31:05+00',
        finished_at: '2026-03-04 02:31:06+00',
        status: 'loaded',
        rows_total: 1,
        rows_inserted: 0,
        rows_updated: 0,
        rows_unchanged: 1,
        rows_rejected: 0,
        error_code: null,
        error: null,
        arrival: 'delivery',
        arrived_at: '2026-03-04 02:31:00+00',
        delivery_id: seed.deliveryD,
        nightly_run_id: seed.nightlyRunD,
        nightly_run_date: '2026-03-04',
        batch: 2,
        batch_attempt: 2,
        bytes_pruned: false,
        bytes_pruned_at: null,
        asked_at: null,
        rows_outdated: null,
      });
      expect(files[4]).toMatchObject({ arrival: 'backfill', arrived_at: '2026-03-05 10:00:01+00', ...notDelivered });

      const rejected = await read('rejected_rows', 'kind');
      expect(rejected.map(({ rejected_row_id: _id, ...row }) => row)).toEqual([
        {
          kind: 'export',
          file_id: seed.fileA,
          import_id: null,
          source_name: 'exports/2026-03-02.csv',
          entry: null,
          line: 5,
          raw: 'T7;O1;payment;x',
          reason: 'AMOUNT: not a decimal number',
        },
        {
          kind: 'orders',
          file_id: null,
          import_id: seed.importFile,
          source_name: 'orders/march.csv',
          entry: null,
          line: 3,
          raw: 'O9;1,5;EUR',
          reason: 'amount: not a decimal number',
        },
      ]);
    },
  );

  it.skipIf(skip)(
    'joins every transaction to its file by id: reporting.transactions.source_file_id is reporting.files.file_id',
    async () => {
      const joined = await testDb.database.transaction((c) =>
        c.query<{ transaction_id: string; source_file: string; name: string; arrival: string }>(
          `SELECT t.transaction_id, t.source_file, f.name, f.arrival
       FROM reporting.transactions t JOIN reporting.files f ON f.file_id = t.source_file_id ORDER BY t.transaction_id`,
        ),
      );
      expect(joined.rows.map((row) => row.transaction_id)).toEqual(['T1', 'T2', 'T3', 'T4', 'T5', 'T6']);
      for (const row of joined.rows) expect(row).toMatchObject({ name: row.source_file, arrival: 'ingest' });
    },
  );

  it.skipIf(skip)("reporting.verdict_history: one row per change of an order's verdict, before and after", async () => {
    const rows = await read('verdict_history', 'order_id, run_id');
    const brief = rows.map((row) => [row.order_id, row.run_id, row.change, row.status_before, row.status_after]);
    expect(brief).toEqual([
      ['O1', seed.run1, 'first', null, 'amount_mismatch'],
      ['O1', seed.run2, 'changed', 'amount_mismatch', 'amount_mismatch'],
      ['O2', seed.run1, 'first', null, 'pending'],
      ['O3', seed.run1, 'first', null, 'matched'],
      ['O4', seed.run1, 'first', null, 'missing_at_provider'],
      ['O4', seed.run2, 'changed', 'missing_at_provider', 'matched'],
      ['UNK-0', seed.run2, 'first', null, 'unknown_order'],
      ['UNK-9', seed.run1, 'first', null, 'unknown_order'],
    ]);
    expect(rows.find((row) => row.order_id === 'O4' && row.run_id === seed.run2)).toMatchObject({
      as_of: utcText(seed.asOf2),
      run_kind: 'manual',
      lifecycle_before: 'new',
      lifecycle_after: 'resolved',
      expected_before_minor: BIG.toString(),
      settled_before_minor: '0',
      settled_after_minor: BIG.toString(),
      delta_before_minor: (-BIG).toString(),
      delta_after_minor: '0',
    });
  });

  it.skipIf(skip)('migrating again changes nothing; the reader role exists on PostgreSQL only', async () => {
    expect(await migrate(testDb.database)).toEqual([]);
    const { rows } = await testDb.database.transaction((c) =>
      c.query<{ name: string; reader: boolean }>(
        `SELECT name, EXISTS (SELECT FROM pg_roles WHERE rolname = 'recon_reader') AS reader
         FROM recon.schema_migrations WHERE name LIKE '000%reporting%' ORDER BY name`,
      ),
    );
    // On PGlite 0006 is recorded as applied (so the numbering stays the same) but never ran.
    expect(rows).toEqual([
      { name: '0005_reporting.sql', reader: backend === 'postgres' },
      { name: '0006_reporting_reader.sql', reader: backend === 'postgres' },
    ]);
  });
});
