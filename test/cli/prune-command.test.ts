import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as prune } from '../../cli/commands/prune.ts';
import { ReconError } from '../../src/errors.ts';
import { exportFile, startDeliveredFiles, storedChunks } from '../retention/delivered-files.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { runRecon, runReconInProcess } from './run-recon.ts';

const DAY = 86_400_000;

/** stdout or stderr for a command run in this process, a terminal or not, keeping what it was given. */
function captured(isTTY = false): Writable & { isTTY?: boolean; text(): string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return Object.assign(stream, { text: () => text }, isTTY ? { isTTY: true } : {});
}
const ISO_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * `recon prune` as operators run it (a subprocess for each exit code's first run, the others in this process)
 * against a database holding one delivery ingested 120 days ago, one ingested yesterday and one that failed (a bad
 * file) 40 days ago. The dry run says what the prune then does, and changes nothing.
 */
describe.each(BACKENDS)('recon prune on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let old: string;
  let recent: string;
  let oldBytes: number;
  let failed: string;
  let failedBytes: number;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    const files = await startDeliveredFiles(testDb.database);
    try {
      old = await files.deliverAndIngest(exportFile('T-OLD'));
      const long = new Date(Date.now() - 120 * DAY);
      await files.age(old, { receivedAt: long, finishedAt: long });
      recent = await files.deliverAndIngest(exportFile('T-RECENT'));
      const yesterday = new Date(Date.now() - DAY);
      await files.age(recent, { receivedAt: yesterday, finishedAt: yesterday });
      oldBytes = (await storedChunks(testDb.database, old)).bytes;
      failed = await files.deliverAndIngest(exportFile('T-BAD').subarray(0, 20));
      const fortyDaysAgo = new Date(Date.now() - 40 * DAY);
      await files.age(failed, { receivedAt: fortyDaysAgo, finishedAt: fortyDaysAgo, failedAt: fortyDaysAgo });
      failedBytes = (await storedChunks(testDb.database, failed)).bytes;
    } finally {
      await files.close();
    }
    await testDb.close();
  });
  afterAll(async () => testDb?.drop());

  /** Reads the database between two runs of recon (PGlite takes one process at a time). */
  async function inDatabase<T>(read: (database: TestDatabase['database']) => Promise<T>): Promise<T> {
    const database = await testDb.reopen();
    try {
      return await read(database);
    } finally {
      await testDb.close();
    }
  }
  const state = () =>
    inDatabase(async (database) => ({
      chunks: [
        (await storedChunks(database, old)).chunks,
        (await storedChunks(database, recent)).chunks,
        (await storedChunks(database, failed)).chunks,
      ],
      prunes: await database.db
        .selectFrom('recon.prunes')
        .select(['started_by', 'day', 'failure', 'removed'])
        .where('finished_at', 'is not', null)
        .execute(),
    }));

  /** The --json report, its cutoffs checked and set aside: they count back from the moment recon ran. */
  const reportOf = (stdout: string) => {
    expect(stdout.endsWith('\n')).toBe(true);
    expect(stdout.trimEnd().split('\n')).toHaveLength(1);
    const report = JSON.parse(stdout) as {
      deliveries: { cutoff: string };
      failedDeliveries: { cutoff: string };
      runs: { cutoff: string };
    };
    const cutoffs = [report.deliveries.cutoff, report.failedDeliveries.cutoff, report.runs.cutoff];
    for (const cutoff of cutoffs) expect(cutoff).toMatch(ISO_INSTANT);
    const days = (cutoff: string) => Math.round((Date.now() - Date.parse(cutoff)) / DAY);
    expect(cutoffs.map(days)).toEqual([90, 30, 800]);
    return {
      ...report,
      deliveries: { ...report.deliveries, cutoff: 'checked' },
      failedDeliveries: { ...report.failedDeliveries, cutoff: 'checked' },
      runs: { ...report.runs, cutoff: 'checked' },
    };
  };

  it.skipIf(skip)('--dry-run --json: what a prune would delete, as one JSON object, and nothing changes', async () => {
    const result = await runRecon(['prune', '--dry-run', '--json'], testDb.env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(reportOf(result.stdout)).toEqual({
      dryRun: true,
      deliveries: { retentionDays: 90, cutoff: 'checked', deliveries: 1, bytes: oldBytes },
      failedDeliveries: { retentionDays: 30, cutoff: 'checked', deliveries: 1, bytes: failedBytes },
      runs: { retentionDays: 800, cutoff: 'checked', runs: 0, verdictVersions: 0, runTotals: 0, scopeOrders: 0 },
    });
    expect(await state()).toEqual({ chunks: [1, 1, 1], prunes: [] });
  });

  it.skipIf(skip)(
    '--json: deletes what the dry run said, reports the same numbers, and records the prune',
    async () => {
      const result = await runReconInProcess(['prune', '--json'], testDb.env);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const report = reportOf(result.stdout);
      expect(report).toEqual({
        dryRun: false,
        deliveries: { retentionDays: 90, cutoff: 'checked', deliveries: 1, bytes: oldBytes },
        failedDeliveries: { retentionDays: 30, cutoff: 'checked', deliveries: 1, bytes: failedBytes },
        runs: { retentionDays: 800, cutoff: 'checked', runs: 0, verdictVersions: 0, runTotals: 0, scopeOrders: 0 },
      });
      expect(await state()).toEqual({
        chunks: [0, 1, 0],
        prunes: [{ started_by: 'command', day: null, failure: null, removed: JSON.parse(result.stdout) as unknown }],
      });
    },
  );

  it.skipIf(skip)('without --json: a line per step, with its cutoff and the variable that set it', async () => {
    const result = await runReconInProcess(['prune'], {
      ...testDb.env,
      RECON_DELIVERY_RETENTION_DAYS: '1',
      RECON_FAILED_DELIVERY_RETENTION_DAYS: '7',
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^deliveries: 1 pruned \(\d+ bytes freed\), ingested before \S+Z \(RECON_DELIVERY_RETENTION_DAYS=1\)$/,
    );
    expect(lines[1]).toMatch(
      /^failed deliveries: 0 pruned \(0 bytes freed\), failed before \S+Z \(RECON_FAILED_DELIVERY_RETENTION_DAYS=7\)$/,
    );
    expect(lines[2]).toMatch(
      /^runs: 0 removed \(0 verdict versions, 0 run totals, 0 scope orders\), older than \S+Z \(RECON_RUN_RETENTION_DAYS=800\)$/,
    );
    expect((await state()).chunks).toEqual([0, 0, 0]);
  });

  it.skipIf(skip)(
    'a bad retention is a configuration error in one line, exit 1, before anything is opened',
    async () => {
      expect(await runRecon(['prune'], { ...testDb.env, RECON_RUN_RETENTION_DAYS: '0' })).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'recon prune: invalid environment variable RECON_RUN_RETENTION_DAYS: expected a whole number of days from 1 to 36500\n',
      });
      expect(
        await runReconInProcess(['prune'], { ...testDb.env, RECON_FAILED_DELIVERY_RETENTION_DAYS: '1e3' }),
      ).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'recon prune: invalid environment variable RECON_FAILED_DELIVERY_RETENTION_DAYS: expected a whole number of days from 1 to 36500\n',
      });
      expect((await runReconInProcess(['prune', '--dry'], testDb.env)).code).toBe(1);
    },
  );

  it.skipIf(skip)(
    'on a terminal, its progress on stderr, erased before the report; interrupted, one line and exit 2',
    async () => {
      await inDatabase(async (database) => {
        const files = await startDeliveredFiles(database);
        try {
          const id = await files.deliverAndIngest(exportFile('T-TTY'));
          const long = new Date(Date.now() - 120 * DAY);
          await files.age(id, { receivedAt: long, finishedAt: long });
        } finally {
          await files.close();
        }
      });
      const stdout = captured();
      const stderr = captured(true);
      const code = await prune({ argv: [], env: testDb.env, stdout, stderr, signal: new AbortController().signal });
      expect(code).toBe(0);
      // Each line drawn over the one before (\r, then erase to the end: ESC [K), and erased at the end.
      const drawn = stderr.text().replaceAll('\r', '<cr>').replaceAll('\x1b[K', '<erase>');
      expect(drawn).toMatch(
        /^<cr>pruning delivered bytes: \d+ deliver(?:y|ies), \d+ bytes<erase><cr>removing runs older than \S+Z<erase><cr><erase>$/,
      );
      expect(stdout.text()).toMatch(/^deliveries: [1-9]\d* pruned /);

      const stopping = new AbortController();
      stopping.abort(new ReconError('INTERRUPTED', 'interrupted by SIGINT'));
      const interrupted = { stdout: captured(), stderr: captured() };
      expect(await prune({ argv: [], env: testDb.env, ...interrupted, signal: stopping.signal })).toBe(2);
      expect(interrupted.stdout.text()).toBe('');
      expect(interrupted.stderr.text()).toBe(
        'recon prune: interrupted by SIGINT: the bytes of 0 deliveries and of 0 failed deliveries were pruned before it stopped, and stay so\n',
      );
    },
  );
});
