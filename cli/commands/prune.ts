import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { describeError } from '../../src/errors.ts';
import { prune } from '../../src/retention/prune.ts';
import { failPrune, finishPrune, startCommandPrune } from '../../src/retention/prune-records.ts';
import { plural } from '../../src/retention/prune-report.ts';
import { formatPruneJson, formatPruneProgress, formatPruneSummary } from '../../src/terminal/prune-summary.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

const USAGE = `usage: recon prune [--dry-run] [--json]

Removes what recon keeps no longer, and says what it removed:
- the stored bytes of delivered export files ingested more than RECON_DELIVERY_RETENTION_DAYS (90) days ago: their
  deliveries, their files' rows (name, sha256, size) and their transactions stay, and reporting.files says when the
  bytes were pruned;
- the stored bytes of deliveries that failed to ingest (quarantined or not) more than
  RECON_FAILED_DELIVERY_RETENTION_DAYS (30) days ago: their rows and why they failed stay;
- reconciliation runs older than RECON_RUN_RETENTION_DAYS (800) days, with the history only they need.
It works in short transactions of 100 deliveries (or runs), beside a nightly run, an ingest or a report, and skips
what another transaction holds. recon serve prunes the same way once a day.

options:
  --dry-run   count what would be removed, and change nothing
  --json      the report as one JSON object on stdout
  -h, --help  this help

exit codes: 0 pruned (or nothing was due), 2 failed or interrupted (SIGINT, SIGTERM: the batches committed before
stay removed), 1 usage or configuration error.
`;

export const OPTIONS = {
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const dryRun = values['dry-run'] === true;
  const config = loadConfig(ctx.env);
  const database = await openDatabase(config);
  // On a terminal only: a log or a pipe gets the report and nothing else.
  const progress = ctx.stderr.isTTY === true;
  let drawn = false;
  // Deliveries whose bytes are gone so far: what an interrupted prune says it did.
  let deliveriesPruned = 0;
  let failedPruned = 0;
  const clear = () => {
    if (drawn) ctx.stderr.write('\r\x1b[K');
    drawn = false;
  };
  try {
    await prepareDatabase(database, config);
    const now = new Date();
    // A dry run writes nothing at all, not even its own record.
    const pruneId = dryRun ? undefined : await startCommandPrune(database.db, now);
    try {
      const report = await prune(database.db, {
        retention: config.retention,
        now,
        dryRun,
        signal: ctx.signal,
        onProgress: (step) => {
          if (step.step === 'deliveries') deliveriesPruned = step.soFar.deliveries;
          if (step.step === 'failedDeliveries') failedPruned = step.soFar.deliveries;
          if (!progress) return;
          ctx.stderr.write(`\r${formatPruneProgress(step)}\x1b[K`);
          drawn = true;
        },
      });
      clear();
      if (pruneId !== undefined) await finishPrune(database.db, pruneId, report, new Date());
      ctx.stdout.write((values.json ? formatPruneJson(report) : formatPruneSummary(report)) + '\n');
      return EXIT.ok;
    } catch (error) {
      clear();
      const reason: unknown = ctx.signal.aborted ? ctx.signal.reason : error;
      if (pruneId !== undefined) await failPrune(database.db, pruneId, describeError(reason)).catch(() => undefined);
      if (!ctx.signal.aborted) throw error;
      ctx.stderr.write(
        `recon prune: ${describeError(reason)}: the bytes of ${plural(deliveriesPruned, 'delivery', 'deliveries')}` +
          ` and of ${plural(failedPruned, 'failed delivery', 'failed deliveries')} were pruned before it stopped, and stay so\n`,
      );
      return EXIT.failed;
    }
  } finally {
    await database.close();
  }
}
