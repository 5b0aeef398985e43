import { setTimeout as sleep } from 'node:timers/promises';
import { dateInZone, isCalendarDate } from '@recon/protocol';
import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { trackDatabaseOutage } from '../../src/db/database-outage.ts';
import { describeError, ReconError } from '../../src/errors.ts';
import {
  describeLateExport,
  formatNightlyRun,
  listNightlyRuns,
  type NightlyRunReport,
} from '../../src/nightly/nightly-run-report.ts';
import { triggerNightlyRun } from '../../src/nightly/nightly-scheduler.ts';
import { advanceSender } from '../../pipelines/nightly/nightly-worker.ts';
import { openJobQueue } from '../../src/queue/job-queue.ts';
import { liveWorkers } from '../../src/queue/worker-presence.ts';
import { describeProbe } from '../../src/nightly/callback-probe.ts';
import { describeWorkerNotice, workerNotice, type WorkerNotice } from '../../src/nightly/worker-notice.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

const USAGE = `usage: recon nightly [--date YYYY-MM-DD] [--wait] [--json]

Starts the nightly run of a date (default: today in RECON_SCHEDULE_TIMEZONE) as the scheduler would; a date that
has a run already attaches to it instead of starting a second. The run's work is done by a worker (recon serve
or recon worker): it asks the service for the exports of the run's orders, ingests them as they arrive, then
reconciles those orders as of the run's start.

options:
  --date YYYY-MM-DD   the run's date
  --wait              wait until the run is reconciled (exit 0) or failed (exit 2); needs a running worker, and
                      says at once when none runs, and after 30 s when none has taken the run
  --json              the run as one JSON object
`;

const WAIT_POLL_MS = 500;

export const OPTIONS = {
  date: { type: 'string' },
  wait: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const config = loadConfig(ctx.env);
  const runDate = values.date ?? dateInZone(new Date(), config.nightly.scheduleTimezone);
  if (!isCalendarDate(runDate)) throw new ReconError('USAGE', `--date: expected YYYY-MM-DD, got '${runDate}'`);
  const database = await openDatabase(config);
  try {
    await prepareDatabase(database, config);
    const boss = await openJobQueue(database, { heartbeatSeconds: config.queue.heartbeatSeconds });
    let started: { nightlyRunId: string; created: boolean };
    try {
      started = await triggerNightlyRun(database.db, runDate, new Date(), advanceSender(boss));
    } finally {
      await boss.stop({ graceful: false, close: false });
    }
    ctx.stderr.write(
      `recon nightly: ${started.created ? 'started' : 'attached to'} the run of ${runDate} (run ${started.nightlyRunId})\n`,
    );
    const lateAfterSeconds = config.nightly.exportLateSeconds;
    let report = await current(database.db, started.nightlyRunId, lateAfterSeconds);
    // The run goes on in the workers whatever happens to this process's connection: a database that goes away for a
    // while (killed connections, a server down, restarting or not accepting connections) is waited out, told once
    // when it starts, counted every 30 s and told when it ends; the exit code says how the run ended, not how the
    // wait went.
    const outage = trackDatabaseOutage({
      started: (error) =>
        ctx.stderr.write(`recon nightly: the database is unreachable (${describeError(error)}); still waiting\n`),
      lasting: (seconds, errors) =>
        ctx.stderr.write(
          `recon nightly: the database is still unreachable after ${seconds} s (${errors} failed look(s)); still waiting\n`,
        ),
      ended: (seconds) => ctx.stderr.write(`recon nightly: the database is back after ${seconds} s\n`),
    });
    const waitStarted = Date.now();
    let told: WorkerNotice | undefined;
    const saidLate = new Set<string>();
    let saidProbe = false;
    while (values.wait && report.state !== 'reconciled' && report.state !== 'failed') {
      if (!outage.ongoing) {
        const live = await liveWorkers(database.db).catch(() => undefined);
        const notice = live && workerNotice(report.state, Date.now() - waitStarted, live);
        if (live && notice !== told) {
          if (notice) ctx.stderr.write(`recon nightly: ${describeWorkerNotice(notice, live)}\n`);
          else
            ctx.stderr.write(
              `recon nightly: ${told === 'no-worker' ? 'a worker is running' : 'a worker took the run'}\n`,
            );
          told = notice;
        }
      }
      await sleep(WAIT_POLL_MS, undefined, { signal: ctx.signal }).catch(() => {
        throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new ReconError('INTERRUPTED', 'interrupted');
      });
      try {
        report = await current(database.db, started.nightlyRunId, lateAfterSeconds);
      } catch (error) {
        if (outage.failed(error, 'the run')) continue;
        throw error;
      }
      outage.answered();
      if (report.callbackProbe && !report.callbackProbe.reachable && !saidProbe) {
        saidProbe = true;
        const probe = report.callbackProbe;
        ctx.stderr.write(
          `recon nightly: error: ${describeProbe({ ...probe, checkedAt: new Date(probe.checkedAt) })}\n`,
        );
      }
      for (const late of report.lateExports) {
        if (saidLate.has(late.token)) continue;
        saidLate.add(late.token);
        ctx.stderr.write(`recon nightly: ${describeLateExport(late)}\n`);
      }
      if (ctx.stderr.isTTY) ctx.stderr.write(`\x1b[2K${report.state}: ${JSON.stringify(report.requests)}\r`);
    }
    if (ctx.stderr.isTTY && values.wait) ctx.stderr.write('\x1b[2K');
    ctx.stdout.write((values.json ? JSON.stringify(report) : formatNightlyRun(report)) + '\n');
    return values.wait && report.state === 'failed' ? EXIT.failed : EXIT.ok;
  } finally {
    await database.close();
  }
}

async function current(
  db: Parameters<typeof listNightlyRuns>[0],
  nightlyRunId: string,
  lateAfterSeconds: number,
): Promise<NightlyRunReport> {
  const [report] = await listNightlyRuns(db, { nightlyRunId, lateAfterSeconds });
  if (!report) throw new ReconError('RUN_NOT_FOUND', `nightly run ${nightlyRunId} vanished`);
  return report;
}
