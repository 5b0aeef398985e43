import net from 'node:net';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schema } from '../../src/db/schema.ts';
import { QUEUES } from '../../src/queue/job-queue.ts';
import { issueExportToken } from '../../src/receive/export-token.ts';
import { startQueueReceiver, type QueueReceiver } from '../nightly/queue-receiver.ts';
import {
  holdTransaction,
  lockWaiters,
  withApplicationName,
  type HeldTransaction,
} from '../support/held-transaction.ts';
import { messagesAmong, parseLogRecords, untilLogged } from '../support/log-records.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { listeningUrls, oneProcessPerExitCode, startRecon, type RunningRecon } from './run-recon.ts';

const IDENTIFIER = 'SIGNALS';
const SECRET = 'signals-secret';
const SERVICE = { RECON_IDENTIFIER: IDENTIFIER, RECON_SECRET: SECRET };

describe('recon serve and recon worker refuse to start without their settings', () => {
  // Nothing may be opened before the settings are checked: there is no database here.
  const base = {
    RECON_DATA_DIR: '/nonexistent/recon-signals',
    RECON_SERVICE_URL: 'http://127.0.0.1:9',
    ...SERVICE,
    RECON_CALLBACK_BASE_URL: 'http://127.0.0.1:9/',
  };

  for (const command of ['serve', 'worker']) {
    // The first refusal is a process of its own; the others run in this one.
    const refused = oneProcessPerExitCode();

    it(`recon ${command}: one line naming the variable, exit 1`, async () => {
      for (const [change, message] of [
        [{ RECON_SERVICE_URL: undefined }, /^environment variable RECON_SERVICE_URL is not set: /],
        [{ RECON_SECRET: undefined }, /^environment variable RECON_SECRET is not set: /],
        [{ RECON_CALLBACK_BASE_URL: undefined }, /^environment variable RECON_CALLBACK_BASE_URL is not set: /],
        [
          { RECON_CALLBACK_BASE_URL: 'https://callbacks.shop.example/c/' },
          /^invalid RECON_CALLBACK_BASE_URL: .* leaves 0 of CALLBACKURL's 32 for the token/,
        ],
        [{ RECON_JOB_HEARTBEAT_SECONDS: '5' }, /^invalid environment variable RECON_JOB_HEARTBEAT_SECONDS: /],
      ] as const) {
        const result = await refused([command], { ...base, ...change }, 1);
        expect(result.code).toBe(1);
        expect(result.stdout).toBe('');
        expect(result.stderr).toMatch(new RegExp(`^recon ${command}: ${message.source.slice(1)}`));
        expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      }
    });

    it.runIf(command === 'serve')('recon serve --port: decimal digits only, 0x10 refused (exit 1)', async () => {
      const result = await refused(['serve', '--port', '0x10'], base, 1);
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: "recon serve: --port: expected a whole number from 0 to 65535, in decimal digits, got '0x10'\n",
      });
    });

    it(`recon ${command}: every missing or invalid setting named in the one line of one start`, async () => {
      const result = await refused(
        [command],
        {
          RECON_DATA_DIR: '/nonexistent/recon-signals',
          RECON_SECRET: SECRET,
          RECON_DELIVERY_RETENTION_DAYS: '1e3',
        },
        1,
      );
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(
        new RegExp(
          `^recon ${command}: 4 settings to fix: \\(1\\) invalid environment variable RECON_DELIVERY_RETENTION_DAYS: .*; ` +
            '\\(2\\) environment variable RECON_SERVICE_URL is not set: .*; ' +
            '\\(3\\) environment variable RECON_IDENTIFIER is not set: .*; ' +
            '\\(4\\) environment variable RECON_CALLBACK_BASE_URL is not set: ',
        ),
      );
    });
  }
});

/**
 * SIGTERM drains: recon serve stops taking deliveries and answers /healthz 503, what is in flight finishes, the
 * worker's current job finishes, then exit 0. PostgreSQL only: a job is kept in progress by a lock the test holds
 * (its merge into recon.transactions waits for it), which takes a second session beside the process's own.
 */
describe.skipIf(!hasPostgres)('SIGTERM drains recon serve and recon worker (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let db: Kysely<Schema>;
  let receiving: QueueReceiver;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    db = testDb.database.db;
    receiving = await startQueueReceiver(testDb.database, { secret: SECRET, heartbeatSeconds: 10 });
  });
  afterAll(async () => {
    await receiving?.close();
    await testDb?.drop();
  });

  /**
   * A recon serve on a port of its own choosing (RECON_PORT=0), ready once it says where it listens. A port found free
   * beforehand and handed over can be taken in between by any connection's local port: under load it was.
   */
  async function startServe(
    name: string,
  ): Promise<{ recon: RunningRecon; url: string; port: number; adminUrl: string }> {
    const recon = startRecon(['serve'], {
      ...testDb.env,
      DATABASE_URL: withApplicationName(testDb.env.DATABASE_URL!, name),
      // No run is started here: neither the service nor the callback base is ever called.
      RECON_SERVICE_URL: (await refusingBaseUrl()).baseUrl,
      ...SERVICE,
      RECON_PORT: '0',
      RECON_CALLBACK_BASE_URL: `${(await refusingBaseUrl()).baseUrl}/`,
    });
    const listening = await Promise.race([
      untilLogged(recon, 'recon serve listening', (record) => record.msg.startsWith('listening on ')),
      recon.done.then((result) => Promise.reject(new Error(`recon serve exited ${result.code}: ${result.stderr}`))),
    ]);
    const url = String(listening.url);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(listening).toMatchObject({ level: 'info', msg: `listening on ${url}` });
    const { adminUrl } = await listeningUrls(recon);
    return { recon, url, port: Number(new URL(url).port), adminUrl };
  }

  /** A token the receiver takes a delivery on, and a small plain-csv export to deliver. */
  async function exportToDeliver(callbackBaseUrl: string, prefix: string) {
    const { token } = await issueExportToken(db, {
      callbackBaseUrl,
      orderIds: [`${prefix}-ORDER`],
      compression: 'gzip',
      nightlyRunId: null,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    let csv = 'TRANSACTIONID;ORDERID;DATE;AMOUNT;CURRENCY;EXECCODE\n';
    for (let n = 1; n <= 3; n++) csv += `${prefix}${n};${prefix}-ORDER;2026-11-20 12:00:00;${n}.00;EUR;0000\n`;
    return { path: `/${token}`, body: Buffer.from(csv) };
  }

  /** Holds recon.transactions so that an ingest's merge waits: the job stays in progress until released. */
  const holdMerges = () =>
    holdTransaction(testDb.env.DATABASE_URL!, ['LOCK TABLE recon.transactions IN SHARE ROW EXCLUSIVE MODE']);

  const mergingIn = (applicationName: string) =>
    waitUntil(`${applicationName} merging into recon.transactions`, async () =>
      (await lockWaiters(db)).find(
        (waiter) => waiter.applicationName === applicationName && waiter.relation === 'recon.transactions',
      ),
    );

  const transactionsLike = async (prefix: string) =>
    (
      await sql<{
        count: number;
      }>`SELECT count(*)::integer AS count FROM recon.transactions WHERE transaction_id LIKE ${prefix + '%'}`.execute(
        db,
      )
    ).rows[0]!.count;

  it('recon worker with a job in progress: takes no more, finishes the job, then exits 0', async () => {
    const delivery = await exportToDeliver(receiving.callbackBaseUrl, 'WRK');
    const posted = await fetch(receiving.receiver.url + delivery.path, {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: delivery.body,
    });
    expect(posted.status).toBe(200);
    let held: HeldTransaction | undefined = await holdMerges();
    const worker = startRecon(['worker'], {
      ...testDb.env,
      DATABASE_URL: withApplicationName(testDb.env.DATABASE_URL!, 'drained-worker'),
      RECON_SERVICE_URL: 'http://127.0.0.1:9',
      ...SERVICE,
      RECON_CALLBACK_BASE_URL: receiving.callbackBaseUrl,
    });
    try {
      const merging = await mergingIn('drained-worker');
      // A second delivery queues behind the job in progress: the draining worker must leave it to another.
      const behind = await exportToDeliver(receiving.callbackBaseUrl, 'WRQ');
      const queued = await fetch(receiving.receiver.url + behind.path, {
        method: 'POST',
        headers: { 'content-type': 'text/csv' },
        body: behind.body,
      });
      expect(queued.status).toBe(200);
      worker.child.kill('SIGTERM');
      await untilLogged(worker, 'the worker draining', (record) => record.msg === 'draining');
      // Still at its job: the merge waits on, the process lives on.
      expect((await lockWaiters(db)).map((waiter) => waiter.pid)).toContain(merging.pid);
      expect(worker.child.exitCode).toBeNull();
      await held.release();
      held = undefined;
      const result = await worker.done;
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      // The job it was at is logged done after the drain began, and before the process stops.
      const records = parseLogRecords(result.stdout);
      expect(messagesAmong(records, ['working', 'draining', 'delivery ingested', 'stopped'])).toEqual([
        'working',
        'draining',
        'delivery ingested',
        'stopped',
      ]);
      expect(records.find((record) => record.msg === 'delivery ingested')).toMatchObject({
        level: 'info',
        name: 'recon worker',
        rows: 3,
        rejected: 0,
        seconds: expect.any(Number),
      });
    } finally {
      worker.child.kill('SIGKILL');
      await held?.release();
    }
    expect(await transactionsLike('WRK')).toBe(3);
    expect(await transactionsLike('WRQ')).toBe(0);
    // The job it was at completed; the one queued behind it was not taken.
    const jobs = await sql<{
      id: string;
      state: string;
    }>`SELECT id, state FROM recon_queue.job WHERE name = ${QUEUES.ingestDelivery} ORDER BY created_on`.execute(db);
    expect(jobs.rows.map((job) => job.state)).toEqual(['completed', 'created']);
    // Not left for the next test's worker to take first.
    await receiving.boss.cancel(QUEUES.ingestDelivery, jobs.rows[1]!.id);
  });

  it('recon serve with a job in progress: finishes the job, then exits 0', async () => {
    const held = await holdMerges();
    const { recon, url, adminUrl } = await startServe('drained-serve');
    let released = false;
    try {
      const delivery = await exportToDeliver(`${url}/`, 'SRV');
      const posted = await fetch(url + delivery.path, {
        method: 'POST',
        headers: { 'content-type': 'text/csv' },
        body: delivery.body,
      });
      expect(posted.status).toBe(200);
      const merging = await mergingIn('drained-serve');
      recon.child.kill('SIGTERM');
      await untilLogged(recon, 'recon serve draining', (record) => record.msg === 'draining');
      expect((await lockWaiters(db)).map((waiter) => waiter.pid)).toContain(merging.pid);
      expect(recon.child.exitCode).toBeNull();
      await held.release();
      released = true;
      const result = await recon.done;
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      const wanted = [
        `listening on ${url}`,
        `admin on ${adminUrl}`,
        'delivery received',
        'draining',
        'delivery ingested',
        'stopped',
      ];
      expect(messagesAmong(parseLogRecords(result.stdout), wanted)).toEqual(wanted);
    } finally {
      recon.child.kill('SIGKILL');
      if (!released) await held.release();
    }
    expect(await transactionsLike('SRV')).toBe(3);
  });

  it('recon serve with an upload in flight: the upload is stored and answered, /healthz answers 503 meanwhile, exit 0', async () => {
    const { recon, url, port, adminUrl } = await startServe('draining-receiver');
    try {
      expect((await fetch(`${adminUrl}/healthz`)).status).toBe(200);
      const delivery = await exportToDeliver(`${url}/`, 'UPL');
      const upload = await startUpload(port, delivery.path, delivery.body);
      recon.child.kill('SIGTERM');
      // Once the port refuses connections the receiver is draining; the admin listener says so, and answers on.
      await waitUntil('recon serve no longer listening', () => refused(port));
      const health = await fetch(`${adminUrl}/healthz`);
      expect({ status: health.status, text: await health.text() }).toEqual({ status: 503, text: 'shutting down' });
      upload.finish('');
      const answers = await upload.answers;
      expect([...answers.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1])).toEqual(['100', '200']);
      const result = await recon.done;
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(messagesAmong(parseLogRecords(result.stdout), ['draining', 'delivery received', 'stopped'])).toEqual([
        'draining',
        'delivery received',
        'stopped',
      ]);
    } finally {
      recon.child.kill('SIGKILL');
    }
    // Stored before it was answered: ingested already, or waiting in the queue for the next worker.
    const stored = await db
      .selectFrom('recon.deliveries as d')
      .innerJoin('recon.export_requests as r', 'r.request_id', 'd.request_id')
      .select(['d.state', 'd.delivery_id'])
      .where('r.order_ids', '@>', sql<string[]>`ARRAY['UPL-ORDER']`)
      .execute();
    expect(stored).toHaveLength(1);
    if (stored[0]!.state !== 'ingested') {
      const jobs = await sql<{
        state: string;
      }>`SELECT state FROM recon_queue.job WHERE name = ${QUEUES.ingestDelivery} AND data->>'deliveryId' = ${String(stored[0]!.delivery_id)}`.execute(
        db,
      );
      expect(jobs.rows.map((job) => job.state)).toEqual(['created']);
    }
  });
});

/**
 * A POST whose body goes in two halves on a raw connection, so that the test decides when the upload ends, with
 * more requests pipelined behind it. Resolves once the server's handler has the request (it answered
 * `100 Continue`), with the first half sent.
 */
async function startUpload(
  port: number,
  path: string,
  body: Buffer,
): Promise<{ finish: (pipelined: string) => void; answers: Promise<string> }> {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  const answers = new Promise<string>((resolve, reject) => {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/csv\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  await new Promise<void>((resolve) => {
    const check = () => {
      if (received.includes('\r\n\r\n')) resolve();
      else socket.once('data', check);
    };
    socket.once('data', check);
  });
  expect(received).toBe('HTTP/1.1 100 Continue\r\n\r\n');
  const half = Math.floor(body.length / 2);
  socket.write(body.subarray(0, half));
  return { finish: (pipelined) => socket.write(Buffer.concat([body.subarray(half), Buffer.from(pipelined)])), answers };
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(port, '127.0.0.1');
    probe.once('connect', () => {
      probe.destroy();
      resolve(false);
    });
    probe.once('error', () => resolve(true));
  });
}
