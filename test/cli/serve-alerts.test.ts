import { dateInZone } from '@recon/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseLogRecords } from '../support/log-records.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { startWebhookReceiver, WEBHOOK_TOKEN, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { startRecon, type RunResult } from './run-recon.ts';

const SERVICE = { RECON_IDENTIFIER: 'ALERTS', RECON_SECRET: 'serve-alerts-secret' };
const HOUR = 3_600_000;

/**
 * `recon serve` runs the alert check when a channel is set: a nightly run that failed an hour ago reaches the
 * webhook without anything else asking for it. Real clock here (the check's own clock is tested in test/alerts).
 */
describe.each(BACKENDS)('recon serve and its alerts, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let webhook: WebhookReceiver;
  const runDate = dateInZone(new Date(), 'Europe/Paris');

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    const finishedAt = new Date(Date.now() - HOUR);
    await testDb.database.db
      .insertInto('recon.nightly_runs')
      .values({
        run_date: runDate,
        as_of: new Date(Date.now() - 2 * HOUR),
        started_at: new Date(Date.now() - 2 * HOUR),
        state: 'failed',
        failure: '1 export batch(es) given up, their orders reconciled without them: batch 1 (refused)',
        finished_at: finishedAt,
      })
      .execute();
    await testDb.close();
  });
  afterAll(async () => testDb?.drop());
  beforeEach(async () => {
    webhook = await startWebhookReceiver();
  });
  afterEach(async () => webhook?.close());

  /** recon serve on a free port until it says where it listens, then `whileUp`, then SIGTERM. */
  async function serve(env: Record<string, string>, whileUp: () => Promise<void>): Promise<RunResult> {
    const { baseUrl } = await refusingBaseUrl();
    const recon = startRecon(['serve'], {
      ...testDb.env,
      ...SERVICE,
      RECON_SERVICE_URL: baseUrl,
      RECON_PORT: '0',
      RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
      ...env,
    });
    await new Promise<void>((resolve, reject) => {
      recon.onStdoutLine(() => resolve());
      void recon.done.then((result) => reject(new Error(`recon serve exited ${result.code}: ${result.stderr}`)));
    });
    try {
      await whileUp();
    } finally {
      recon.child.kill('SIGTERM');
    }
    return recon.done;
  }

  it.skipIf(skip)(
    'without a channel: no alert check, nothing recorded',
    async () => {
      const result = await serve({}, async () => {});
      expect(result.code).toBe(0);
      expect(parseLogRecords(result.stdout).filter((record) => record.msg.includes('alert'))).toEqual([]);
      const database = await testDb.reopen();
      try {
        expect(await database.db.selectFrom('recon.alerts').select('cause').execute()).toEqual([]);
      } finally {
        await testDb.close();
      }
      expect(webhook.requests).toHaveLength(0);
    },
    60_000,
  );

  it.skipIf(skip)(
    'with RECON_ALERT_WEBHOOK: posts the failed run at start, and never prints the webhook whole',
    async () => {
      const result = await serve({ RECON_ALERT_WEBHOOK: webhook.url }, async () => {
        await waitUntil('the alert at the webhook', () => webhook.requests.length > 0);
      });
      expect(result.code).toBe(0);
      // The nightly run's alert (the probe of the callback base, refused here, gives its own at a later check).
      expect(webhook.requests.map((request) => request.body)).toContainEqual(
        expect.objectContaining({
          cause: 'nightly_failed',
          nightlyDate: runDate,
          text: expect.stringMatching(
            new RegExp(`^recon: the nightly run of ${runDate} failed\\. Its reason, as recorded: “1 export batch`),
          ),
        }),
      );
      const origin = new URL(webhook.url).origin;
      const records = parseLogRecords(result.stdout);
      expect(records).toContainEqual(expect.objectContaining({ level: 'info', msg: `alerts to webhook ${origin}/…` }));
      expect(records).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          msg: `alert raised: recon: the nightly run of ${runDate} failed`,
          cause: 'nightly_failed',
          key: runDate,
          alert: expect.stringMatching(/^\d+$/),
        }),
      );
      expect(result.stdout + result.stderr).not.toContain(WEBHOOK_TOKEN);
    },
    60_000,
  );
});
