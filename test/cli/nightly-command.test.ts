import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NightlyRunReport } from '../../src/nightly/nightly-run-report.ts';
import { createSandbox, type Sandbox } from '@recon/sandbox';
import { DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { holdTransaction, lockWaiters, type HeldTransaction } from '../support/held-transaction.ts';
import { untilLogged } from '../support/log-records.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { oneProcessPerExitCode, runRecon, runReconInProcess, startRecon, type RunningRecon } from './run-recon.ts';

const IDENTIFIER = 'NIGHTLY-CLI';
const SECRET = 'nightly-cli-secret';

describe('recon nightly --date', () => {
  // Refused before any database is opened: there is none here.
  const env = { RECON_DATA_DIR: '/nonexistent/recon-nightly-cli' };

  it('refuses what is not a calendar date, in one line (exit 1)', async () => {
    const variant = oneProcessPerExitCode();
    for (const date of ['2026-13-01', '26-11-01', '2026-11-1', '2026-02-30', '2026-04-31', 'tomorrow']) {
      const result = await variant(['nightly', '--date', date], env, 1);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(`recon nightly: --date: expected YYYY-MM-DD, got '${date}'\n`);
    }
  });
});

/**
 * Each command's first run in this file is a process of its own, on whichever backend runs first; the others run in
 * this one. A process on PGlite opens its database from scratch: seconds of CPU for nothing the command's output
 * depends on.
 */
const spawnedCommands = new Set<string>();
function firstAsProcess(args: string[], env: Record<string, string | undefined>) {
  if (spawnedCommands.has(args[0]!)) return runReconInProcess(args, env);
  spawnedCommands.add(args[0]!);
  return runRecon(args, env);
}

describe.each(BACKENDS)('recon nightly and recon runs on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    // Every read goes through recon itself: an embedded database is one process's at a time.
    await testDb.close();
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)(
    'recon runs says there is none yet; recon nightly starts a run, then attaches to it; recon runs lists it',
    async () => {
      expect(await firstAsProcess(['runs'], testDb.env)).toEqual({
        code: 0,
        stdout: 'no nightly run yet\n',
        stderr: '',
      });
      expect(await runReconInProcess(['runs', '--json'], testDb.env)).toEqual({ code: 0, stdout: '[]\n', stderr: '' });

      const started = await firstAsProcess(['nightly', '--date', '2026-11-20', '--json'], testDb.env);
      expect(started.code).toBe(0);
      const run = JSON.parse(started.stdout) as NightlyRunReport;
      expect(run).toMatchObject({
        runDate: '2026-11-20',
        state: 'requesting',
        orders: null,
        batches: null,
        requests: {},
        reconciliationRunId: null,
        failure: null,
        finishedAt: null,
      });
      expect(started.stderr).toBe(`recon nightly: started the run of 2026-11-20 (run ${run.nightlyRunId})\n`);

      const attached = await runReconInProcess(['nightly', '--date', '2026-11-20'], testDb.env);
      expect(attached.code).toBe(0);
      expect(attached.stderr).toBe(`recon nightly: attached to the run of 2026-11-20 (run ${run.nightlyRunId})\n`);
      expect(attached.stdout).toBe(
        `2026-11-20  run ${run.nightlyRunId}  requesting  orders - in - batch(es); requests: none\n`,
      );

      await runReconInProcess(['nightly', '--date', '2026-11-21'], testDb.env);
      const listed = await runReconInProcess(['runs', '--json'], testDb.env);
      expect(listed.code).toBe(0);
      const runs = JSON.parse(listed.stdout) as NightlyRunReport[];
      expect(runs.map((r) => [r.runDate, r.state])).toEqual([
        ['2026-11-21', 'requesting'],
        ['2026-11-20', 'requesting'],
      ]);
      expect(runs[1]).toEqual(run);
      const table = await runReconInProcess(['runs'], testDb.env);
      expect(
        table.stdout
          .split('\n')
          .slice(0, -1)
          .map((line) => line.split('  ').slice(0, 3).join('  ')),
      ).toEqual([
        `2026-11-21  run ${runs[0]!.nightlyRunId}  requesting`,
        `2026-11-20  run ${run.nightlyRunId}  requesting`,
      ]);
    },
    120_000,
  );
});

/**
 * `--wait` needs a worker in another process beside `recon nightly`: PostgreSQL only (an embedded database is one
 * process's). The sandbox delivers the exports; a run fails when they are lost.
 */
describe.skipIf(!hasPostgres)('recon nightly --wait (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let sandbox: Sandbox;
  let service: Record<string, string>;
  let orders: number;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    // One try per delivery: a lost delivery is lost at once, with no retry left running in the background.
    sandbox = createSandbox({
      identifier: IDENTIFIER,
      secret: SECRET,
      seed: 11,
      seedOrders: 40,
      exportRetry: { attempts: 1 },
    });
    service = {
      RECON_SERVICE_URL: await sandbox.listen(0),
      RECON_IDENTIFIER: IDENTIFIER,
      RECON_SECRET: SECRET,
      // The workers find the jobs recon nightly sends, and a run's next look at its timeouts, at their next poll.
      RECON_JOB_POLL_MS: '500',
    };
    const orderIds = sandbox.scenario!.orderIds;
    orders = orderIds.length;
    await insertOrders(
      testDb.database,
      orderIds.map((id) => ({ id, amount: 100n, status: 'paid' as const, createdAt: new Date(Date.now() - DAY) })),
    );
  });
  afterAll(async () => {
    await sandbox?.close();
    await testDb?.drop();
  });

  /** Runs `work` with `recon ARGS` running beside it, once `ready`; then stops it with SIGTERM: it must exit 0. */
  async function beside<T>(
    args: string[],
    env: Record<string, string>,
    ready: (recon: RunningRecon) => Promise<unknown>,
    work: () => Promise<T>,
  ): Promise<T> {
    const recon = startRecon(args, { ...testDb.env, ...service, ...env });
    try {
      await Promise.race([
        ready(recon),
        recon.done.then((early) => Promise.reject(new Error(`recon ${args[0]} exited ${early.code}: ${early.stderr}`))),
      ]);
      return await work();
    } finally {
      recon.child.kill('SIGTERM');
      const result = await recon.done;
      expect(result.code, result.stderr).toBe(0);
    }
  }

  it('exits 0 once the run is reconciled, with recon serve receiving and working', async () => {
    const { baseUrl, port } = await refusingBaseUrl();
    const serveEnv = {
      RECON_PORT: String(port),
      RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
      RECON_EXPORT_BATCH_SIZE: '15',
    };
    const listening = (recon: RunningRecon) => new Promise((resolve) => recon.onStdoutLine(resolve));
    // recon nightly in this process: its exit codes are seen from processes in the other tests of this file.
    const result = await beside(['serve'], serveEnv, listening, () =>
      runReconInProcess(['nightly', '--date', '2026-11-22', '--wait', '--json'], {
        ...testDb.env,
        ...service,
        ...serveEnv,
      }),
    );
    expect(result.code).toBe(0);
    const run = JSON.parse(result.stdout) as NightlyRunReport;
    expect(run).toMatchObject({
      runDate: '2026-11-22',
      state: 'reconciled',
      orders,
      batches: Math.ceil(orders / 15),
      failure: null,
    });
    expect(run.requests).toEqual({ ingested: Math.ceil(orders / 15) });
    expect(run.reconciliationRunId).not.toBeNull();
  });

  it('exits 2 once the run has failed: every delivery lost, asked for once, given up', async () => {
    // The worker's CALLBACKURLs point where nothing listens: the sandbox's deliveries fail, as lost ones.
    const { baseUrl } = await refusingBaseUrl();
    const workerEnv = {
      RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
      RECON_EXPORT_TIMEOUT_SECONDS: '1',
      RECON_EXPORT_ATTEMPTS: '1',
      RECON_EXPORT_BATCH_SIZE: '1000',
    };
    const working = (recon: RunningRecon) =>
      untilLogged(recon, 'recon worker working', (record) => record.msg === 'working');
    const result = await beside(['worker'], workerEnv, working, () =>
      runReconInProcess(['nightly', '--date', '2026-11-23', '--wait'], { ...testDb.env, ...service, ...workerEnv }),
    );
    expect(result.code).toBe(2);
    // The worker probed the callback base before sending: why the exports never came shows at once.
    expect(result.stderr).toMatch(
      new RegExp(`\nrecon nightly: error: callback base ${baseUrl}/ does not reach recon's receiver: cannot connect: `),
    );
    expect(result.stdout).toMatch(
      /^2026-11-23 {2}run \d+ {2}failed \(1 export batch\(es\) given up, their orders reconciled without them: batch 1 \(no export delivered within 1 s\)\) {2}orders \d+ in 1 batch\(es\); requests: 1 given_up, reconciliation run \d+\n {2}callback base http:\/\/127\.0\.0\.1:\d+\/ unreachable at .+: cannot connect: .+\n$/,
    );
  });

  it('says at once when no worker runs, and what to start; then that one does', async () => {
    const { baseUrl } = await refusingBaseUrl();
    const workerEnv = {
      RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
      RECON_EXPORT_TIMEOUT_SECONDS: '1',
      RECON_EXPORT_ATTEMPTS: '1',
    };
    const waiting = startRecon(['nightly', '--date', '2026-11-25', '--wait'], {
      ...testDb.env,
      ...service,
      ...workerEnv,
    });
    let held: HeldTransaction | undefined;
    try {
      await waitUntil('recon nightly to say no worker runs', () => waiting.stderrSoFar().includes('no worker'), {
        timeoutMs: 30_000,
      });
      expect(waiting.stderrSoFar()).toMatch(
        /^recon nightly: started the run of 2026-11-25 \(run \d+\)\nrecon nightly: no worker is running \(none seen in the last 30 s\): the run waits until one starts; start `recon serve` \(receiver, worker and scheduler\) or `recon worker` on this database\n$/,
      );
      // The worker's first step waits on the run's row, held here: the run cannot fail before recon nightly has seen
      // the worker, however slow the machine.
      held = await holdTransaction(testDb.env.DATABASE_URL!, [
        "SELECT 1 FROM recon.nightly_runs WHERE run_date = '2026-11-25' FOR UPDATE",
      ]);
      const working = (recon: RunningRecon) =>
        untilLogged(recon, 'recon worker working', (record) => record.msg === 'working');
      const result = await beside(['worker'], workerEnv, working, async () => {
        try {
          await waitUntil('recon nightly to see the worker', () =>
            waiting.stderrSoFar().includes('a worker is running'),
          );
        } finally {
          // Released before the worker is stopped, seen or not: a worker stuck on the row would drain for 90 s.
          await held!.release();
        }
        return waiting.done;
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('no worker is running');
      expect(result.stderr).toMatch(/\nrecon nightly: a worker is running\n/);
    } finally {
      await held?.release();
      waiting.child.kill('SIGTERM');
    }
  }, 120_000);

  it('rides out a database that terminates its sessions and refuses new ones (57P01, then 55000)', async () => {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    const name = new URL(testDb.env.DATABASE_URL!).pathname.slice(1);
    // No worker: the run stays requesting, and recon nightly waits on it.
    const waiting = startRecon(['nightly', '--date', '2026-11-27', '--wait'], { ...testDb.env, ...service });
    try {
      await waitUntil('recon nightly waiting', () => waiting.stderrSoFar().includes('no worker is running'), {
        timeoutMs: 30_000,
      });
      // What an operator's maintenance does: no new connection, and the open ones ended.
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
      await waitUntil('recon nightly to notice the outage', () =>
        waiting.stderrSoFar().includes('the database is unreachable'),
      );
      expect(waiting.child.exitCode).toBeNull();
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await waitUntil('recon nightly to see the database back', () =>
        waiting.stderrSoFar().includes('the database is back'),
      );
      // The run ends as a worker would end it: recon nightly exits by its outcome.
      await testDb.database.db
        .updateTable('recon.nightly_runs')
        .set({ state: 'failed', failure: 'given up by the test', finished_at: new Date() })
        .where('run_date', '=', sql<Date>`'2026-11-27'::date`)
        .execute();
      const result = await waiting.done;
      expect(result.code, result.stderr).toBe(2);
      const told = result.stderr.split('\n').filter((line) => line.startsWith('recon nightly: the database'));
      expect(told).toEqual([
        expect.stringMatching(
          /^recon nightly: the database is unreachable \((terminating connection due to administrator command|database "\w+" is not currently accepting connections|Connection terminated.*)\); still waiting$/,
        ),
        expect.stringMatching(/^recon nightly: the database is back after \d+ s$/),
      ]);
      expect(result.stdout).toMatch(/^2026-11-27 {2}run \d+ {2}failed \(given up by the test\)/);
    } finally {
      waiting.child.kill('SIGTERM');
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
      await admin.end();
    }
  }, 120_000);

  it("rides out a database outage while it waits, and exits by the run's outcome", async () => {
    const { baseUrl, port } = await refusingBaseUrl();
    const serveEnv = {
      RECON_PORT: String(port),
      RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
      RECON_EXPORT_BATCH_SIZE: '1000',
    };
    const db = testDb.database.db;
    const target = new URL(testDb.env.DATABASE_URL!);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    // The run cannot finish while the test holds recon.transactions: its ingest waits to merge.
    let held: HeldTransaction | undefined = await holdTransaction(testDb.env.DATABASE_URL!, [
      'LOCK TABLE recon.transactions IN SHARE ROW EXCLUSIVE MODE',
    ]);
    try {
      const listening = (recon: RunningRecon) => new Promise((resolve) => recon.onStdoutLine(resolve));
      const result = await beside(['serve'], serveEnv, listening, async () => {
        const waiting = startRecon(['nightly', '--date', '2026-11-24', '--wait'], {
          ...testDb.env,
          DATABASE_URL: proxy.through(testDb.env.DATABASE_URL!),
          ...service,
          ...serveEnv,
        });
        await waitUntil(
          "the run's ingest waiting to merge",
          async () => (await lockWaiters(db)).some((waiter) => waiter.relation === 'recon.transactions'),
          { timeoutMs: 30_000 },
        );
        await proxy.cut();
        await waitUntil('recon nightly to notice the outage', () =>
          waiting.stderrSoFar().includes('the database is unreachable'),
        );
        expect(waiting.child.exitCode).toBeNull();
        await held!.release();
        held = undefined;
        await waitUntil(
          'the run reconciled',
          async () =>
            (
              await db
                .selectFrom('recon.nightly_runs')
                .select('state')
                .where('run_date', '=', sql<Date>`'2026-11-24'::date`)
                .executeTakeFirst()
            )?.state === 'reconciled',
          { timeoutMs: 60_000 },
        );
        await proxy.restore();
        return waiting.done;
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(
        /recon nightly: the database is unreachable \(.+\); still waiting\nrecon nightly: the database is back after \d+ s\n$/,
      );
      expect(result.stdout).toMatch(/^2026-11-24 {2}run \d+ {2}reconciled /);
    } finally {
      await held?.release();
      await proxy.close();
    }
  }, 120_000);
});
