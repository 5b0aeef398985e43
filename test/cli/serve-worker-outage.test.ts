import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLogRecords, untilLogged, type LogRecord } from '../support/log-records.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { listeningUrls, startRecon, type RunningRecon } from './run-recon.ts';

const SERVICE = { RECON_SERVICE_URL: 'http://127.0.0.1:9', RECON_IDENTIFIER: 'OUTAGE', RECON_SECRET: 'outage-secret' };
/** Connection attempts the processes make while the database drops every one: many errors from many parts. */
const ATTEMPTS_DURING_OUTAGE = 15;

/**
 * A database outage as `recon serve` and `recon worker` tell it: one warning when it starts, with `err` as
 * `{code, message}` and no stack trace, whatever part met it (pg-boss's polling and maintenance, the worker's
 * heartbeat, the probe); then one line when it ends, counting the errors. PostgreSQL only: the outage is a proxy in
 * front of the server that drops every connection, whose attempts the test counts, so that many errors are sure to
 * have happened before it ends.
 */
describe.skipIf(!hasPostgres)('recon serve and recon worker during a database outage (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let proxy: TcpProxy;
  const running: RunningRecon[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    const target = new URL(testDb.env.DATABASE_URL!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
  });
  afterAll(async () => {
    for (const recon of running) recon.child.kill('SIGKILL');
    await proxy?.close();
    await testDb?.drop();
  });

  it('one warning when it starts, one line when it ends with the count, nothing per error', async () => {
    const { baseUrl, port } = await refusingBaseUrl();
    const env = {
      ...testDb.env,
      DATABASE_URL: proxy.through(testDb.env.DATABASE_URL!),
      ...SERVICE,
      RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
      RECON_JOB_HEARTBEAT_SECONDS: '10',
    };
    const serve = startRecon(['serve'], { ...env, RECON_PORT: String(port) });
    running.push(serve);
    await listeningUrls(serve);
    const worker = startRecon(['worker'], env);
    running.push(worker);
    await listeningUrls(worker);
    const before = Object.fromEntries(
      [serve, worker].map((recon) => [recon.child.pid, parseLogRecords(recon.stdoutSoFar()).length]),
    );

    proxy.refuse();
    await waitUntil(
      'the processes trying the database again and again',
      () => proxy.refused >= ATTEMPTS_DURING_OUTAGE,
      {
        timeoutMs: 60_000,
      },
    );
    for (const recon of [serve, worker])
      await untilLogged(recon, 'the outage told', (record) => record.msg.startsWith('database unreachable'));
    await proxy.restore();
    for (const recon of [serve, worker])
      await untilLogged(recon, 'the end of the outage told', (record) => record.msg.startsWith('database is back'), {
        timeoutMs: 30_000,
      });

    for (const recon of [serve, worker]) {
      recon.child.kill('SIGTERM');
      const result = await recon.done;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).not.toMatch(/stack|node_modules| {4}at /);
      const during = parseLogRecords(result.stdout).slice(before[recon.child.pid!]);
      // Every warning or error from the outage on, and what is said of the database: the outage's two lines only.
      const told = during.filter((record) => record.level !== 'info' || /database/.test(record.msg));
      expect(told.map((record) => record.msg)).toEqual([
        'database unreachable: trying again until it is back',
        expect.stringMatching(/^database is back after \d+ s \(\d+ error\(s\) while it was away\)$/),
      ]);
      const [start, end] = told as [LogRecord, LogRecord];
      expect(start.level).toBe('warn');
      expect(start['err']).toEqual({ code: expect.any(String), message: expect.any(String) });
      expect(Object.keys(start['err'] as object).sort()).toEqual(['code', 'message']);
      expect(end.level).toBe('info');
      expect(end['errors']).toBeGreaterThanOrEqual(2);
    }
  }, 180_000);
});
