import type { PaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { startReconServices, type ReconServicesOptions } from '../../pipelines/nightly/recon-services.ts';
import { serviceClient } from '../../src/client/service-client.ts';
import { requireCallbackBase } from '../../src/nightly/callback-base.ts';
import { removeStaleTempFolders } from '../../src/temp/temp-folder.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { serviceLogger } from '../service-logger.ts';
import { EXIT } from '../exit-codes.ts';

const USAGE = `usage: recon worker

Takes jobs off recon's queue (in the database) until SIGTERM or SIGINT: ingests delivered exports and moves
nightly runs on (requests, timeouts, the reconciliation). Run as many as you like, on as many machines: they
share the work. SIGTERM drains: no new job is taken, the current one finishes, then exit 0. It logs on stdout as
recon serve does: one JSON object a line (a readable line each on a terminal) at RECON_LOG_LEVEL (info).

settings: DATABASE_URL (or the embedded database under RECON_DATA_DIR), RECON_SERVICE_URL, RECON_IDENTIFIER,
RECON_SECRET, RECON_CALLBACK_BASE_URL, RECON_EXPORT_*, RECON_LOOKBACK_DAYS, RECON_TIMEZONE, RECON_LOG_LEVEL
(see docs/configuration.md).
`;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, { help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const config = loadConfig(ctx.env);
  const log = serviceLogger(ctx, config, 'recon worker');
  const client = serviceClient(config.service, log);
  const callbackBaseUrl = requireCallbackBase(config.serve);
  const database = await openDatabase(config);
  try {
    await removeStaleTempFolders();
    await migrate(database);
    const services = await startReconServices({
      database,
      heartbeatSeconds: config.queue.heartbeatSeconds,
      log,
      callbackBaseUrl,
      worker: workerSettings(config, client),
    });
    log.info({ callbackBaseUrl }, 'working');
    await untilAborted(ctx.signal);
    log.info('draining');
    await services.close({ drainMs: config.queue.drainSeconds * 1000 });
    log.info('stopped');
    return EXIT.ok;
  } finally {
    await database.close();
  }
}

/** A worker's settings from the configuration, as `recon serve` and `recon worker` run it. */
export function workerSettings(config: Config, client: PaymentClient): ReconServicesOptions['worker'] {
  return {
    client,
    nightly: config.nightly,
    reconcile: config.reconcile,
    // Nightly requests ask for their dates in UTC (advance-nightly-run.ts): read them so.
    ingest: { timezone: 'UTC', limits: config.limits },
  };
}

export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
