import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { startRecon, type RunningRecon } from './run-recon.ts';

/** A plain export of `count` rows with ids `<prefix><n>`. */
function exportCsv(prefix: string, count: number): string {
  let text = 'TRANSACTIONID;DATE;AMOUNT;CURRENCY;EXECCODE\n';
  for (let n = 1; n <= count; n++) text += `${prefix}${n};2024-05-01 12:00:00;${n}.05;EUR;0\n`;
  return text;
}

const firstLine = (recon: RunningRecon) => new Promise<string>((resolve) => recon.onStdoutLine(resolve));

describe.each(BACKENDS)('recon ingest interrupted on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  // Each backend has its own way to make sure the signal lands mid-run: see the tests.
  const onlyOn = (wanted: typeof backend) => skip || backend !== wanted;
  let testDb: TestDatabase;
  let tmp: string;
  let files: { first: string; second: string; third: string };
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await testDb.close();
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-interrupt-'));
    files = {
      first: path.join(tmp, 'first.csv'),
      second: path.join(tmp, 'second.csv'),
      third: path.join(tmp, 'third.csv'),
    };
    await writeFile(files.first, exportCsv('F', 3));
    await writeFile(
      files.second,
      exportCsv('S', backend === 'postgres' ? 3 : 150_000) + 'LOCKED;2024-05-01 12:00:00;1.00;EUR;0\n',
    );
    await writeFile(files.third, exportCsv('T', 3));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** What is committed: the files recorded and the transaction id prefixes loaded. */
  async function committed() {
    const database = await testDb.reopen();
    try {
      return await database.transaction(async (c) => ({
        files: (
          await c.query<{ name: string; status: string }>('SELECT name, status FROM recon.files ORDER BY file_id')
        ).rows,
        prefixes: (
          await c.query<{ prefix: string; n: number }>(
            'SELECT left(transaction_id, 1) AS prefix, count(*)::int AS n FROM recon.transactions GROUP BY 1 ORDER BY 1',
          )
        ).rows,
      }));
    } finally {
      await testDb.close();
    }
  }

  it.skipIf(onlyOn('postgres'))(
    'SIGTERM while a file merges: that file rolls back, the next is not started, one line, exit 2',
    async () => {
      // A row of `second` held by an open transaction: its upsert waits there, so the signal surely lands mid-file.
      const holder = new pg.Client({ connectionString: testDb.env.DATABASE_URL });
      await holder.connect();
      try {
        const { rows } = await holder.query<{ file_id: string }>(
          "INSERT INTO recon.files (name, arrival, sha256, size_bytes, compression, status, error) VALUES ('holder', 'ingest', repeat('0', 64), 0, 'none', 'failed', 'test') RETURNING file_id",
        );
        await holder.query('BEGIN');
        await holder.query("INSERT INTO recon.transactions (transaction_id, file_id, line) VALUES ('LOCKED', $1, 1)", [
          rows[0]!.file_id,
        ]);
        const recon = startRecon(['ingest', files.first, files.second, files.third], testDb.env);
        expect(await firstLine(recon)).toMatch(/first\.csv: loaded rows=3 inserted=3/);
        while (
          (
            await holder.query(
              "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
            )
          ).rowCount === 0
        ) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        recon.child.kill('SIGTERM');
        await new Promise((resolve) => setTimeout(resolve, 100));
        await holder.query('ROLLBACK');
        const result = await recon.done;
        expect(result.code).toBe(2);
        expect(result.stderr).toBe(
          `recon ingest: interrupted by SIGTERM: nothing of ${files.second} was committed, 1 more file not started\n`,
        );
        expect(result.stdout.trimEnd().split('\n')).toHaveLength(1);
      } finally {
        await holder.end();
      }
      expect(await committed()).toEqual({
        files: [
          { name: 'holder', status: 'failed' },
          { name: files.first, status: 'loaded' },
        ],
        prefixes: [{ prefix: 'F', n: 3 }],
      });
    },
  );

  it.skipIf(onlyOn('pglite'))(
    'SIGINT during a run: what is committed is whole files only, and the rest is not started',
    async () => {
      const recon = startRecon(['ingest', files.first, files.second, files.third], testDb.env);
      expect(await firstLine(recon)).toMatch(/first\.csv: loaded rows=3 inserted=3/);
      recon.child.kill('SIGINT');
      const result = await recon.done;
      expect(result.code).toBe(2);
      // The signal lands while `second` loads (150,000 rows), or at the latest before `third` starts.
      expect(result.stderr).toMatch(
        /^recon ingest: interrupted by SIGINT: nothing of \S+(second|third)\.csv was committed(, 1 more file not started)?\n$/,
      );
      const { files: recorded, prefixes } = await committed();
      expect(recorded.every((file) => file.status === 'loaded')).toBe(true);
      expect(recorded.map((file) => file.name)).not.toContain(files.third);
      const loadedSecond = recorded.some((file) => file.name === files.second);
      expect(prefixes).toEqual([
        { prefix: 'F', n: 3 },
        ...(loadedSecond
          ? [
              { prefix: 'L', n: 1 },
              { prefix: 'S', n: 150_000 },
            ]
          : []),
      ]);
    },
  );
});
