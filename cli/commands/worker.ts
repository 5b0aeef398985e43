import { startAdminListener, type AdminListener } from '../../src/admin/admin-listener.ts';
import { registerServiceRequestMetrics } from '../../src/client/service-request-metrics.ts';
import { loadConfig, requireCallbackBase, type Config } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { startReconServices, type ReconServicesOptions } from '../../pipelines/nightly/recon-services.ts';
import { accountClients, type AccountClient } from '../../src/client/service-client.ts';
import { createMetricsRegistry, type MetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { removeStaleTempFolders } from '../../src/temp/temp-folder.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { serviceLogger, withDatabaseOutageLog } from '../service-logger.ts';
import { EXIT } from '../exit-codes.ts';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';

const USAGE = `usage: recon worker

Takes jobs off recon's queue (in the database) until SIGTERM or SIGINT: ingests delivered exports and moves
nightly runs on (requests, timeouts, the reconciliation). Run as many as you like, on as many machines: they
share the work. Its /healthz and Prometheus /metrics (its jobs, ingests, requests, process) are on the admin
listener, RECON_ADMIN_HOST:RECON_ADMIN_PORT (127.0.0.1:8091; give each process on one host its own port). SIGTERM
drains: /healthz answers 503, no new job is taken, the current one finishes, then exit 0. It logs on stdout as
recon serve does: one JSON object a line (a readable line each on a terminal) at RECON_LOG_LEVEL (info), from
\`working\` then \`admin on URL\` on.

settings: DATABASE_URL (or the embedded database under RECON_DATA_DIR), RECON_SERVICE_URL, RECON_IDENTIFIER,
RECON_SECRET, RECON_CALLBACK_BASE_URL, RECON_EXPORT_*, RECON_LOOKBACK_DAYS, RECON_TIMEZONE, RECON_LOG_LEVEL,
RECON_ADMIN_*
(see docs/configuration.md).
`;

export const OPTIONS = { help: { type: 'boolean', short: 'h' } } as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const config = loadConfig(ctx.env, ['service', 'callbackBase']);
  const database = await openDatabase(config);
  const outage = withDatabaseOutageLog(serviceLogger(ctx, config, 'recon worker'), database);
  const log = outage.log;
  // The worker's own figures: what the database says of the whole deployment is on recon serve's /metrics.
  const metrics = createMetricsRegistry();
  const accounts = accountClients(config.service, log, { onAttempt: registerServiceRequestMetrics(metrics) });
  const callbackBaseUrl = requireCallbackBase(config.serve);
  let admin: AdminListener | undefined;
  try {
    await removeStaleTempFolders();
    await prepareDatabase(database, config, { warn: (line) => log.warn(line) });
    await syncAccounts(database.db, config.service.accounts);
    admin = await startAdminListener({ ...config.admin, metrics, db: database.db });
    const services = await startReconServices({
      database,
      heartbeatSeconds: config.queue.heartbeatSeconds,
      log,
      callbackBaseUrl,
      worker: workerSettings(config, accounts, metrics),
    });
    log.info({ callbackBaseUrl }, 'working');
    log.info({ url: admin.url }, `admin on ${admin.url}`);
    await untilAborted(ctx.signal);
    admin.drain();
    log.info('draining');
    await services.close({ drainMs: config.queue.drainSeconds * 1000 });
    log.info('stopped');
    return EXIT.ok;
  } finally {
    await admin?.close();
    outage.stop();
    await database.close();
  }
}

/** A worker's settings from the configuration, as `recon serve` and `recon worker` run it, counting on `metrics`. */
export function workerSettings(
  config: Config,
  accounts: readonly AccountClient[],
  metrics: MetricsRegistry,
): ReconServicesOptions['worker'] {
  return {
    accounts,
    metrics,
    nightly: config.nightly,
    reconcile: config.reconcile,
    // Nightly requests ask for their dates in UTC (advance-nightly-run.ts): read them so.
    ingest: { timezone: 'UTC', limits: config.limits },
    pollingIntervalSeconds: config.queue.pollMs / 1000,
  };
}

export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
