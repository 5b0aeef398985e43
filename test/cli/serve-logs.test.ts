import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '@recon/sandbox';
import { DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { parseLogRecords, untilLogged, type LogRecord } from '../support/log-records.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { startRecon, type RunningRecon } from './run-recon.ts';

const IDENTIFIER = 'LOGGED-SHOP';
const SECRET = 'logged-shop-secret';
const SEED = 11;
const SEED_ORDERS = 20;
const MAX_FILE_BYTES = 100_000;
/** A nightly run on the embedded database, on a busy 2-core machine, takes well under this. */
const RUN_WITHIN_MS = 90_000;

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

/**
 * What an operator reads of `recon serve`: one JSON record a line on stdout, each with its level, time, message and
 * the ids of what it is about, for a delivery refused, a nightly run from its start to its reconciliation (requests,
 * deliveries, ingests) and the notifications of a seeded scenario; and never the secret, a HASH or an e-mail, though
 * the requests, exports and notifications all carry them. On both backends: the run is started by the scheduler
 * (RECON_SCHEDULE every second), as an embedded database admits no second process beside recon serve.
 */
describe.each(BACKENDS)('recon serve logs JSON lines, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let sandbox: Sandbox;
  let serviceUrl: string;
  let recon: RunningRecon | undefined;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    sandbox = createSandbox({ identifier: IDENTIFIER, secret: SECRET, seed: SEED, seedOrders: SEED_ORDERS });
    serviceUrl = await sandbox.listen(0);
    await insertOrders(
      testDb.database,
      sandbox.scenario!.orderIds.map((id) => ({
        id,
        amount: 100n,
        status: 'paid' as const,
        createdAt: new Date(Date.now() - DAY),
      })),
    );
    // recon serve opens the database itself: an embedded one is one process's at a time.
    await testDb.close();
  });
  afterAll(async () => {
    recon?.child.kill('SIGKILL');
    await sandbox?.close();
    await testDb?.drop();
  });

  it.skipIf(skip)(
    'a refusal, a nightly run and notifications, each a record with its ids, and no secret in any line',
    async () => {
      const { baseUrl, port } = await refusingBaseUrl();
      const serve = startRecon(['serve'], {
        ...testDb.env,
        RECON_SERVICE_URL: serviceUrl,
        RECON_IDENTIFIER: IDENTIFIER,
        RECON_SECRET: SECRET,
        RECON_PORT: String(port),
        RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
        RECON_SCHEDULE: '* * * * * *',
        RECON_SCHEDULE_TIMEZONE: 'UTC',
        RECON_EXPORT_BATCH_SIZE: '10',
        RECON_MAX_FILE_BYTES: String(MAX_FILE_BYTES),
      });
      recon = serve;
      const exited = serve.done.then((result) =>
        Promise.reject(new Error(`recon serve exited ${result.code}: ${result.stderr}`)),
      );
      exited.catch(() => {});
      const logged = (what: string, matches: (record: LogRecord) => boolean, timeoutMs = 30_000) =>
        Promise.race([untilLogged(serve, what, matches, { timeoutMs }), exited]);

      expect(await logged('listening', (record) => record.msg.startsWith('listening on '))).toMatchObject({
        level: 'info',
        msg: `listening on ${baseUrl}`,
        url: baseUrl,
      });

      // Two deliveries refused: a token recon never issued, and a body larger than RECON_MAX_FILE_BYTES.
      const unknown = await fetch(`${baseUrl}/NoSuchToken123`, { method: 'POST', body: 'x' });
      expect(unknown.status).toBe(404);
      const oversized = await fetch(`${baseUrl}/AnotherToken456`, {
        method: 'POST',
        headers: { 'content-type': 'application/gzip' },
        body: Buffer.alloc(MAX_FILE_BYTES + 1),
      });
      expect(oversized.status).toBe(413);

      // The seeded scenario's notifications, each signed (HASH) and most naming the card holder's e-mail.
      const notifier = createSandbox({
        identifier: IDENTIFIER,
        secret: SECRET,
        seed: SEED,
        seedOrders: SEED_ORDERS,
        notifyUrl: `${baseUrl}/notify`,
      });
      let notifications;
      try {
        await notifier.notifications.idle();
        notifications = notifier.notifications.deliveries();
      } finally {
        await notifier.close();
      }
      expect(notifications.length).toBeGreaterThan(0);
      expect(notifications.filter((delivery) => delivery.state !== 'delivered')).toEqual([]);

      const reconciled = await logged(
        'the nightly run reconciled',
        (r) => r.msg === 'nightly run reconciled',
        RUN_WITHIN_MS,
      );
      serve.child.kill('SIGTERM');
      const result = await serve.done;
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');

      const records = parseLogRecords(result.stdout);
      for (const line of result.stdout.trimEnd().split('\n')) {
        // A key twice in one object (a child's binding and a field of the same name) is read differently by jq and
        // by collectors: a line that parses back to itself has each key once.
        expect(JSON.stringify(JSON.parse(line))).toBe(line);
      }
      for (const record of records) {
        expect(LEVELS, JSON.stringify(record)).toContain(record.level);
        expect(record.time, JSON.stringify(record)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(typeof record.msg, JSON.stringify(record)).toBe('string');
        expect(record).toMatchObject({ name: 'recon serve', pid: serve.child.pid });
      }
      const withMessage = (message: string | RegExp) =>
        records.filter((record) => (typeof message === 'string' ? record.msg === message : message.test(record.msg)));

      // Refusals: the status and reason the sender was answered, a token's first characters only.
      expect(withMessage(/^delivery refused: /)).toEqual([
        expect.objectContaining({ level: 'warn', status: 404, reason: 'unknown_token', tokenPrefix: 'NoSu...' }),
        expect.objectContaining({ level: 'warn', status: 413, reason: 'too_large', tokenPrefix: 'Anot...' }),
      ]);

      // The run: started, planned, waiting, reconciling, reconciled; every record of it names the run and its date.
      const run = { run: reconciled.run, date: reconciled.date };
      expect(run.run).toEqual(expect.any(String));
      expect(run.date).toMatch(/^\d{4}-\d\d-\d\d$/);
      const runStates = records.filter((record) => record.run === run.run && typeof record.state === 'string');
      expect(runStates.map((record) => [record.msg, record.state])).toEqual([
        ['nightly run started', 'requesting'],
        ['nightly run planned: 20 order(s) in 2 batch(es)', 'requesting'],
        ['nightly run waiting for its exports', 'waiting'],
        ['nightly run reconciling', 'reconciling'],
        ['nightly run reconciled', 'reconciled'],
      ]);
      for (const record of runStates) expect(record).toMatchObject({ level: 'info', ...run });

      // Each request sent: its EXECCODE and latency, with the run, batch and request it is for.
      const requests = withMessage('getTransactions answered EXECCODE 0000');
      expect(requests).toHaveLength(2);
      for (const record of requests)
        expect(record).toMatchObject({
          level: 'info',
          ...run,
          batch: expect.any(Number),
          request: expect.any(String),
          operation: 'getTransactions',
          execCode: '0000',
          attempt: 1,
          try: 1,
          ms: expect.any(Number),
        });
      expect(requests.map((record) => record.batch).sort()).toEqual([1, 2]);

      // Each delivery received, then ingested: rows and seconds, its file, and the run's date and batch.
      const received = withMessage('delivery received');
      expect(received).toHaveLength(2);
      for (const record of received)
        expect(record).toMatchObject({
          level: 'info',
          delivery: expect.any(String),
          request: expect.any(String),
          bytes: expect.any(Number),
        });
      const ingested = withMessage('delivery ingested');
      expect(ingested).toHaveLength(2);
      for (const record of ingested)
        expect(record).toMatchObject({
          level: 'info',
          date: run.date,
          batch: expect.any(Number),
          file: expect.any(String),
          rows: expect.any(Number),
          rejected: 0,
          seconds: expect.any(Number),
        });
      expect(ingested.map((record) => record.delivery).sort()).toEqual(
        received.map((record) => record.delivery).sort(),
      );
      expect(ingested.map((record) => record.request).sort()).toEqual(requests.map((record) => record.request).sort());
      expect(ingested.reduce((rows, record) => rows + (record.rows as number), 0)).toBeGreaterThan(0);

      // The reconciliation's counts.
      const [counted] = withMessage('orders reconciled');
      expect(counted).toMatchObject({
        level: 'info',
        ...run,
        reconciliation: reconciled.reconciliation,
        orders: SEED_ORDERS,
        counts: expect.objectContaining({ matched: expect.any(Number) }),
        suspect: false,
        seconds: expect.any(Number),
      });
      const counts = Object.values(counted!.counts as Record<string, number>);
      expect(counts.reduce((sum, count) => sum + count, 0)).toBe(SEED_ORDERS);

      expect(withMessage('notification received')).toHaveLength(notifications.length);

      // Never the secret, a HASH or a card holder's e-mail, though requests, exports and notifications carry them.
      const hashes = [
        ...notifications.map((delivery) => delivery.fields.HASH!),
        ...sandbox.store.all().map((transaction) => transaction.request.HASH as string),
      ];
      const emails = [
        ...notifications.map((delivery) => delivery.fields.CLIENTEMAIL),
        ...sandbox.store.all().map((transaction) => transaction.request.CLIENTEMAIL as string | undefined),
      ].filter((email): email is string => Boolean(email));
      expect(hashes.length).toBeGreaterThan(0);
      expect(emails.length).toBeGreaterThan(0);
      for (const line of result.stdout.split('\n')) {
        expect(line).not.toContain(SECRET);
        for (const hash of hashes) expect(line.toLowerCase()).not.toContain(hash.toLowerCase());
        for (const email of emails) expect(line).not.toContain(email);
      }
    },
    180_000,
  );
});
