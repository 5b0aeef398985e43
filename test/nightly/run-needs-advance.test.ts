import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportRequestState } from '../../src/db/schema.ts';
import { startNightlyRun } from '../../src/nightly/nightly-run.ts';
import { runNeedsAdvance } from '../../src/nightly/run-after-ingest.ts';
import { issueExportToken } from '../../src/receive/export-token.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * After an ingest, a run is advanced only when the advance has something to do: reconcile (no batch open), or ask
 * again for a batch whose latest request failed. Each case is a run of its own whose requests are written as the
 * case says, attempt after attempt for each batch.
 */
const T0 = new Date('2026-11-23T02:30:00Z');

describe.each(BACKENDS)('whether an ingest advances its run, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let day = 0;

  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  /** A run whose batch n has one request per state of `batches[n - 1]`, attempts 1, 2... in that order. */
  async function runWith(batches: ExportRequestState[][]): Promise<string> {
    const db = testDb.database.db;
    const { run } = await startNightlyRun(db, `2026-12-${String(++day).padStart(2, '0')}`, T0);
    for (const [index, states] of batches.entries()) {
      for (const [attemptIndex, state] of states.entries()) {
        const { requestId } = await issueExportToken(db, {
          callbackBaseUrl: 'http://127.0.0.1:9/',
          orderIds: [`NEEDS-${day}-${index}`],
          compression: 'gzip',
          nightlyRunId: run.nightlyRunId,
          batch: index + 1,
          attempt: attemptIndex + 1,
          expiresAt: new Date(T0.getTime() + 3_600_000),
        });
        await db.updateTable('recon.export_requests').set({ state }).where('request_id', '=', requestId).execute();
      }
    }
    return run.nightlyRunId;
  }
  const needs = async (batches: ExportRequestState[][]) => runNeedsAdvance(testDb.database.db, await runWith(batches));

  it.skipIf(skip)('not while every open batch waits on the service or on its ingest', async () => {
    expect(await needs([['ingested'], ['requested'], ['delivered'], ['timed_out', 'requested']])).toBe(false);
    // A failed attempt already asked again: its batch waits on the new request.
    expect(await needs([['failed', 'requested'], ['ingested']])).toBe(false);
  });

  it.skipIf(skip)('when an open batch has failed: it must be asked for again', async () => {
    expect(await needs([['ingested'], ['requested'], ['timed_out', 'failed']])).toBe(true);
  });

  it.skipIf(skip)('when no batch is open: the run can be reconciled', async () => {
    expect(await needs([['ingested'], ['given_up'], ['failed', 'failed', 'given_up']])).toBe(true);
    // A late export of an earlier attempt completes its batch, whatever its latest request waits for.
    expect(await needs([['ingested', 'requested']])).toBe(true);
  });
});
