import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import {
  BACKENDS,
  createTestDatabase,
  createTestDatabaseBefore,
  hasPostgres,
  type TestDatabase,
} from '../support/test-database.ts';
import { seedReporting } from './reporting-seed.ts';

/**
 * reporting.exceptions reads each order's columns through the order's key and reporting.reconciliation reads the
 * explanation through the verdict's key and the reason from its stored column, so that a question ordered on money at
 * risk touches only the rows it returns. What they return is what a join and the stored explanation give.
 */
const ORDER_COLUMNS_BY_JOIN = `
  SELECT e.order_id,
    e.order_created_at IS NOT DISTINCT FROM o.created_at AS created_at,
    e.order_status IS NOT DISTINCT FROM o.status AS status,
    e.payment_method IS NOT DISTINCT FROM o.payment_method AS payment_method,
    e.order_amount_minor IS NOT DISTINCT FROM o.amount_minor AS amount_minor,
    e.order_amount IS NOT DISTINCT FROM recon.minor_to_unit(o.amount_minor, o.currency) AS amount,
    e.order_age_days IS NOT DISTINCT FROM floor(extract(epoch FROM now() - o.created_at) / 86400)::integer AS age,
    o.order_id IS NOT NULL AS has_order
  FROM reporting.exceptions e LEFT JOIN recon.orders o ON o.order_id = e.order_id
  ORDER BY e.order_id`;

/** Every current verdict: its reason and explanation against the stored explanation, and the sentence of a match. */
const REASONS_AGAINST_STORED = `
  SELECT c.order_id, c.status,
    c.reason IS NOT DISTINCT FROM coalesce(v.explanation ->> 'reason', c.explanation ->> 'reason') AS reason,
    c.reason IS NOT DISTINCT FROM c.explanation ->> 'reason' AS reason_in_explanation,
    v.explanation IS NULL
      OR c.explanation = v.explanation || jsonb_build_object('transactions', c.explanation -> 'transactions') AS explanation,
    c.explanation ? 'transactions' AS has_transactions,
    v.reason IS NOT DISTINCT FROM v.explanation ->> 'reason' AS stored_reason
  FROM reporting.reconciliation c JOIN recon.verdicts v ON v.order_id = c.order_id
  ORDER BY c.order_id`;

async function rows<T>(database: Database, text: string): Promise<T[]> {
  return database.transaction(async (c) => (await c.query<T>(text)).rows);
}

describe.each(BACKENDS)('the exceptions read by key on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await seedReporting(testDb.database);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)("give each exception its order's columns as a join does, null for an unknown ORDERID", async () => {
    const found = await rows<Record<string, unknown>>(testDb.database, ORDER_COLUMNS_BY_JOIN);
    expect(found.length).toBeGreaterThan(1);
    expect(found.some((row) => row.has_order === true)).toBe(true);
    expect(found.some((row) => row.has_order === false)).toBe(true);
    for (const row of found)
      expect(row).toEqual({
        order_id: row.order_id,
        created_at: true,
        status: true,
        payment_method: true,
        amount_minor: true,
        amount: true,
        age: true,
        has_order: row.has_order,
      });
  });

  it.skipIf(skip)('give every verdict the reason and explanation it stored, and a match its sentence', async () => {
    const found = await rows<Record<string, unknown>>(testDb.database, REASONS_AGAINST_STORED);
    expect(new Set(found.map((row) => row.status))).toContain('matched');
    expect(found.filter((row) => row.status !== 'matched').length).toBeGreaterThan(0);
    for (const row of found)
      expect(row).toEqual({
        order_id: row.order_id,
        status: row.status,
        reason: true,
        reason_in_explanation: true,
        explanation: true,
        has_transactions: true,
        stored_reason: true,
      });
  });

  it.skipIf(skip)('keep the stored reason with its explanation, and refuse it written', async () => {
    const [verdict] = await rows<{ order_id: string }>(
      testDb.database,
      "SELECT order_id FROM recon.verdicts WHERE status <> 'matched' ORDER BY order_id LIMIT 1",
    );
    const db = testDb.database.db;
    await sql`UPDATE recon.verdicts SET explanation = jsonb_set(explanation, '{reason}', '"rewritten"')
      WHERE order_id = ${verdict!.order_id}`.execute(db);
    const [after] = await rows<{ reason: string }>(
      testDb.database,
      `SELECT reason FROM reporting.exceptions WHERE order_id = '${verdict!.order_id}'`,
    );
    expect(after!.reason).toBe('rewritten');
    await expect(
      sql`UPDATE recon.verdicts SET reason = 'forged' WHERE order_id = ${verdict!.order_id}`.execute(db),
    ).rejects.toThrow(/DEFAULT/);
  });
});

describe.each(BACKENDS)('migration 0040 over verdicts stored before it on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabaseBefore(backend, '0040_verdict_reason.sql');
    await testDb.database.transaction((c) =>
      c.exec(`
        INSERT INTO recon.reconciliation_runs (run_id, as_of, scope, kind, description, tolerance_minor, grace_hours,
          started_at, finished_at) OVERRIDING SYSTEM VALUE
        VALUES (1, '2026-11-02', '{"kind": "all"}', 'manual', 'all orders and unknown ORDERIDs', 0, 24,
          '2026-11-02', '2026-11-02');
        INSERT INTO recon.verdicts (run_id, order_id, known_order, status, lifecycle, first_seen_run_id, first_seen_at,
          expected_minor, settled_minor, delta_minor, currency, transaction_ids, explanation, at_risk_minor)
        VALUES
          (1, 'A', true, 'missing_at_provider', 'new', 1, '2026-11-02', 100, 0, -100, 'EUR', '{}',
            '{"rule": "missing_at_provider", "reason": "paid 1.00 EUR, nothing at the service"}', 100),
          (1, 'B', true, 'amount_mismatch', 'new', 1, '2026-11-02', 100, 90, -10, 'EUR', '{}', '{"rule": "amount_mismatch"}', 10),
          (1, 'C', true, 'matched', NULL, NULL, NULL, 100, 100, 0, 'EUR', '{}', NULL, 0);
      `),
    );
    await migrate(testDb.database);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)('stores the reason of each verdict already there, and the views read it', async () => {
    expect(await rows(testDb.database, 'SELECT order_id, reason FROM recon.verdicts ORDER BY order_id')).toEqual([
      { order_id: 'A', reason: 'paid 1.00 EUR, nothing at the service' },
      { order_id: 'B', reason: null },
      { order_id: 'C', reason: null },
    ]);
    expect(
      await rows(testDb.database, 'SELECT order_id, reason FROM reporting.reconciliation ORDER BY order_id'),
    ).toEqual([
      { order_id: 'A', reason: 'paid 1.00 EUR, nothing at the service' },
      { order_id: 'B', reason: null },
      { order_id: 'C', reason: 'settled 1.00 EUR equals the expected 1.00 EUR' },
    ]);
  });
});
