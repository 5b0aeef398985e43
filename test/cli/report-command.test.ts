import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { ago, DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { AS_OF, SCRIPT_ID, twoRuns } from '../report/report-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { run as reportCommand } from '../../cli/commands/report.ts';
import { oneProcessPerExitCode, runReconInProcess } from './run-recon.ts';

// Each exit code's first run in this file is a process of its own (the table, the unknown zone, the missing run), on
// whichever backend runs first; the others run in this one. A process on PGlite opens its database from scratch:
// seconds of CPU for nothing the exit code depends on.
const variant = oneProcessPerExitCode();

describe('recon report --help', () => {
  it('says which run it shows without --run, as findRun picks it', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const code = await reportCommand({
      argv: ['--help'],
      env: {},
      stdout: out,
      stderr: out,
      signal: new AbortController().signal,
    });
    expect(code).toBe(0);
    const said = text.replace(/\s+/g, ' ');
    expect(said).toContain('Which run, without --run: the finished nightly run with the highest run id');
    expect(said).toContain(
      'before any nightly run has finished, the finished run over all orders (recon reconcile of all orders or of those created since a date) with the highest run id',
    );
    expect(said).toContain(
      'A backfill, a run over named orders and a run that never finished are shown only when named with --run',
    );
  });
});

describe.each(BACKENDS)('recon report on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  let latestRunId: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-report-cli-'));
    latestRunId = (await twoRuns(testDb.database, tmp)).second.runId;
    // A PGlite directory is opened by one process at a time: the CLI's, while it runs.
    await testDb.close();
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const report = (...args: string[]) => runReconInProcess(['report', ...args], testDb.env);

  it.skipIf(skip)('prints the latest run as a table by default', async () => {
    const result = await variant(['report'], testDb.env, 0);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      /^Reconciliation run 2: all orders and unknown ORDERIDs, as of 2026-11-20 12:00 UTC \(the latest run over all orders: no nightly run has finished yet\)\n/,
    );
    expect(result.stdout).toContain(
      '16 verdicts: 10 matched, 1 pending, 5 open exceptions (2 new, 3 persisting), 1 resolved in this run',
    );
    expect(result.stdout).toMatch(/KWD\s+2\s+0\s+13\.345\s+14\.345\s+1\.000\s+1\.000\n/);
  });

  it.skipIf(skip)('writes one JSON document for the run named', async () => {
    const result = await report('--format', 'json', '--run', '1');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json.run).toMatchObject({ runId: '1', suspect: false });
    expect(json.openExceptions.total).toBe(json.openExceptions.items.length);
  });

  it.skipIf(skip)("dates the report's days in RECON_REPORT_TIMEZONE, and refuses a zone it does not know", async () => {
    const result = await runReconInProcess(['report', '--format', 'json'], {
      ...testDb.env,
      RECON_REPORT_TIMEZONE: 'Pacific/Kiritimati',
    });
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    // Noon UTC is 02:00 the next day at UTC+14: the first order's day and the as_of day both move.
    expect(json.timeZone).toBe('Pacific/Kiritimati');
    expect(json.moneyMoved.window).toEqual({ from: '2026-11-11', to: '2026-11-21' });
    expect(json.verdictsPerDay[0].day).toBe('2026-11-11');

    const wrong = await variant(['report'], { ...testDb.env, RECON_REPORT_TIMEZONE: 'Mars/Olympus' }, 1);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('RECON_REPORT_TIMEZONE');
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.skipIf(skip)(
    'writes the csv to --out through a temporary file renamed into place, and prints the path',
    async () => {
      const dir = await mkdtemp(path.join(tmp, 'out-'));
      const file = path.join(dir, 'report.csv');
      await writeFile(file, 'the previous report');
      const result = await report('--format', 'csv', '--out', file);
      expect(result).toEqual({ code: 0, stdout: `${file}\n`, stderr: '' });
      expect(await readdir(dir)).toEqual(['report.csv']);
      const csv = await readFile(file, 'utf8');
      expect(csv).toMatch(/^\uFEFFrecon reconciliation report,run 2\r\n/);
      expect(csv).toContain(`\r\n${SCRIPT_ID},yes,missing_at_provider,new,`);
      expect(csv).toContain(`\r\n"'=HYPERLINK(""http://evil.test"",""x"")",yes,`);
    },
  );

  it.skipIf(skip)('writes the html page to --out', async () => {
    const file = path.join(tmp, 'report.html');
    const result = await report('--format', 'html', '--out', file);
    expect(result).toEqual({ code: 0, stdout: `${file}\n`, stderr: '' });
    const page = await readFile(file, 'utf8');
    expect(page).toMatch(/^<!DOCTYPE html>/);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain(SCRIPT_ID);
  });

  it.skipIf(skip)(
    'fails in one line, exit 2, for a run that does not exist or a folder that does not exist',
    async () => {
      expect(await variant(['report', '--run', '999'], testDb.env, 2)).toEqual({
        code: 2,
        stdout: '',
        stderr:
          `recon report: no reconciliation run 999 (the latest is ${latestRunId}): ` +
          '`recon runs` lists the nightly runs with their reconciliation run, and ' +
          '`SELECT run_id, started_at FROM reporting.runs ORDER BY run_id DESC` lists every run\n',
      });
      const missing = path.join(tmp, 'no-such-folder', 'report.html');
      const result = await report('--format', 'html', '--out', missing);
      expect(result).toEqual({
        code: 2,
        stdout: '',
        stderr: `recon report: cannot write ${missing}: folder ${path.dirname(missing)} does not exist\n`,
      });
    },
  );

  it.skipIf(skip)(
    'writes the csv with semicolons and decimal commas for --csv-locale fr or RECON_REPORT_CSV_LOCALE',
    async () => {
      const fr = await report('--format', 'csv', '--csv-locale', 'fr');
      expect(fr.code).toBe(0);
      expect(fr.stdout).toMatch(/^\uFEFFrecon reconciliation report;run 2\r\n/);
      expect(fr.stdout).toContain('\r\nKWD;2;0;13,345;14,345;1,000;1,000;0\r\n');
      const byEnv = await runReconInProcess(['report', '--format', 'csv'], {
        ...testDb.env,
        RECON_REPORT_CSV_LOCALE: 'fr',
      });
      expect(byEnv.stdout).toContain('\r\nKWD;2;0;13,345;14,345;1,000;1,000;0\r\n');
      // The setting is for the csv: the other formats read it and go on.
      expect((await runReconInProcess(['report'], { ...testDb.env, RECON_REPORT_CSV_LOCALE: 'fr' })).code).toBe(0);
      const en = await report('--format', 'csv');
      expect(en.stdout).toContain('\r\nKWD,2,0,13.345,14.345,1.000,1.000,0\r\n');
    },
  );

  it.skipIf(skip)('refuses a bad --format or --run as a usage error, exit 1', async () => {
    expect(await report('--format', 'xml')).toEqual({
      code: 1,
      stdout: '',
      stderr: "recon report: --format must be one of table, csv, json, html, not 'xml'\n",
    });
    expect(await report('--format', 'csv', '--csv-locale', 'de')).toEqual({
      code: 1,
      stdout: '',
      stderr: "recon report: --csv-locale must be one of en, fr, not 'de'\n",
    });
    expect(await report('--csv-locale', 'fr')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'recon report: --csv-locale is for --format csv, not table\n',
    });
    expect(await report('--run', 'latest')).toEqual({
      code: 1,
      stdout: '',
      stderr: "recon report: --run expects a run id (a positive whole number), not 'latest'\n",
    });
  });
});

describe.each(BACKENDS)('recon report before and after a suspect run on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await testDb.close();
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)(
    'says to run recon reconcile when there is no run, then flags the suspect run in every format',
    async () => {
      expect(await runReconInProcess(['report'], testDb.env)).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'recon report: no nightly run and no run over all orders has finished yet: run `recon nightly --wait` or `recon reconcile --all`, or name a run with --run\n',
      });

      const database = await testDb.reopen();
      await insertOrders(database, [{ id: 'S-1', amount: 1000n, status: 'paid', createdAt: ago(AS_OF, 3 * DAY) }]);
      const run = await reconcile(database, {
        scope: { kind: 'all' },
        asOf: AS_OF,
        toleranceMinor: 0n,
        graceHours: 24,
      });
      expect(run.suspect).toBe(true);
      await testDb.close();

      const table = await runReconInProcess(['report'], testDb.env);
      expect(table.code).toBe(0);
      expect(table.stdout.split('\n')[1]).toBe(`!!! SUSPECT RUN: ${run.suspectReason}`);
      for (const format of ['json', 'csv', 'html']) {
        const result = await runReconInProcess(['report', '--format', format], testDb.env);
        expect(result.code).toBe(0);
        expect(result.stderr).toBe(`recon report: run ${run.runId}: SUSPECT RUN: ${run.suspectReason}\n`);
        expect(result.stdout).toContain('SUSPECT RUN');
      }
    },
  );
});
