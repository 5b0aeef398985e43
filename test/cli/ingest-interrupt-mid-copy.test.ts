import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withApplicationName } from '../support/held-transaction.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { startRecon } from './run-recon.ts';

/**
 * SIGINT or SIGTERM while a file's rows stream into COPY (not between files, not at the merge): the file rolls back
 * whole. Caught there without timing: the test waits until pg_stat_progress_copy shows the COPY of recon's session
 * (its application_name) has taken some rows and not all, stops the process (SIGSTOP: the COPY cannot end while its
 * client is frozen), checks the COPY is still part-way, sends the signal and lets the process go on.
 */
const ROWS = 200_000;

function exportCsv(count: number): string {
  const lines = ['TRANSACTIONID;DATE;AMOUNT;CURRENCY;EXECCODE'];
  for (let n = 1; n <= count; n++) lines.push(`MC${n};2024-05-01 12:00:00;${n}.05;EUR;0`);
  return lines.join('\n') + '\n';
}

describe.skipIf(!hasPostgres)('recon ingest interrupted mid-COPY on postgres', () => {
  let testDb: TestDatabase;
  let tmp: string;
  let file: string;
  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-mid-copy-'));
    file = path.join(tmp, 'large.csv');
    await writeFile(file, exportCsv(ROWS));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** Rows the COPY of `applicationName`'s session has taken so far, or undefined when it runs no COPY. */
  async function copiedRows(applicationName: string): Promise<number | undefined> {
    const { rows } = await sql<{ tuples: string }>`SELECT p.tuples_processed AS tuples FROM pg_stat_progress_copy p
        JOIN pg_stat_activity a USING (pid) WHERE a.application_name = ${applicationName} AND p.command = 'COPY FROM'`.execute(testDb.database.db);
    return rows.length > 0 ? Number(rows[0]!.tuples) : undefined;
  }

  it.each(['SIGINT', 'SIGTERM'] as const)('%s: the file rolls back, one line on stderr, exit 2', async (signal) => {
    const applicationName = `recon-mid-copy-${signal}`;
    const recon = startRecon(['ingest', file], { ...testDb.env, DATABASE_URL: withApplicationName(testDb.env.DATABASE_URL!, applicationName) });
    await waitUntil('the COPY of the file under way', async () => ((await copiedRows(applicationName)) ?? 0) > 0);
    recon.child.kill('SIGSTOP');
    try {
      const copied = await copiedRows(applicationName);
      expect(copied).toBeGreaterThan(0);
      expect(copied).toBeLessThan(ROWS);
      recon.child.kill(signal);
    } finally {
      recon.child.kill('SIGCONT');
    }
    const result = await recon.done;
    expect(result).toEqual({ code: 2, stdout: '', stderr: `recon ingest: interrupted by ${signal}: nothing of ${file} was committed\n` });
    const { db } = testDb.database;
    expect(await db.selectFrom('recon.files').select('file_id').execute()).toEqual([]);
    expect(await db.selectFrom('recon.transactions').select('transaction_id').limit(1).execute()).toEqual([]);
    expect(await db.selectFrom('recon.rejected_rows').select('rejected_row_id').limit(1).execute()).toEqual([]);
  });
});
