import { alertSecrets } from '../../src/alerts/alert-secrets.ts';
import { startAlertMonitor, type AlertMonitor } from '../../src/alerts/alert-monitor.ts';
import { redactUrl } from '../../src/alerts/redact.ts';
import {
  alertsEnabled,
  decimalWholeNumber,
  loadConfig,
  requireCallbackBase,
  requireService,
  type AlertConfig,
} from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { ReconError } from '../../src/errors.ts';
import { startAdminListener, type AdminListener } from '../../src/admin/admin-listener.ts';
import { registerServiceRequestMetrics } from '../../src/client/service-request-metrics.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { describeProbe, probeCallbackBase } from '../../src/nightly/callback-probe.ts';
import { registerNightlyMetrics } from '../../src/nightly/nightly-metrics.ts';
import { startNightlyScheduler } from '../../src/nightly/nightly-scheduler.ts';
import { advanceSender } from '../../pipelines/nightly/nightly-worker.ts';
import { startReconServices } from '../../pipelines/nightly/recon-services.ts';
import { accountClients } from '../../src/client/service-client.ts';
import { registerPruneMetrics } from '../../src/retention/prune-metrics.ts';
import { startPruneScheduler } from '../../src/retention/prune-scheduler.ts';
import { removeStaleTempFolders } from '../../src/temp/temp-folder.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { serviceLogger, withDatabaseOutageLog } from '../service-logger.ts';
import { EXIT } from '../exit-codes.ts';
import { untilAborted, workerSettings } from './worker.ts';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';

const USAGE = `usage: recon serve [--port P] [--host H]

Runs recon's service until SIGTERM or SIGINT: the receiver (export deliveries on the path of
RECON_CALLBACK_BASE_URL, notifications on /notify), a worker (as recon worker), the nightly scheduler
(RECON_SCHEDULE in RECON_SCHEDULE_TIMEZONE) and, with RECON_ALERT_WEBHOOK or RECON_ALERT_EMAIL set, the alert
check every minute (a nightly run failed, suspect or late; the callback base unreachable), and once a day the
prune of recon prune (RECON_DELIVERY_RETENTION_DAYS, RECON_FAILED_DELIVERY_RETENTION_DAYS,
RECON_RUN_RETENTION_DAYS). Operators' /healthz and
Prometheus /metrics are on the admin listener, RECON_ADMIN_HOST:RECON_ADMIN_PORT (127.0.0.1:8091). SIGTERM drains:
/healthz answers 503, uploads in flight finish, the current job finishes, then exit 0. It logs on stdout: one JSON
object a line (a readable line each on a terminal), from \`listening on URL\` then \`admin on URL\` on, at
RECON_LOG_LEVEL (info); see docs/operations.md.

options (each also read from the environment variable shown; flags win):
  --port P   port to listen on, 0 for any free one   RECON_PORT (8090)
  --host H   address to listen on                    RECON_HOST (127.0.0.1)

settings: DATABASE_URL (or the embedded database under RECON_DATA_DIR), RECON_SERVICE_URL, RECON_IDENTIFIER,
RECON_SECRET, RECON_CALLBACK_BASE_URL, RECON_MAX_FILE_BYTES, RECON_SCHEDULE*, RECON_EXPORT_*, RECON_LOOKBACK_DAYS,
RECON_LOG_LEVEL, RECON_ADMIN_*, RECON_ALERT_*, RECON_SMTP_URL, RECON_DELIVERY_RETENTION_DAYS,
RECON_FAILED_DELIVERY_RETENTION_DAYS, RECON_RUN_RETENTION_DAYS (see docs/configuration.md).
`;

export const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const config = loadConfig(ctx.env, ['service', 'callbackBase']);
  const port = values.port === undefined ? config.serve.port : parsePort(values.port);
  const host = values.host ?? config.serve.host;
  // The admin listener binds first and would take the port, leaving the receiver a bare EADDRINUSE to explain.
  if (port !== 0 && port === config.admin.port) {
    const portSetting = values.port === undefined ? 'RECON_PORT' : '--port';
    throw new ReconError(
      'CONFIG',
      `RECON_ADMIN_PORT and ${portSetting} are the same port, ${port}: the admin listener and the receiver need one each: set RECON_ADMIN_PORT to another port (8091 unless set)`,
    );
  }
  const database = await openDatabase(config);
  const outage = withDatabaseOutageLog(serviceLogger(ctx, config, 'recon serve'), database);
  const log = outage.log;
  // One registry for the whole process: the receiver, the worker and the client count on it.
  const metrics = createMetricsRegistry();
  const accounts = accountClients(config.service, log, { onAttempt: registerServiceRequestMetrics(metrics) });
  const callbackBaseUrl = requireCallbackBase(config.serve);
  let admin: AdminListener | undefined;
  try {
    await removeStaleTempFolders();
    await prepareDatabase(database, config, { warn: (line) => log.warn(line) });
    await syncAccounts(database.db, config.service.accounts);
    registerNightlyMetrics(metrics, database.db, {
      schedule: config.nightly.schedule,
      timezone: config.nightly.scheduleTimezone,
      lateHours: config.alerts.lateHours,
    });
    registerPruneMetrics(metrics, database.db);
    admin = await startAdminListener({ ...config.admin, metrics, db: database.db });
    const services = await startReconServices({
      database,
      heartbeatSeconds: config.queue.heartbeatSeconds,
      log,
      callbackBaseUrl,
      worker: workerSettings(config, accounts, metrics),
      receiver: {
        host,
        port,
        accounts: requireService(config.service).accounts,
        maxFileBytes: config.limits.maxFileBytes,
        maxUploads: config.serve.maxUploads,
        slowClient: {
          minBytesPerSecond: config.serve.minUploadBytesPerSecond,
          windowMs: config.serve.slowUploadWindowMs,
        },
        listenerLimits: {
          headersTimeoutMs: config.serve.headersTimeoutMs,
          maxConnections: config.serve.maxConnections,
          maxConnectionsPerClient: config.serve.maxConnectionsPerClient,
        },
        metrics,
      },
    });
    const scheduler = startNightlyScheduler(database.db, {
      schedule: config.nightly.schedule,
      timezone: config.nightly.scheduleTimezone,
      onRunCreated: advanceSender(services.boss),
      onError: (error) => log.error({ err: error }, 'scheduler failed'),
      log,
    });
    // The first record, and the one a supervisor or a test waits for: everything is started. Then where operators
    // scrape.
    const url = services.receiver!.url;
    log.info({ url, callbackBaseUrl: services.callbackBaseUrl }, `listening on ${url}`);
    log.info({ url: admin.url }, `admin on ${admin.url}`);
    let alerts: AlertMonitor | undefined;
    if (alertsEnabled(config.alerts)) {
      log.info(`alerts to ${describeChannels(config.alerts)}`);
      alerts = startAlertMonitor(database.db, {
        alerts: config.alerts,
        schedule: config.nightly.schedule,
        timezone: config.nightly.scheduleTimezone,
        secrets: alertSecrets(config),
        log,
      });
    }
    // Once everything is started and said: the day's first check prunes at once.
    const pruning = startPruneScheduler(database.db, {
      retention: config.retention,
      timezone: config.nightly.scheduleTimezone,
      log,
    });
    const probing = probeCallbackBase(database.db, callbackBaseUrl, { reason: 'serve start' }).then(
      (result) => {
        if (result?.reachable) log.info({ callbackBaseUrl }, describeProbe(result));
        else if (result) log.error({ callbackBaseUrl, detail: result.detail }, describeProbe(result));
      },
      (error: unknown) => log.error({ err: error }, 'callback probe failed'),
    );
    await untilAborted(ctx.signal);
    admin.drain();
    log.info('draining');
    await probing;
    await alerts?.stop();
    await pruning.stop();
    await scheduler.stop();
    await services.close({ drainMs: config.queue.drainSeconds * 1000 });
    log.info('stopped');
    return EXIT.ok;
  } finally {
    // The admin listener last: /healthz says `shutting down` and /metrics answers while the rest drains.
    await admin?.close();
    outage.stop();
    await database.close();
  }
}

function parsePort(text: string): number {
  const port = decimalWholeNumber(text);
  if (port === undefined || port > 65_535)
    throw new ReconError('USAGE', `--port: expected a whole number from 0 to 65535, in decimal digits, got '${text}'`);
  return port;
}

/** Where alerts go, for the log: the webhook by its origin only (its path may be its token). */
function describeChannels(alerts: AlertConfig): string {
  const channels: string[] = [];
  if (alerts.webhookUrl) channels.push(`webhook ${redactUrl(alerts.webhookUrl)}`);
  if (alerts.email) channels.push(`e-mail to ${alerts.email.to.length} address(es)`);
  return channels.join(' and ');
}
