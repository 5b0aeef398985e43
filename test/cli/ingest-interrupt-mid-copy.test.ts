import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { packageRoot } from '../../src/package-root.ts';
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
        JOIN pg_stat_activity a USING (pid) WHERE a.application_name = ${applicationName} AND p.command = 'COPY FROM'`.execute(
      testDb.database.db,
    );
    return rows.length > 0 ? Number(rows[0]!.tuples) : undefined;
  }

  it.each(['SIGINT', 'SIGTERM'] as const)('%s: the file rolls back, one line on stderr, exit 2', async (signal) => {
    const applicationName = `recon-mid-copy-${signal}`;
    const recon = startRecon(['ingest', file], {
      ...testDb.env,
      DATABASE_URL: withApplicationName(testDb.env.DATABASE_URL!, applicationName),
    });
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
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `recon ingest: interrupted by ${signal}: nothing of ${file} was committed\n`,
    });
    const { db } = testDb.database;
    expect(await db.selectFrom('recon.files').select('file_id').execute()).toEqual([]);
    expect(await db.selectFrom('recon.transactions').select('transaction_id').limit(1).execute()).toEqual([]);
    expect(await db.selectFrom('recon.rejected_rows').select('rejected_row_id').limit(1).execute()).toEqual([]);
  });
});

/**
 * On PGlite the database lives inside recon's process, so the test reads recon's own account of where it is: the
 * progress bar, which recon draws only on a terminal, so recon runs under script(1) with stderr on a pty (stdout to
 * a file). A bar in its reading phase with rows counted means the file's rows are flowing into the connection's COPY
 * stream; the process is stopped there and the signal sent, and no "merging" bar may follow. PGlite has no COPY FROM
 * STDIN: copyFrom gathers the stream into batches of 16 MB, each one COPY statement; this file is smaller than a
 * batch, so the signal lands while its one batch is gathered, which is where a load on PGlite spends its reading time.
 */
const PGLITE_ROWS = 150_000;

describe('recon ingest interrupted mid-COPY on pglite', () => {
  let testDb: TestDatabase;
  let tmp: string;
  let file: string;
  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    await testDb.close();
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-mid-copy-'));
    file = path.join(tmp, 'large.csv');
    await writeFile(file, exportCsv(PGLITE_ROWS));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** recon ingest FILE with stderr on a pseudo-terminal: its pid, the terminal's output so far, and its end. */
  function startOnTerminal(stdoutFile: string) {
    const env = { ...process.env };
    for (const name of Object.keys(env)) if (name === 'DATABASE_URL' || name.startsWith('RECON_')) delete env[name];
    const command = `exec '${process.execPath}' cli/main.ts ingest '${file}' > '${stdoutFile}'`;
    const script = spawn('script', ['--quiet', '--return', '--flush', '--command', command, '/dev/null'], {
      cwd: packageRoot(),
      env: { ...env, SHELL: '/bin/sh', RECON_DATA_DIR: testDb.env.RECON_DATA_DIR },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let terminal = '';
    script.stdout.setEncoding('utf8').on('data', (chunk: string) => (terminal += chunk));
    const done = new Promise<number | null>((resolve, reject) => {
      script.on('error', reject);
      script.on('close', resolve);
    });
    // The shell execs recon: script's one child is recon itself.
    const pid = async () => {
      const children = await readFile(`/proc/${script.pid}/task/${script.pid}/children`, 'utf8').catch(() => '');
      return Number(children.trim().split(' ')[0]) || undefined;
    };
    // script(1) stops itself when its child stops and waits to be continued: both are, together. Continued before it
    // has stopped itself, it would stop afterwards, for good.
    const stoppedWith = () => processState(script.pid!);
    const resume = (reconPid: number) => {
      process.kill(reconPid, 'SIGCONT');
      script.kill('SIGCONT');
    };
    return { pid, stoppedWith, resume, terminal: () => terminal, done };
  }

  const processState = async (pid: number) => (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '')[0];
  const rowsRead = (terminal: string) =>
    [...terminal.matchAll(/\] +\d+% [\d.]+\/[\d.]+ MB +(\d+) rows/g)].map((match) => Number(match[1]));

  it.each(['SIGINT', 'SIGTERM'] as const)('%s: the file rolls back, one line on stderr, exit 2', async (signal) => {
    const stdoutFile = path.join(tmp, `${signal}.out`);
    const recon = startOnTerminal(stdoutFile);
    const pid = await waitUntil('recon started under script', recon.pid);
    await waitUntil('rows of the file flowing into COPY', () => rowsRead(recon.terminal()).some((rows) => rows > 0));
    process.kill(pid, 'SIGSTOP');
    try {
      await waitUntil('recon stopped', async () => (await processState(pid)) === 'T');
      await waitUntil('script stopped with it', async () => (await recon.stoppedWith()) === 'T');
      expect(recon.terminal()).not.toContain('merging');
      expect(Math.max(...rowsRead(recon.terminal()))).toBeLessThan(PGLITE_ROWS);
      process.kill(pid, signal);
    } finally {
      recon.resume(pid);
    }
    expect(await recon.done).toBe(2);
    const terminal = recon.terminal();
    expect(terminal).not.toContain('merging');
    // One line: the bar erased, then the message (the terminal turns \n into \r\n).
    expect(terminal.split('\r\n')).toHaveLength(2);
    expect(
      terminal.endsWith(`\r\x1b[Krecon ingest: interrupted by ${signal}: nothing of ${file} was committed\r\n`),
    ).toBe(true);
    expect(await readFile(stdoutFile, 'utf8')).toBe('');

    const database = await testDb.reopen();
    try {
      expect(await database.db.selectFrom('recon.files').select('file_id').execute()).toEqual([]);
      expect(await database.db.selectFrom('recon.transactions').select('transaction_id').limit(1).execute()).toEqual(
        [],
      );
      expect(await database.db.selectFrom('recon.rejected_rows').select('rejected_row_id').limit(1).execute()).toEqual(
        [],
      );
    } finally {
      await testDb.close();
    }
  });
});
