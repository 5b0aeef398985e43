import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { describeProbe, latestCallbackProbe } from '../../src/nightly/callback-probe.ts';
import { formatNightlyRun, listNightlyRuns } from '../../src/nightly/nightly-run-report.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

const USAGE = `usage: recon runs [--json]

The nightly runs, newest first: date, state, orders and batches, export requests by state, the reconciliation run.
Under a run: its callback base when the probe at its start did not reach recon's receiver, each failed delivery, and
each export still missing RECON_EXPORT_LATE_SECONDS after its request was sent (how long, on which token). When the
latest probe of RECON_CALLBACK_BASE_URL failed, it comes first.
`;

export const OPTIONS = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const config = loadConfig(ctx.env);
  const database = await openDatabase(config);
  try {
    await prepareDatabase(database, config);
    const runs = await listNightlyRuns(database.db, { lateAfterSeconds: config.nightly.exportLateSeconds });
    if (values.json) {
      ctx.stdout.write(JSON.stringify(runs) + '\n');
      return EXIT.ok;
    }
    // The latest probe (serve's start, or a run's) first: an unreachable base explains every run waiting below it.
    const probe = await latestCallbackProbe(database.db);
    if (probe && !probe.reachable)
      ctx.stdout.write(`${describeProbe(probe)} (checked ${probe.checkedAt.toISOString()})\n`);
    ctx.stdout.write(runs.length === 0 ? 'no nightly run yet\n' : runs.map(formatNightlyRun).join('\n') + '\n');
    return EXIT.ok;
  } finally {
    await database.close();
  }
}
