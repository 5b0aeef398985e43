import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { oneProcessPerExitCode, runReconInProcess, startRecon } from './run-recon.ts';

const HEADER = 'order_id;amount;currency;status;refunded_amount;payment_method;created_at';

function ordersCsv(prefix: string, count: number, tail = ''): string {
  let text = HEADER + '\n';
  for (let n = 1; n <= count; n++) text += `${prefix}${n};${n}.25;EUR;paid;;wallet;2024-05-01T12:00:00Z\n`;
  return text + tail;
}

// Each exit code's first run in this file is a process of its own, on whichever backend runs first; the others run in
// this one. A process on PGlite opens its database from scratch: seconds of CPU for nothing the exit code depends on.
const variant = oneProcessPerExitCode();

describe.each(BACKENDS)('recon import-orders on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    // A PGlite directory is opened by one process at a time: the CLI's, while it runs.
    await testDb.close();
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-orders-cli-'));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const importOrders = (...args: string[]) => runReconInProcess(['import-orders', ...args], testDb.env);
  const importOrdersExiting = (code: number, ...args: string[]) =>
    variant(['import-orders', ...args], testDb.env, code);
  async function write(name: string, text: string): Promise<string> {
    const file = path.join(tmp, name);
    await writeFile(file, text);
    return file;
  }

  it.skipIf(skip)(
    'prints a summary line per file and exits 0 when every file loads without rejected rows',
    async () => {
      const first = await write('ok-A.csv', ordersCsv('OKA', 3));
      const second = await write('ok-B.csv', ordersCsv('OKA', 2) + 'OKB1;1.00;EUR;paid;;wallet;2024-05-01T12:00:00Z\n');
      expect(await importOrdersExiting(0, first, second)).toEqual({
        code: 0,
        stdout: `${first}: loaded rows=3 inserted=3 updated=0 unchanged=0 rejected=0\n${second}: loaded rows=3 inserted=1 updated=0 unchanged=2 rejected=0\n`,
        stderr: '',
      });
    },
  );

  it.skipIf(skip)('exits 3 when rows were rejected, and prints one JSON object per file with --json', async () => {
    const file = await write('bad-rows.csv', ordersCsv('BRC', 2, 'BRC3;1,00;EUR;paid;;wallet;2024-05-01T12:00:00Z\n'));
    const result = await importOrdersExiting(3, '--json', file);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      source: 'file',
      name: file,
      status: 'loaded',
      importId: expect.any(String),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      rows: 3,
      inserted: 2,
      updated: 0,
      unchanged: 0,
      superseded: 0,
      rejected: 1,
      errorCode: null,
      error: null,
    });
  });

  it.skipIf(skip)('exits 2 when a file failed, after loading the others', async () => {
    const noColumn = await write(
      'no-created-at.csv',
      'order_id;amount;currency;status;payment_method\nX1;1.00;EUR;paid;wallet\n',
    );
    const good = await write('after-failure.csv', ordersCsv('AF', 2));
    const bad = await write('bad-after.csv', ordersCsv('BA', 1, 'BA2;x;EUR;paid;;wallet;2024-05-01T12:00:00Z\n'));
    const result = await importOrdersExiting(2, noColumn, good, bad);
    expect(result).toEqual({
      code: 2,
      stdout:
        `${noColumn}: failed: the header has no column created_at (found: "order_id, amount, currency, status, payment_method")\n` +
        `${good}: loaded rows=2 inserted=2 updated=0 unchanged=0 rejected=0\n` +
        `${bad}: loaded rows=2 inserted=1 updated=0 unchanged=0 rejected=1\n`,
      stderr: '',
    });
  });

  it.skipIf(skip).each([
    [[], /^recon import-orders: no FILE given \(see 'recon import-orders --help'\)\n$/],
    [['--timezone', 'UTC', 'x.csv'], /^recon import-orders: Unknown option '--timezone'[^\n]*\n$/],
  ])('exits 1 on a usage error: %j', async (args, stderr) => {
    expect(await variant(['import-orders', ...args], testDb.env, 1)).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(stderr),
    });
  });

  it.skipIf(skip)('exits 1 on a configuration error, naming the variable', async () => {
    const result = await variant(['import-orders', 'x.csv'], { ...testDb.env, RECON_MAX_FILE_BYTES: 'lots' }, 1);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^recon import-orders: invalid environment variable RECON_MAX_FILE_BYTES: .*\n$/);
  });

  it.skipIf(skip)('describes itself with --help', async () => {
    const result = await importOrders('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^usage: recon import-orders \[--json\] FILE\.\.\./);
  });

  it.skipIf(skip || backend !== 'pglite')(
    'SIGINT during a run: whole files only are committed, and says so in one line',
    async () => {
      const first = await write('int-first.csv', ordersCsv('INF', 3));
      const second = await write('int-second.csv', ordersCsv('INS', 150_000));
      const third = await write('int-third.csv', ordersCsv('INT', 3));
      const recon = startRecon(['import-orders', first, second, third], testDb.env);
      const firstLine = await new Promise<string>((resolve) => recon.onStdoutLine(resolve));
      expect(firstLine).toBe(`${first}: loaded rows=3 inserted=3 updated=0 unchanged=0 rejected=0`);
      recon.child.kill('SIGINT');
      const result = await recon.done;
      expect(result.code).toBe(2);
      // The signal lands while `second` loads (150,000 rows), or at the latest before `third` starts.
      expect(result.stderr).toMatch(
        /^recon import-orders: interrupted by SIGINT: nothing of \S+int-(second|third)\.csv was committed(, 1 more file not started)?\n$/,
      );
      const database = await testDb.reopen();
      try {
        const imports = await database.db
          .selectFrom('recon.order_imports')
          .select(['name', 'status'])
          .where('name', 'like', '%int-%')
          .orderBy('import_id')
          .execute();
        expect(imports.every((row) => row.status === 'loaded')).toBe(true);
        expect(imports.map((row) => row.name)).not.toContain(third);
        const loadedSecond = imports.some((row) => row.name === second);
        const { n } = await database.db
          .selectFrom('recon.orders')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('order_id', 'like', 'INS%')
          .executeTakeFirstOrThrow();
        expect(Number(n)).toBe(loadedSecond ? 150_000 : 0);
      } finally {
        await testDb.close();
      }
    },
  );
});
