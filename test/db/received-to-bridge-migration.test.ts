import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.ts';
import { BACKENDS, createTestDatabaseBefore, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const MIGRATION = '0034_received_to_bridge.sql';

/**
 * A run finished before migration 0034, as recon wrote it then: its verdicts (a USD order paid in EUR, an EUR order
 * paid without a CURRENCY, an unknown ORDERID paid in EUR and GBP), its bridge and its totals per account without
 * fees. The migration writes the fees and the money counted in another currency than it was paid in, so that the
 * run's money received goes down to its bridge's settled like a run's written since.
 */
describe.each(BACKENDS)('migration 0034 on a run of %s finished before it', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let runId: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabaseBefore(backend, MIGRATION);
    const db = testDb.database.db;
    const asOf = '2026-11-20T06:00:00Z';
    await sql`INSERT INTO recon.order_imports (source, name, status) VALUES ('file', 'orders.csv', 'loaded')`.execute(
      db,
    );
    await sql`INSERT INTO recon.orders (order_id, amount_minor, currency, status, refunded_minor, payment_method,
        created_at, import_id)
      SELECT id, amount, currency, 'paid', 0, 'wallet', '2026-11-18T10:00:00Z', (SELECT max(import_id) FROM recon.order_imports)
      FROM (VALUES ('X-USD', 52043, 'USD'), ('N-1', 2000, 'EUR')) AS o (id, amount, currency)`.execute(db);
    const file = await sql<{ file_id: string }>`INSERT INTO recon.files (name, arrival, sha256, size_bytes, compression,
        received_at, finished_at, status, rows_total, rows_inserted, rows_updated, rows_rejected)
      VALUES ('export.csv', 'ingest', ${'a'.repeat(64)}, 100, 'none', ${asOf}, ${asOf}, 'loaded', 4, 4, 0, 0)
      RETURNING file_id::text`.execute(db);
    const fileId = file.rows[0]!.file_id;
    await sql`INSERT INTO recon.transactions (transaction_id, order_id, operation_type, occurred_at, amount_minor,
        currency, exec_code, fees_minor, identifier, extra, file_id, line)
      SELECT id, order_id, 'payment', '2026-11-19T10:00:00Z', amount, currency, '0000', fees, 'SHOP', '{}', ${fileId}::bigint, line
      FROM (VALUES ('T-X', 'X-USD', 52043, 'EUR', 520, 2), ('T-N', 'N-1', 2000, NULL, NULL, 3),
        ('T-U1', 'U-1', 500, 'EUR', 5, 4), ('T-U2', 'U-1', 300, 'GBP', 3, 5))
        AS t (id, order_id, amount, currency, fees, line)`.execute(db);
    const run = await sql<{ run_id: string }>`INSERT INTO recon.reconciliation_runs (as_of, scope, description,
        tolerance_minor, grace_hours, started_at, finished_at, orders_in_scope, counts)
      VALUES (${asOf}, '{"kind":"all"}', 'all orders and unknown ORDERIDs', 0, 24, ${asOf}, ${asOf}, 3, '{}')
      RETURNING run_id::text`.execute(db);
    runId = run.rows[0]!.run_id;
    await sql`INSERT INTO recon.verdicts (run_id, order_id, known_order, status, lifecycle, first_seen_run_id,
        first_seen_at, expected_minor, settled_minor, delta_minor, currency, transaction_ids, at_risk_minor, explanation)
      VALUES
        (${runId}::bigint, 'X-USD', true, 'currency_mismatch', 'new', ${runId}::bigint, ${asOf}, 52043, 0, -52043, 'USD', '{T-X}', 52043, '{}'),
        (${runId}::bigint, 'N-1', true, 'matched', NULL, NULL, NULL, 2000, 2000, 0, 'EUR', '{T-N}', 0, NULL),
        (${runId}::bigint, 'U-1', false, 'unknown_order', 'new', ${runId}::bigint, ${asOf}, 0, 800, 800, 'EUR', '{T-U1,T-U2}', 800, '{}')`.execute(
      db,
    );
    await sql`INSERT INTO recon.run_totals (run_id, currency, orders, unknown_orders, expected_minor, settled_minor)
      VALUES (${runId}::bigint, 'EUR', 1, 1, 2000, 2800), (${runId}::bigint, 'USD', 1, 0, 52043, 0)`.execute(db);
    await sql`INSERT INTO recon.run_account_totals (run_id, identifier, currency, orders, transactions, paid_minor,
        refunded_minor)
      VALUES (${runId}::bigint, 'SHOP', 'EUR', 2, 2, 52543, 0), (${runId}::bigint, 'SHOP', 'GBP', 1, 1, 300, 0),
        (${runId}::bigint, 'SHOP', NULL, 1, 1, 2000, 0)`.execute(db);
    await migrate(testDb.database);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)("writes the fees beside each account's money, from the transactions", async () => {
    const { rows } = await sql<{ currency: string | null; fees: string }>`SELECT currency, fees_minor::text AS fees
      FROM reporting.run_account_totals WHERE run_id = ${runId}::bigint ORDER BY currency NULLS LAST`.execute(
      testDb.database.db,
    );
    expect(rows.map((row) => [row.currency?.trim() ?? null, row.fees])).toEqual([
      ['EUR', '525'],
      ['GBP', '3'],
      [null, '0'],
    ]);
  });

  it.skipIf(skip)("takes the run's money received down to its bridge's settled, every line adding up", async () => {
    const { rows } = await sql<{ currency: string; line: string; amount: string }>`SELECT currency, line,
        amount_minor::text AS amount FROM reporting.received_to_bridge WHERE run_id = ${runId}::bigint
      ORDER BY currency, step`.execute(testDb.database.db);
    expect(rows.map((row) => [row.currency.trim(), row.line, row.amount])).toEqual([
      ['EUR', 'received', '52543'],
      ['EUR', 'paid_for_another_currency', '-52043'],
      ['EUR', 'unknown_from_another_currency', '300'],
      ['EUR', 'without_currency', '2000'],
      ['EUR', 'settled', '2800'],
      ['GBP', 'received', '300'],
      ['GBP', 'unknown_to_another_currency', '-300'],
      ['GBP', 'settled', '0'],
      ['USD', 'settled', '0'],
    ]);
  });
});
