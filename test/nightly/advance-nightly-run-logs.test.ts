import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/create-logger.ts';
import { advanceNightlyRun, type NightlyDependencies } from '../../src/nightly/advance-nightly-run.ts';
import { startNightlyRun } from '../../src/nightly/nightly-run.ts';
import { answering, startServer, type LoopbackServer } from '../client/loopback-servers.ts';
import { memoryStream } from '../log/memory-stream.ts';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { parseLogRecords, type LogRecord } from '../support/log-records.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * What a nightly run's advance logs when the service fails it: each try of the client (warn, with the EXECCODE or
 * the error's code), the request's fate at error level, one line each, and the run's end; never the HASH the
 * requests were signed with. Real loopback servers play the service; the logger is the one recon serve uses.
 */
const T0 = new Date('2026-11-23T02:30:00Z');
const SECRET = 'advance-logs-secret';
const REFUSED = { EXECCODE: '1003', MESSAGE: 'Invalid HASH', OPERATIONTYPE: 'getTransactions' };

describe.each(BACKENDS)('the log of a nightly run the service fails, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let refusing: LoopbackServer;
  let day = 0;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await insertOrders(testDb.database, [
      { id: 'LOG-1', amount: 1000n, status: 'paid', createdAt: new Date(T0.getTime() - 2 * 86_400_000) },
    ]);
    refusing = await startServer(answering(REFUSED));
  });
  afterAll(async () => {
    await refusing?.close();
    await testDb?.drop();
  });

  /** One advance of a new run against the service at `baseUrl`, and the records it logged. */
  async function advanceLogged(baseUrl: string): Promise<{ runId: string; records: LogRecord[]; text: string }> {
    const { run } = await startNightlyRun(testDb.database.db, `2026-12-${String(++day).padStart(2, '0')}`, T0);
    const stream = memoryStream();
    const log = createLogger({ level: 'info', stream, name: 'recon worker', secrets: [SECRET] });
    const deps: NightlyDependencies = {
      database: testDb.database,
      accounts: [
        {
          identifier: 'LOGS',
          client: createPaymentClient({
            baseUrl,
            identifier: 'LOGS',
            secret: SECRET,
            timeoutMs: 1_000,
            retry: { attempts: 2, baseDelayMs: 10 },
            log,
          }),
        },
      ],
      nightly: { ...loadConfig({}).nightly, exportTimeoutSeconds: 600, exportAttempts: 2 },
      reconcile: loadConfig({}).reconcile,
      callbackBaseUrl: 'http://127.0.0.1:9/',
      now: () => T0,
      scheduleAdvance: async () => {},
      log,
    };
    await advanceNightlyRun(deps, run.nightlyRunId);
    return { runId: run.nightlyRunId, records: parseLogRecords(stream.text()), text: stream.text() };
  }

  it.skipIf(skip)('a request never reached: each try a warning, then an error with its code, in one line', async () => {
    const { baseUrl: nowhere } = await refusingBaseUrl();
    const { runId, records } = await advanceLogged(nowhere);
    const request = { run: runId, batch: 1, attempt: 1, request: expect.any(String) };
    expect(records.filter((record) => record.level !== 'info')).toEqual([
      expect.objectContaining({
        level: 'warn',
        ...request,
        operation: 'getTransactions',
        try: 1,
        err: { code: 'NETWORK', message: `${nowhere}/front/service/rest/export: connection refused` },
        msg: 'getTransactions: no valid answer',
      }),
      expect.objectContaining({ level: 'warn', try: 2, err: expect.objectContaining({ code: 'NETWORK' }) }),
      expect.objectContaining({
        level: 'error',
        ...request,
        err: { code: 'NETWORK', message: `${nowhere}/front/service/rest/export: connection refused` },
        msg: 'export request not sent: it is sent again in a minute',
      }),
    ]);
    expect(records.at(-1)).toMatchObject({
      level: 'info',
      state: 'waiting',
      msg: 'nightly run waiting for its exports',
    });
  });

  it.skipIf(skip)(
    'a request refused for good: its EXECCODE, the batch given up, the run failed; never the HASH',
    async () => {
      const { runId, records, text } = await advanceLogged(refusing.baseUrl);
      const run = { run: runId, date: expect.stringMatching(/^2026-12-\d\d$/) };
      expect(records.map((record) => [record.level, record.msg])).toEqual([
        ['info', 'nightly run planned: 1 order(s) in 1 batch(es)'],
        ['warn', 'getTransactions answered EXECCODE 1003'],
        ['error', 'export request refused: its batch is given up'],
        ['info', 'nightly run reconciling'],
        ['info', 'orders reconciled'],
        ['error', 'nightly run failed'],
      ]);
      expect(records[1]).toMatchObject({ ...run, execCode: '1003', try: 1, serviceMessage: 'Invalid HASH' });
      expect(records[2]).toMatchObject({
        ...run,
        err: { code: 'SERVICE_ERROR', message: expect.stringMatching(/^getTransactions answered EXECCODE 1003 /) },
      });
      expect(records[5]).toMatchObject({
        ...run,
        state: 'failed',
        failure: expect.stringMatching(/^1 export batch\(es\) given up/),
      });
      const signed = refusing.received.map((received) => received.params.HASH as string);
      expect(signed.length).toBeGreaterThan(0);
      for (const hash of signed) expect(text).not.toContain(hash);
      expect(text).not.toContain(SECRET);
    },
  );
});
