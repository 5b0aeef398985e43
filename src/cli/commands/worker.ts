import { loadConfig } from '../../config/config.ts';
import { migrate } from '../../db/migrate.ts';
import { openDatabase } from '../../db/open-database.ts';
import { startNightlyWorker } from '../../nightly/nightly-worker.ts';
import { serviceClient } from '../../client/service-client.ts';
import { openJobQueue } from '../../queue/job-queue.ts';
import { requireCallbackBase } from '../../nightly/callback-base.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

const USAGE = `usage: recon worker

Takes jobs off recon's queue (in the database) until SIGTERM or SIGINT: ingests delivered exports and moves
nightly runs on (requests, timeouts, the reconciliation). Run as many as you like, on as many machines: they
share the work. SIGTERM drains: no new job is taken, the current one finishes, then exit 0.

settings: DATABASE_URL (or the embedded database under RECON_DATA_DIR), RECON_SERVICE_URL, RECON_IDENTIFIER,
RECON_SECRET, RECON_CALLBACK_BASE_URL, RECON_EXPORT_*, RECON_LOOKBACK_DAYS, RECON_TIMEZONE (see the README).
`;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, { help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const config = loadConfig(ctx.env);
  const client = serviceClient(config.service);
  const callbackBaseUrl = requireCallbackBase(config.serve);
  const log = (message: string) => ctx.stderr.write(`recon worker: ${message}\n`);
  const database = await openDatabase(config);
  try {
    await migrate(database);
    const boss = await openJobQueue(database, { heartbeatSeconds: config.queue.heartbeatSeconds, onError: log });
    await startNightlyWorker(boss, database, {
      client,
      callbackBaseUrl,
      nightly: config.nightly,
      reconcile: config.reconcile,
      // Nightly requests ask for their dates in UTC (advance-nightly-run.ts): read them so.
      ingest: { timezone: 'UTC', limits: config.limits },
      log,
    });
    log('working');
    await untilAborted(ctx.signal);
    log('draining');
    await boss.stop({ graceful: true, close: false, timeout: 60_000 });
    return EXIT.ok;
  } finally {
    await database.close();
  }
}

export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
