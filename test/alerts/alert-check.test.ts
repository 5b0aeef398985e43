import net from 'node:net';
import { sql, type Kysely } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkAlerts, type AlertCheckOptions } from '../../src/alerts/alert-check.ts';
import { startAlertMonitor } from '../../src/alerts/alert-monitor.ts';
import { alertSecrets } from '../../src/alerts/alert-secrets.ts';
import { ALERT_RETRY } from '../../src/alerts/deliver-alerts.ts';
import { raiseAlert } from '../../src/alerts/raise-alert.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/create-logger.ts';
import type { Database } from '../../src/db/database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import type { NightlyRunState, Schema } from '../../src/db/schema.ts';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { advanceNightlyRun, type NightlyDependencies } from '../../src/nightly/advance-nightly-run.ts';
import { probeCallbackBase } from '../../src/nightly/callback-probe.ts';
import { startNightlyRun } from '../../src/nightly/nightly-run.ts';
import { answering, startServer } from '../client/loopback-servers.ts';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { memoryStream } from '../log/memory-stream.ts';
import { parseLogRecords } from '../support/log-records.ts';
import { holdTransaction, lockWaiters, withApplicationName } from '../support/held-transaction.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { startMailReceiver, type MailReceiver } from '../support/mail-receiver.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { startWebhookReceiver, WEBHOOK_TOKEN, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * The alert check of `recon serve` against a real webhook receiver and a real SMTP relay on loopback, with its clock
 * in hand: which nightly runs give an alert, what it says, that it is sent once however many checks run, and that a
 * receiver that fails gets it on a later try.
 */
const SCHEDULE = { schedule: '30 2 * * *', timezone: 'Europe/Paris' };
const SERVICE_SECRET = 'the-service-hash-key-1234';
const RECIPIENTS = 'ops@shop.example, finance@shop.example';
const HOUR = 3_600_000;
const REFUSED = { EXECCODE: '1003', MESSAGE: 'Invalid HASH', OPERATIONTYPE: 'getTransactions' };
/** The slot of 2026-11-24: 02:30 in Paris, 01:30 UTC. */
const SLOT = new Date('2026-11-24T01:30:00Z');
const at = (ms: number) => new Date(SLOT.getTime() + ms);

describe.each(BACKENDS)('the alert check on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let db: Kysely<Schema>;
  let webhook: WebhookReceiver;
  let mail: MailReceiver;
  let logStream: ReturnType<typeof memoryStream>;
  /** The messages logged so far. */
  const logs = () => parseLogRecords(logStream.text()).map((record) => record.msg);

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    db = testDb.database.db;
  });
  afterAll(async () => {
    await testDb?.drop();
  });
  beforeEach(async () => {
    if (skip) return;
    await db.deleteFrom('recon.alerts').execute();
    await db.deleteFrom('recon.callback_probes').execute();
    await db.deleteFrom('recon.export_requests').execute();
    await db.deleteFrom('recon.nightly_runs').execute();
    webhook = await startWebhookReceiver();
    mail = await startMailReceiver();
    logStream = memoryStream();
  });
  afterEach(async () => {
    await webhook?.close();
    await mail?.close();
  });

  /** The check's options as `recon serve` makes them from its environment, at the clock given. */
  function options(clock: () => Date, env: Record<string, string | undefined> = {}): AlertCheckOptions {
    const config = loadConfig({
      RECON_SECRET: SERVICE_SECRET,
      RECON_ALERT_WEBHOOK: webhook.url,
      RECON_ALERT_EMAIL: RECIPIENTS,
      RECON_SMTP_URL: mail.url,
      ...env,
    });
    return {
      alerts: config.alerts,
      ...SCHEDULE,
      secrets: alertSecrets(config),
      now: clock,
      log: createLogger({ level: 'info', stream: logStream, name: 'recon serve', secrets: alertSecrets(config) }),
    };
  }
  const check = (now: Date, env?: Record<string, string | undefined>, on: Kysely<Schema> = db) =>
    checkAlerts(
      on,
      options(() => now, env),
    );

  interface RunRow {
    readonly date: string;
    readonly state: NightlyRunState;
    readonly startedAt?: Date;
    readonly finishedAt?: Date;
    readonly failure?: string;
    readonly suspectReason?: string;
    /** Its export batches given up, each with its request's failure, as the state machine leaves them. */
    readonly givenUp?: readonly { readonly batch: number; readonly failure: string }[];
  }
  /** A nightly run as the state machine leaves it, with its reconciliation when it has finished. */
  async function insertRun(run: RunRow): Promise<{ nightlyRunId: string; reconciliationRunId?: string }> {
    const startedAt = run.startedAt ?? new Date(`${run.date}T01:30:00Z`);
    const { nightly_run_id } = await db
      .insertInto('recon.nightly_runs')
      .values({
        run_date: run.date,
        as_of: startedAt,
        started_at: startedAt,
        updated_at: run.finishedAt ?? startedAt,
        state: run.state,
        failure: run.failure ?? null,
        finished_at: run.finishedAt ?? null,
      })
      .returning('nightly_run_id')
      .executeTakeFirstOrThrow();
    const nightlyRunId = String(nightly_run_id);
    for (const { batch, failure } of run.givenUp ?? [])
      await db
        .insertInto('recon.export_requests')
        .values({
          token: `givenup${nightlyRunId}x${batch}`,
          nightly_run_id: nightlyRunId,
          order_ids: [`O${batch}`],
          compression: 'gzip',
          expires_at: startedAt,
          batch,
          attempt: 3,
          state: 'given_up',
          failure,
        })
        .execute();
    if (run.state !== 'reconciled' && run.state !== 'failed') return { nightlyRunId };
    const { run_id } = await db
      .insertInto('recon.reconciliation_runs')
      .values({
        as_of: startedAt,
        scope: JSON.stringify({ kind: 'orders', count: 3 }),
        tolerance_minor: '0',
        grace_hours: 24,
        finished_at: run.finishedAt ?? null,
        kind: 'nightly',
        nightly_run_id: nightlyRunId,
        description: `nightly run of ${run.date}: 3 orders`,
        suspect: run.suspectReason !== undefined,
        suspect_reason: run.suspectReason ?? null,
      })
      .returning('run_id')
      .executeTakeFirstOrThrow();
    await db
      .updateTable('recon.nightly_runs')
      .set({ reconciliation_run_id: String(run_id) })
      .where('nightly_run_id', '=', nightlyRunId)
      .execute();
    return { nightlyRunId, reconciliationRunId: String(run_id) };
  }
  const alertRows = () =>
    db
      .selectFrom('recon.alerts')
      .select([
        'cause',
        'key',
        'attempts',
        'webhook_delivered_at',
        'email_delivered_at',
        'last_error',
        'given_up_at',
        'next_attempt_at',
      ])
      .orderBy('alert_id')
      .execute();

  const GIVEN_UP =
    '1 export batch(es) given up, their orders reconciled without them: batch 3 (no export delivered within 3600 s)';
  const BATCH_3 = [{ batch: 3, failure: 'no export delivered within 3600 s' }];

  it.skipIf(skip)(
    'a failed run: one webhook POST and one e-mail that read well, and nothing more at the next checks',
    async () => {
      const { nightlyRunId, reconciliationRunId } = await insertRun({
        date: '2026-11-24',
        state: 'failed',
        failure: GIVEN_UP,
        givenUp: BATCH_3,
        finishedAt: at(5 * HOUR),
      });
      expect(await check(at(5 * HOUR + 60_000))).toEqual({ raised: 1, delivered: 1, failed: 0, givenUp: 0 });

      expect(webhook.requests).toHaveLength(1);
      const [request] = webhook.requests;
      expect(request!.path).toBe(`/hooks/${WEBHOOK_TOKEN}?channel=ops`);
      expect(request!.contentType).toMatch(/^application\/json/);
      const detail =
        '1 export batch given up (batch 3), its orders reconciled without it. ' +
        'Its reason, as recorded: “no export delivered within 3600 s”';
      const text =
        `recon: the nightly run of 2026-11-24 failed: ${detail}. Its reconciliation: ` +
        `\`recon report --run ${reconciliationRunId}\`. See \`recon runs\` (nightly run ${nightlyRunId}) for every ` +
        'batch and reason.';
      expect(request!.body).toEqual({
        text,
        title: 'recon: the nightly run of 2026-11-24 failed',
        cause: 'nightly_failed',
        key: '2026-11-24',
        nightlyDate: '2026-11-24',
        runId: nightlyRunId,
        state: 'failed',
        detail,
        reconciliationRunId,
        raisedAt: at(5 * HOUR + 60_000).toISOString(),
        alertId: expect.stringMatching(/^\d+$/),
        source: 'recon',
      });

      expect(mail.messages).toHaveLength(1);
      const [message] = mail.messages;
      expect(message!.to).toEqual(['ops@shop.example', 'finance@shop.example']);
      expect(message!.from).toBe('recon@localhost');
      expect(message!.mail.subject).toBe('recon: the nightly run of 2026-11-24 failed');
      expect(message!.mail.text).toContain(text);
      expect(message!.mail.text).toContain('cause: nightly_failed\n');
      expect(message!.mail.text).toContain(`runId: ${nightlyRunId}\n`);
      expect(logs()).toEqual([
        'alert raised: recon: the nightly run of 2026-11-24 failed',
        expect.stringMatching(/^alert \d+ delivered: recon: the nightly run of 2026-11-24 failed$/),
      ]);

      // Checks later, as every minute: the alert exists and was delivered, so nothing more is sent.
      expect(await check(at(5 * HOUR + 120_000))).toEqual({ raised: 0, delivered: 0, failed: 0, givenUp: 0 });
      expect(await check(at(20 * HOUR))).toEqual({ raised: 0, delivered: 0, failed: 0, givenUp: 0 });
      expect(webhook.requests).toHaveLength(1);
      expect(mail.messages).toHaveLength(1);
      expect(await alertRows()).toEqual([
        expect.objectContaining({
          cause: 'nightly_failed',
          key: '2026-11-24',
          attempts: 1,
          webhook_delivered_at: at(5 * HOUR + 60_000),
          email_delivered_at: at(5 * HOUR + 60_000),
          last_error: null,
        }),
      ]);
    },
  );

  it.skipIf(skip)(
    'two checks at once, on two connections: the second, run while the first is sending, sends nothing',
    async () => {
      await insertRun({ date: '2026-11-24', state: 'failed', failure: GIVEN_UP, finishedAt: at(5 * HOUR) });
      // PGlite has one connection in one process: there, the two checks share it, as two parts of one process would.
      const second: Database =
        backend === 'postgres'
          ? await openDatabase({ databaseUrl: testDb.env.DATABASE_URL!, dataDir: '/nonexistent' })
          : testDb.database;
      try {
        const held = webhook.holdNext();
        const first = check(at(6 * HOUR));
        await held.arrived;
        // The first check is mid-send, its POST held unanswered: the second finds the alert raised and claimed.
        expect(await check(at(6 * HOUR), undefined, second.db)).toEqual({
          raised: 0,
          delivered: 0,
          failed: 0,
          givenUp: 0,
        });
        expect(webhook.requests).toHaveLength(0);
        held.release();
        expect(await first).toEqual({ raised: 1, delivered: 1, failed: 0, givenUp: 0 });
      } finally {
        if (second !== testDb.database) await second.close();
      }
      expect(webhook.requests).toHaveLength(1);
      expect(mail.messages).toHaveLength(1);
    },
  );

  it.skipIf(skip)(
    'a webhook that answers 500 gets the alert again after a backoff; the e-mail delivered is not sent twice',
    async () => {
      await webhook.close();
      webhook = await startWebhookReceiver([500]);
      await insertRun({ date: '2026-11-24', state: 'failed', failure: GIVEN_UP, finishedAt: at(5 * HOUR) });
      const first = at(6 * HOUR);
      expect(await check(first)).toEqual({ raised: 1, delivered: 0, failed: 1, givenUp: 0 });
      expect(webhook.requests.map((request) => request.status)).toEqual([500]);
      expect(mail.messages).toHaveLength(1);
      const [failed] = await alertRows();
      const origin = new URL(webhook.url).origin;
      expect(failed).toMatchObject({
        attempts: 1,
        webhook_delivered_at: null,
        email_delivered_at: first,
        last_error: `webhook ${origin}/… answered HTTP 500`,
      });
      // The first retry waits 15-30 s (30 s, half of it jittered).
      const retryAt = failed!.next_attempt_at.getTime() - first.getTime();
      expect(retryAt).toBeGreaterThanOrEqual(ALERT_RETRY.baseDelayMs / 2);
      expect(retryAt).toBeLessThanOrEqual(ALERT_RETRY.baseDelayMs);
      expect(logs().at(-1)).toMatch(
        new RegExp(
          `^alert \\d+ not delivered \\(recon: the nightly run of 2026-11-24 failed\\), try 1 of 20, again from .*: webhook ${origin}/… answered HTTP 500$`,
        ),
      );
      expect(logStream.text()).not.toContain(WEBHOOK_TOKEN);

      // Not before its time.
      expect(await check(new Date(first.getTime() + 10_000))).toMatchObject({ delivered: 0, failed: 0 });
      expect(webhook.requests).toHaveLength(1);

      expect(await check(new Date(first.getTime() + HOUR))).toEqual({ raised: 0, delivered: 1, failed: 0, givenUp: 0 });
      expect(webhook.requests.map((request) => request.status)).toEqual([500, 200]);
      expect(webhook.requests[1]!.body['text']).toBe(webhook.requests[0]!.body['text']);
      expect(mail.messages).toHaveLength(1);
      expect(await alertRows()).toEqual([
        expect.objectContaining({
          attempts: 2,
          webhook_delivered_at: new Date(first.getTime() + HOUR),
          email_delivered_at: first,
        }),
      ]);
    },
  );

  it.skipIf(skip)(
    'a receiver that refuses the connection, and a relay that refuses the login: recorded without a secret, tried again',
    async () => {
      const { baseUrl } = await refusingBaseUrl();
      const webhookUrl = `${baseUrl}/hooks/${WEBHOOK_TOKEN}`;
      const badLogin = mail.url.replace(mail.password, 'wrong-pa55word');
      await insertRun({ date: '2026-11-24', state: 'failed', failure: GIVEN_UP, finishedAt: at(5 * HOUR) });
      expect(await check(at(6 * HOUR), { RECON_ALERT_WEBHOOK: webhookUrl, RECON_SMTP_URL: badLogin })).toMatchObject({
        raised: 1,
        failed: 1,
      });
      const [row] = await alertRows();
      expect(row!.last_error).toMatch(
        new RegExp(`^webhook ${baseUrl}/…: connection refused; SMTP relay 127\\.0\\.0\\.1:\\d+: EAUTH: 535 `),
      );
      for (const text of [row!.last_error!, logStream.text()]) {
        expect(text).not.toContain(WEBHOOK_TOKEN);
        expect(text).not.toContain('wrong-pa55word');
      }
      expect(row!.next_attempt_at.getTime()).toBeGreaterThan(at(6 * HOUR).getTime());
      expect(row).toMatchObject({ webhook_delivered_at: null, email_delivered_at: null, given_up_at: null });
    },
  );

  it.skipIf(skip)(
    'a receiver that never answers and a relay that never greets: each send cut at its timeout',
    async () => {
      // Takes the connection and says nothing: no SMTP greeting ever comes.
      const silent = net.createServer(() => {});
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const relayPort = (silent.address() as net.AddressInfo).port;
      const held = webhook.holdNext();
      try {
        await insertRun({ date: '2026-11-24', state: 'failed', failure: GIVEN_UP, finishedAt: at(5 * HOUR) });
        const started = Date.now();
        const result = await checkAlerts(db, {
          ...options(() => at(6 * HOUR), { RECON_SMTP_URL: `smtp://127.0.0.1:${relayPort}` }),
          webhookTimeoutMs: 300,
          smtpTimeoutMs: 300,
        });
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(result).toMatchObject({ raised: 1, failed: 1 });
        const [row] = await alertRows();
        expect(row!.last_error).toMatch(
          new RegExp(
            `^webhook ${new URL(webhook.url).origin}/…: no answer within 300 ms; SMTP relay 127\\.0\\.0\\.1:${relayPort}: (ETIMEDOUT|not done within 300 ms)`,
          ),
        );
      } finally {
        held.release();
        silent.close();
        silent.unref();
      }
    },
  );

  it.skipIf(skip)('gives an alert up after its last try, or untried once a day old, and says so', async () => {
    const { baseUrl } = await refusingBaseUrl();
    const refusing = { RECON_ALERT_WEBHOOK: `${baseUrl}/hooks/${WEBHOOK_TOKEN}` };
    await insertRun({ date: '2026-11-24', state: 'failed', failure: GIVEN_UP, finishedAt: at(5 * HOUR) });
    await check(at(6 * HOUR), refusing);
    await db
      .updateTable('recon.alerts')
      .set({ attempts: ALERT_RETRY.attempts - 1, next_attempt_at: at(6 * HOUR) })
      .execute();
    expect(await check(at(7 * HOUR), refusing)).toMatchObject({ failed: 1, givenUp: 1 });
    expect(await alertRows()).toEqual([
      expect.objectContaining({ attempts: ALERT_RETRY.attempts, given_up_at: at(7 * HOUR) }),
    ]);
    expect(logs().at(-1)).toMatch(
      /^alert \d+ given up after 20 tries \(recon: the nightly run of 2026-11-24 failed\): /,
    );
    // Given up is final: a receiver that works again is not sent it.
    expect(await check(at(9 * HOUR))).toMatchObject({ delivered: 0, failed: 0 });
    expect(webhook.requests).toHaveLength(0);

    // An alert raised while no channel could take it, more than a day ago, is given up untried.
    await raiseAlert(
      db,
      { cause: 'callback_unreachable', key: 'stale', title: 'stale', text: 'stale', detail: 'stale' },
      at(-25 * HOUR),
    );
    expect(await check(at(9 * HOUR))).toMatchObject({ delivered: 0, givenUp: 1 });
    expect(webhook.requests).toHaveLength(0);
    expect(logs().at(-1)).toMatch(/^alert \d+ given up, not delivered within a day: stale$/);
  });

  it.skipIf(skip)(
    'a run the state machine failed (the service refused its export): the alerts say what recon recorded',
    async () => {
      await insertOrders(testDb.database, [
        { id: 'ALERT-1', amount: 1000n, status: 'paid', createdAt: at(-48 * HOUR) },
      ]);
      const refusing = await startServer(answering(REFUSED));
      try {
        const { run } = await startNightlyRun(db, '2026-11-24', SLOT);
        const deps: NightlyDependencies = {
          database: testDb.database,
          accounts: [
            {
              identifier: 'ALERTS',
              client: createPaymentClient({
                baseUrl: refusing.baseUrl,
                identifier: 'ALERTS',
                secret: SERVICE_SECRET,
                timeoutMs: 2_000,
                retry: { attempts: 1, baseDelayMs: 10 },
              }),
            },
          ],
          nightly: loadConfig({}).nightly,
          reconcile: loadConfig({}).reconcile,
          callbackBaseUrl: 'http://127.0.0.1:9/',
          now: () => SLOT,
          scheduleAdvance: async () => {},
        };
        expect(await advanceNightlyRun(deps, run.nightlyRunId)).toBe('failed');
      } finally {
        await refusing.close();
      }
      const finished = await db
        .selectFrom('recon.nightly_runs')
        .select(['nightly_run_id', 'failure', 'finished_at', 'reconciliation_run_id'])
        .executeTakeFirstOrThrow();
      expect(await check(new Date(finished.finished_at!.getTime() + 60_000))).toMatchObject({
        raised: 2,
        delivered: 2,
      });
      const bodies = webhook.requests.map((request) => request.body);
      expect(bodies.map((body) => body['cause'])).toEqual(['nightly_failed', 'nightly_suspect']);
      expect(bodies[0]).toMatchObject({
        runId: String(finished.nightly_run_id),
        state: 'failed',
        detail: expect.stringMatching(
          /^1 export batch given up \(batch 1\), its orders reconciled without it\. Its reason, as recorded: “getTransactions answered EXECCODE 1003/,
        ),
        text: expect.stringMatching(
          /^recon: the nightly run of 2026-11-24 failed: 1 export batch given up \(batch 1\), its orders reconciled without it\. Its reason, as recorded: “getTransactions answered EXECCODE 1003/,
        ),
      });
      expect(bodies[1]!['text']).toBe(
        'recon: the nightly run of 2026-11-24 is SUSPECT: 1 order in scope expects money but no transaction at all ' +
          'was found for the scope: the exports are probably missing (not ingested yet?), so this run proves nothing. ' +
          `See \`recon report --run ${finished.reconciliation_run_id}\` (nightly run ${finished.nightly_run_id}).`,
      );
      expect(mail.messages.map((message) => message.mail.subject)).toEqual([
        'recon: the nightly run of 2026-11-24 failed',
        'recon: the nightly run of 2026-11-24 is SUSPECT',
      ]);
    },
  );

  it.skipIf(skip)('a suspect run: its own alert, saying why its verdicts prove nothing', async () => {
    const reason =
      'orders in scope expect money but no transaction at all was found: this run proves nothing (an empty export, or the wrong account?)';
    const { nightlyRunId, reconciliationRunId } = await insertRun({
      date: '2026-11-24',
      state: 'reconciled',
      finishedAt: at(HOUR),
      suspectReason: reason,
    });
    // A clean run beside it gives nothing.
    await insertRun({ date: '2026-11-23', state: 'reconciled', finishedAt: at(-23 * HOUR) });
    expect(await check(at(2 * HOUR), { RECON_ALERT_EMAIL: undefined, RECON_SMTP_URL: undefined })).toMatchObject({
      raised: 1,
      delivered: 1,
    });
    expect(webhook.requests.map((request) => request.body)).toEqual([
      expect.objectContaining({
        cause: 'nightly_suspect',
        nightlyDate: '2026-11-24',
        runId: nightlyRunId,
        state: 'reconciled',
        detail: reason,
        reconciliationRunId,
        title: 'recon: the nightly run of 2026-11-24 is SUSPECT',
        text:
          `recon: the nightly run of 2026-11-24 is SUSPECT: ${reason}. ` +
          `See \`recon report --run ${reconciliationRunId}\` (nightly run ${nightlyRunId}).`,
      }),
    ]);
    // Webhook only: no e-mail.
    expect(mail.messages).toHaveLength(0);
  });

  it.skipIf(skip)(
    'a run not reconciled RECON_ALERT_LATE_HOURS after its slot is late, not a minute before',
    async () => {
      const { nightlyRunId } = await insertRun({ date: '2026-11-24', state: 'waiting', startedAt: SLOT });
      for (const [batch, state] of [
        [1, 'ingested'],
        [2, 'ingested'],
        [3, 'requested'],
      ] as const) {
        await db
          .insertInto('recon.export_requests')
          .values({
            token: `late${batch}tok`,
            nightly_run_id: nightlyRunId,
            order_ids: [`O${batch}`],
            compression: 'gzip',
            expires_at: at(24 * HOUR),
            batch,
            attempt: 1,
            state,
          })
          .execute();
      }
      const lateHours = { RECON_ALERT_LATE_HOURS: '4' };
      expect(await check(at(4 * HOUR - 60_000), lateHours)).toMatchObject({ raised: 0 });
      expect(webhook.requests).toHaveLength(0);
      expect(await check(at(4 * HOUR), lateHours)).toMatchObject({ raised: 1, delivered: 1 });
      expect(webhook.requests.map((request) => request.body)).toEqual([
        expect.objectContaining({
          cause: 'nightly_late',
          title: 'recon: the nightly run of 2026-11-24 is late',
          text:
            'recon: the nightly run of 2026-11-24 is late: not reconciled 4 h after 2026-11-24 02:30 Europe/Paris. ' +
            'It is waiting; export requests: 2 ingested, 1 requested. Is a worker running, and do the exports arrive? ' +
            `See \`recon runs\` (nightly run ${nightlyRunId}).`,
          runId: nightlyRunId,
          state: 'waiting',
          detail: 'waiting; export requests: 2 ingested, 1 requested',
        }),
      ]);
      expect(mail.messages.map((message) => message.mail.subject)).toEqual([
        'recon: the nightly run of 2026-11-24 is late',
      ]);

      // Late once: the run that then fails is its own alert.
      expect(await check(at(5 * HOUR), lateHours)).toMatchObject({ raised: 0 });
      await db
        .updateTable('recon.nightly_runs')
        .set({ state: 'failed', failure: GIVEN_UP, finished_at: at(6 * HOUR) })
        .execute();
      expect(await check(at(6 * HOUR), lateHours)).toMatchObject({ raised: 1 });
      expect(webhook.requests.map((request) => request.body['cause'])).toEqual(['nightly_late', 'nightly_failed']);
    },
  );

  it.skipIf(skip)(
    'a slot that passed with no run at all is late, once recon has made a nightly run before',
    async () => {
      // A new install: no run was ever made, so no slot is missing one.
      expect(await check(at(7 * HOUR))).toMatchObject({ raised: 0 });
      await insertRun({ date: '2026-11-23', state: 'reconciled', finishedAt: at(-22 * HOUR) });
      // By default 6 hours after the slot of 2026-11-24.
      expect(await check(at(6 * HOUR - 1000))).toMatchObject({ raised: 0 });
      expect(await check(at(6 * HOUR))).toMatchObject({ raised: 1, delivered: 1 });
      expect(webhook.requests.map((request) => request.body)).toEqual([
        expect.objectContaining({
          cause: 'nightly_late',
          key: '2026-11-24',
          runId: null,
          state: 'not started',
          text:
            'recon: the nightly run of 2026-11-24 is late: not reconciled 6 h after 2026-11-24 02:30 Europe/Paris, ' +
            'and no run was started for it (was recon serve down then?). Start it with `recon nightly --date 2026-11-24`.',
        }),
      ]);
      // Started by hand then: the same alert, not another.
      await insertRun({ date: '2026-11-24', state: 'waiting', startedAt: at(7 * HOUR) });
      expect(await check(at(14 * HOUR))).toMatchObject({ raised: 0 });
      expect(webhook.requests).toHaveLength(1);
    },
  );

  it.skipIf(skip)(
    'a callback base the probe finds unreachable: one alert per base and day, however many probes fail',
    async () => {
      const { baseUrl } = await refusingBaseUrl();
      const base = `${baseUrl}/`;
      const probe = (when: Date) => probeCallbackBase(db, base, { reason: 'serve start', now: () => when });
      expect(await probe(at(HOUR))).toMatchObject({ reachable: false });
      expect(await check(at(HOUR + 60_000))).toMatchObject({ raised: 1, delivered: 1 });
      const [body] = webhook.requests.map((request) => request.body);
      expect(body).toMatchObject({
        cause: 'callback_unreachable',
        key: `${base} 2026-11-24`,
        title: `recon: the callback base ${base} does not reach recon`,
        callbackBaseUrl: base,
        probeReason: 'serve start',
        probedAt: at(HOUR).toISOString(),
        runId: null,
        detail: expect.stringMatching(/^“cannot connect: connect ECONNREFUSED 127\.0\.0\.1:\d+”$/),
      });
      expect(body!['text']).toBe(
        `recon: the callback base ${base} does not reach recon's receiver (probed at recon serve start): ` +
          `${String(body!['detail'])}. The service's exports cannot arrive: check RECON_CALLBACK_BASE_URL and what ` +
          'routes it to recon serve.',
      );
      // Failing again the same day (in RECON_SCHEDULE_TIMEZONE): the same alert.
      await probe(at(10 * HOUR));
      expect(await check(at(10 * HOUR + 60_000))).toMatchObject({ raised: 0 });
      // The next day: a new one.
      await probe(at(24 * HOUR));
      expect(await check(at(24 * HOUR + 60_000))).toMatchObject({ raised: 1 });
      expect(webhook.requests.map((request) => request.body['key'])).toEqual([
        `${base} 2026-11-24`,
        `${base} 2026-11-25`,
      ]);
      // A base that reaches recon gives none.
      await db.updateTable('recon.callback_probes').set({ reachable: true }).execute();
      await db.deleteFrom('recon.alerts').execute();
      expect(await check(at(24 * HOUR + 120_000))).toMatchObject({ raised: 0 });
    },
  );

  it.skipIf(skip)('the callback probe raises through raiseAlert: twice raised, once sent', async () => {
    const alert = {
      cause: 'callback_unreachable' as const,
      key: 'https://rc.shop.example/ 2026-11-24',
      title: 'recon: the callback base https://rc.shop.example/ is unreachable',
      text: 'recon: the callback base https://rc.shop.example/ is unreachable from outside: connection refused. The service cannot deliver exports.',
      detail: 'connection refused',
      fields: { callbackBaseUrl: 'https://rc.shop.example/' },
    };
    expect(await raiseAlert(db, alert, at(HOUR))).toEqual({ raised: true, alertId: expect.stringMatching(/^\d+$/) });
    expect(await raiseAlert(db, alert, at(HOUR + 1000))).toEqual({ raised: false, alertId: undefined });
    expect(await check(at(HOUR + 2000))).toEqual({ raised: 0, delivered: 1, failed: 0, givenUp: 0 });
    expect(webhook.requests.map((request) => request.body)).toEqual([
      expect.objectContaining({
        text: alert.text,
        cause: 'callback_unreachable',
        key: alert.key,
        detail: 'connection refused',
        callbackBaseUrl: 'https://rc.shop.example/',
        runId: null,
        nightlyDate: null,
        raisedAt: at(HOUR).toISOString(),
      }),
    ]);
    expect(mail.messages.map((message) => message.mail.subject)).toEqual([alert.title]);
  });

  it.skipIf(skip)('no channel set: no alert is looked for and nothing is sent', async () => {
    await insertRun({ date: '2026-11-24', state: 'failed', failure: GIVEN_UP, finishedAt: at(5 * HOUR) });
    const none = { RECON_ALERT_WEBHOOK: undefined, RECON_ALERT_EMAIL: undefined, RECON_SMTP_URL: undefined };
    expect(await check(at(6 * HOUR), none)).toEqual({ raised: 0, delivered: 0, failed: 0, givenUp: 0 });
    expect(await alertRows()).toEqual([]);
    // E-mail only: the alert is mailed, the webhook (not set) gets nothing.
    expect(await check(at(6 * HOUR), { RECON_ALERT_WEBHOOK: undefined })).toMatchObject({ raised: 1, delivered: 1 });
    expect(mail.messages).toHaveLength(1);
    expect(webhook.requests).toHaveLength(0);
  });

  it.skipIf(skip)('never a secret in what is sent: the service secret in a failure is taken out', async () => {
    await insertRun({
      date: '2026-11-24',
      state: 'failed',
      failure: `getTransactions answered EXECCODE 1003 for HASH key ${SERVICE_SECRET}`,
      finishedAt: at(5 * HOUR),
    });
    await check(at(6 * HOUR));
    const sent = [
      JSON.stringify(webhook.requests[0]!.body),
      mail.messages[0]!.mail.text!,
      mail.messages[0]!.mail.subject!,
    ];
    for (const text of sent) {
      expect(text).not.toContain(SERVICE_SECRET);
      expect(text).not.toContain(WEBHOOK_TOKEN);
      expect(text).not.toContain(mail.password);
    }
    expect(webhook.requests[0]!.body['detail']).toBe(
      'Its reason, as recorded: “getTransactions answered EXECCODE 1003 for HASH key [redacted]”',
    );
  });

  it.skipIf(skip)(
    'a run failed by a hostile header: no mention or link syntax anywhere, and one short quote, not one per batch',
    async () => {
      // What a stranger POSTed to the run's tokens as a csv header, and what quarantine recorded for each batch.
      const header =
        '<!channel> @here <a href="http://evil.example/">click</a> [click](http://evil.example/md) ' +
        '<http://evil.example/x|details> <@U024BE7LH> <!subteam^S1|ops> &lt;!everyone&gt; @channel ' +
        'www.evil.example \u202e\u200bhidden\ntext '.repeat(3) +
        ';B';
      const givenUp = Array.from({ length: 49 }, (_, index) => ({
        batch: index + 1,
        failure: `delivery ${index + 7} quarantined after 2 attempts failing the same way: delivery-${index + 7}.csv: line 1: unknown columns ${header}`,
      }));
      const failure = `49 export batch(es) given up, their orders reconciled without them: ${givenUp.map((b) => `batch ${b.batch} (${b.failure})`).join('; ')}`;
      expect(failure.length).toBeGreaterThan(18_000);
      await insertRun({ date: '2026-11-24', state: 'failed', failure, givenUp, finishedAt: at(5 * HOUR) });
      expect(await check(at(6 * HOUR))).toMatchObject({ raised: 1, delivered: 1 });

      const body = webhook.requests[0]!.body;
      const mailText = mail.messages[0]!.mail.text!;
      expect(mail.messages[0]!.mail.html).toBe(false);
      for (const sent of [String(body['text']), String(body['detail']), mailText, JSON.stringify(body)]) {
        for (const syntax of [
          '<',
          '>',
          '@here',
          '@channel',
          '@everyone',
          '<!',
          '<@',
          '<a ',
          '](',
          'http://evil',
          'www.evil',
        ])
          expect(sent, syntax).not.toContain(syntax);
        expect(sent).not.toMatch(/[\u202e\u200b\n]hidden/);
      }
      const text = String(body['text']);
      // One quote of at most QUOTE_CHARS, in recon's own sentence.
      const quotes = [...text.matchAll(/“([^”]*)”/g)].map((match) => match[1]!);
      expect(quotes).toHaveLength(1);
      expect(Array.from(quotes[0]!).length).toBeLessThanOrEqual(161);
      expect(text).toMatch(
        /^recon: the nightly run of 2026-11-24 failed: 49 export batches given up \(batches 1, 2, 3, 4, 5 and 44 more\), their orders reconciled without them\. The first one's reason, as recorded: “delivery 7 quarantined after 2 attempts failing the same way: delivery-7\.csv: line 1: unknown columns ‹!channel› ＠here ‹a href=/,
      );
      expect(text).toMatch(/…” \(\d+ more characters\) \(and 48 other reason\(s\)\)\./);
      expect(text.length).toBeLessThan(700);
      // The e-mail quotes it once too: the text, then the fields without the detail the text holds.
      expect(mailText.split('click').length - 1).toBe(1);
      expect(mailText.length).toBeLessThan(1_200);
    },
  );

  it.skipIf(skip)(
    'a webhook URL with credentials: sent as Basic authorization without them in the URL, never logged',
    async () => {
      const url = new URL(webhook.url);
      url.username = 'recon-hooks';
      url.password = 'pa55:w@rd';
      const withCredentials = url.href;
      expect(withCredentials).toContain('recon-hooks:pa55%3Aw%40rd@');
      await insertRun({ date: '2026-11-24', state: 'failed', givenUp: BATCH_3, finishedAt: at(5 * HOUR) });
      expect(await check(at(6 * HOUR), { RECON_ALERT_WEBHOOK: withCredentials })).toMatchObject({
        raised: 1,
        delivered: 1,
      });
      const [request] = webhook.requests;
      expect(request!.path).toBe(`/hooks/${WEBHOOK_TOKEN}?channel=ops`);
      expect(request!.authorization).toBe(`Basic ${Buffer.from('recon-hooks:pa55:w@rd').toString('base64')}`);
      expect(logStream.text()).not.toContain('pa55');
      expect(JSON.stringify(request!.body)).not.toContain('pa55');
      // Without credentials, no Authorization header at all.
      await db.deleteFrom('recon.alerts').execute();
      await check(at(7 * HOUR));
      expect(webhook.requests[1]!.authorization).toBeUndefined();
    },
  );

  it.skipIf(skip)('alerts are sent at once: a webhook that hangs on one holds no other up', async () => {
    await insertRun({ date: '2026-11-23', state: 'failed', givenUp: BATCH_3, finishedAt: at(-19 * HOUR) });
    await insertRun({ date: '2026-11-24', state: 'failed', givenUp: BATCH_3, finishedAt: at(5 * HOUR) });
    const held = webhook.holdNext();
    const checking = check(at(6 * HOUR), { RECON_ALERT_EMAIL: undefined, RECON_SMTP_URL: undefined });
    await held.arrived;
    // The first alert's POST is held unanswered: the second arrives and is answered all the same.
    await webhook.requestCount(1);
    expect(webhook.requests.map((request) => request.body['nightlyDate'])).toHaveLength(1);
    held.release();
    expect(await checking).toMatchObject({ raised: 2, delivered: 2 });
    expect(webhook.requests.map((request) => request.body['nightlyDate']).sort()).toEqual(['2026-11-23', '2026-11-24']);
  });

  it.skipIf(skip)(
    'a drain waits its bound for a send, no more: the alert not sent is left pending, and the next process sends it',
    async () => {
      await insertRun({ date: '2026-11-24', state: 'failed', givenUp: BATCH_3, finishedAt: at(5 * HOUR) });
      const held = webhook.holdNext();
      const monitor = startAlertMonitor(db, {
        ...options(() => at(6 * HOUR), { RECON_ALERT_EMAIL: undefined, RECON_SMTP_URL: undefined }),
        // Far longer than the test: only the drain's bound can end this send.
        webhookTimeoutMs: 600_000,
        drainMs: 100,
      });
      try {
        await held.arrived;
        const stopping = Date.now();
        await monitor.stop();
        expect(Date.now() - stopping).toBeLessThan(5_000);
      } finally {
        held.release();
      }
      const [row] = await alertRows();
      expect(row).toMatchObject({
        attempts: 0,
        webhook_delivered_at: null,
        given_up_at: null,
        last_error: null,
        next_attempt_at: at(6 * HOUR),
      });
      expect(logs().at(-1)).toMatch(
        /^alert \d+ not sent before the drain, left pending for the next process: recon: the nightly run of 2026-11-24 failed$/,
      );
      // The next process's first check sends it, without waiting for a lease or a backoff.
      const delivered = webhook.requests.length;
      expect(
        await check(at(6 * HOUR + 1000), { RECON_ALERT_EMAIL: undefined, RECON_SMTP_URL: undefined }),
      ).toMatchObject({ raised: 0, delivered: 1 });
      expect(webhook.requests).toHaveLength(delivered + 1);
      expect(await alertRows()).toEqual([expect.objectContaining({ attempts: 1, given_up_at: null })]);
    },
  );

  it.skipIf(skip)('keeps alerts 30 days: older ones are deleted by the check', async () => {
    const raise = (key: string, daysAgo: number) =>
      raiseAlert(
        db,
        { cause: 'callback_unreachable', key, title: key, text: key, detail: key },
        at(-daysAgo * 24 * HOUR),
      );
    await raise('31 days old', 31);
    await raise('29 days old', 29);
    await check(at(0), { RECON_ALERT_WEBHOOK: undefined });
    expect((await alertRows()).map((row) => row.key)).toEqual(['29 days old']);
  });
});

/**
 * Two processes raising one alert at the same instant: forced, not hoped for. The test holds the alert's row in an
 * open transaction, so both checks' inserts wait on it, and lets go once pg_stat_activity shows both waiting.
 */
describe.skipIf(!hasPostgres)('two checks racing to raise one alert (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let webhook: WebhookReceiver;
  let mail: MailReceiver;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    webhook = await startWebhookReceiver();
    mail = await startMailReceiver();
  });
  afterAll(async () => {
    await webhook?.close();
    await mail?.close();
    await testDb?.drop();
  });

  it('makes one alert, one POST and one e-mail', async () => {
    const databaseUrl = testDb.env.DATABASE_URL!;
    await testDb.database.db
      .insertInto('recon.nightly_runs')
      .values({
        run_date: '2026-11-24',
        as_of: SLOT,
        started_at: SLOT,
        state: 'failed',
        failure: 'batch 1 given up',
        finished_at: at(HOUR),
      })
      .execute();
    const held = await holdTransaction(databaseUrl, [
      `INSERT INTO recon.alerts (cause, key, title, text) VALUES ('nightly_failed', '2026-11-24', 'held', 'held')`,
    ]);
    const handles: Database[] = [];
    try {
      for (const index of [0, 1])
        handles.push(
          await openDatabase({
            databaseUrl: withApplicationName(databaseUrl, `alert-check-${index}`),
            dataDir: '/nonexistent',
          }),
        );
      const config = loadConfig({
        RECON_ALERT_WEBHOOK: webhook.url,
        RECON_ALERT_EMAIL: RECIPIENTS,
        RECON_SMTP_URL: mail.url,
      });
      const checks = handles.map((handle) =>
        checkAlerts(handle.db, {
          alerts: config.alerts,
          ...SCHEDULE,
          secrets: alertSecrets(config),
          now: () => at(2 * HOUR),
        }),
      );
      const waiting = await waitUntil('both checks waiting on the alert', async () => {
        const found = (await lockWaiters(testDb.database.db)).filter((w) =>
          w.applicationName.startsWith('alert-check-'),
        );
        return found.length === 2 && found;
      });
      for (const waiter of waiting) expect(waiter.query).toMatch(/^insert into "recon"\."alerts"/);
      await held.release();
      const results = await Promise.all(checks);
      expect(results.map((result) => result.raised).sort()).toEqual([0, 1]);
      expect(results.map((result) => result.delivered).sort()).toEqual([0, 1]);
    } finally {
      await held.release();
      for (const handle of handles) await handle.close();
    }
    const { rows } = await sql<{ count: number }>`SELECT count(*)::integer AS count FROM recon.alerts`.execute(
      testDb.database.db,
    );
    expect(rows[0]!.count).toBe(1);
    expect(webhook.requests).toHaveLength(1);
    expect(mail.messages).toHaveLength(1);
  });
});
