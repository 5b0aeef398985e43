import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../src/reconcile/reconcile.ts';
import { loadVerdictWarnings } from '../../src/report/warnings-query.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { INSTALMENT, morningRun } from './morning-scenario.ts';

const MISROUTED = `payment T-W1 on account ${INSTALMENT}, which does not serve wallet`;
const SEVERAL = 'succeeded transactions in several currencies: settled adds them up';

/**
 * The warnings of verdicts listed fast, whatever their status: reporting.warnings for the current verdicts, and the
 * report's for a run, both through the verdicts that carry warnings alone. On both backends.
 */
describe.each(BACKENDS)('warnings on verdicts on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let dir: string;
  let run: RunSummary;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-warnings-'));
    run = await morningRun(testDb.database, dir);
  });
  afterAll(async () => {
    await testDb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)(
    'lists every open warning in reporting.warnings, a matched order paid on the wrong account among them',
    async () => {
      const { rows } = await sql<Record<string, unknown>>`SELECT order_id, known_order, status, position, warning,
        identifier, currency, run_id::text AS run_id FROM reporting.warnings`.execute(testDb.database.db);
      expect(rows.map((row) => ({ ...row, currency: (row.currency as string | null)?.trim() ?? null }))).toEqual([
        {
          order_id: 'U-1',
          known_order: false,
          status: 'unknown_order',
          position: 1,
          warning: SEVERAL,
          identifier: null,
          currency: 'EUR',
          run_id: run.runId,
        },
        {
          order_id: 'W-1',
          known_order: true,
          status: 'matched',
          position: 1,
          warning: MISROUTED,
          identifier: INSTALMENT,
          currency: 'EUR',
          run_id: run.runId,
        },
      ]);
    },
  );

  it.skipIf(skip)("counts the run's warnings and lists the first, bounded", async () => {
    const all = await loadVerdictWarnings(testDb.database.db, run.runId, 100);
    expect(all).toEqual({
      verdicts: 2,
      warnings: 2,
      listed: [
        { orderId: 'U-1', status: 'unknown_order', currency: 'EUR', identifier: null, warning: SEVERAL },
        { orderId: 'W-1', status: 'matched', currency: 'EUR', identifier: INSTALMENT, warning: MISROUTED },
      ],
    });
    const one = await loadVerdictWarnings(testDb.database.db, run.runId, 1);
    expect(one).toMatchObject({ verdicts: 2, warnings: 2 });
    expect(one.listed.map((warning) => warning.orderId)).toEqual(['U-1']);
  });

  it.skipIf(skip)('reads the verdicts with warnings through their own index, not every verdict', async () => {
    const plan = await testDb.database.transaction(async (c) => {
      // A few rows make a sequential scan the cheaper plan: forbidding it shows whether the index can serve.
      await c.query('SET LOCAL enable_seqscan = off');
      const { rows } = await c.query<{ 'QUERY PLAN': string }>('EXPLAIN SELECT * FROM reporting.warnings');
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('verdicts_warnings_idx');
    expect(plan).not.toMatch(/Seq Scan on verdicts /);
  });
});
