import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { ReconError } from '../../src/errors.ts';
import { normalizeIsoInstant } from '../../src/normalize/iso-instant.ts';
import { RuleViolation } from '../../src/normalize/rule-violation.ts';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import type { ReconcileScope } from '../../src/reconcile/reconcile-scope.ts';
import { formatRunJson, formatRunSummary } from '../../src/terminal/run-summary.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';

const USAGE = `usage: recon reconcile (--all | --order-id ID... | --created-since DATE) [--as-of TIMESTAMP] [--full] [--json]

Gives every order in scope a verdict against the transactions the service reported (recon.verdicts), as one run
(recon.reconciliation_runs) with its counts per status and its bridge per currency. Only verdicts that changed are
written (reporting.verdict_history); a run over all orders after another computes only the orders whose order,
transactions or notifications changed since, or whose grace period or capture window ended.

options:
  --all                   every order, and every ORDERID with succeeded transactions but no order
  --order-id ID           this order (repeat the option for several)
  --created-since DATE    orders created at or after DATE (YYYY-MM-DD is midnight UTC, or an ISO 8601 instant)
  --as-of TIMESTAMP       the instant ages are measured at (default now): replays a run as of then
  --full                  compute every order in scope, changed or not (after an edit by hand to recon's tables)
  --json                  the run as one JSON object on stdout
  -h, --help              this help

settings: RECON_AMOUNT_TOLERANCE_MINOR (default 0), RECON_GRACE_HOURS (default 24).
exit codes: 0 reconciled (exceptions are results, not errors), 2 the run is suspect (orders expect money but no
transaction at all was found: the run is stored, marked suspect) or failed, 1 usage or configuration error.
`;

export const OPTIONS = {
  all: { type: 'boolean' },
  'order-id': { type: 'string', multiple: true },
  'created-since': { type: 'string' },
  'as-of': { type: 'string' },
  full: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const scope = chooseScope(values);
  const asOf = values['as-of'] === undefined ? new Date() : parseInstant('--as-of', values['as-of']);
  const config = loadConfig(ctx.env);
  const database = await openDatabase(config);
  try {
    await prepareDatabase(database, config);
    await syncAccounts(database.db, config.service.accounts);
    if (ctx.stderr.isTTY) ctx.stderr.write('reconciling...\r');
    const summary = await reconcile(database, { scope, asOf, full: values.full, ...config.reconcile });
    if (ctx.stderr.isTTY) ctx.stderr.write('\x1b[2K');
    ctx.stdout.write((values.json ? formatRunJson(summary) : formatRunSummary(summary)) + '\n');
    if (!summary.suspect) return EXIT.ok;
    ctx.stderr.write(`recon reconcile: SUSPECT RUN ${summary.runId}: ${summary.suspectReason}\n`);
    return EXIT.failed;
  } finally {
    await database.close();
  }
}

function chooseScope(values: { all?: boolean; 'order-id'?: string[]; 'created-since'?: string }): ReconcileScope {
  const chosen = [values.all, values['order-id'], values['created-since']].filter((value) => value !== undefined);
  if (chosen.length !== 1) {
    throw new ReconError(
      'USAGE',
      "give exactly one of --all, --order-id ID or --created-since DATE (see 'recon reconcile --help')",
    );
  }
  if (values.all) return { kind: 'all' };
  if (values['order-id']) {
    const empty = values['order-id'].some((id) => id.trim() === '');
    if (empty) throw new ReconError('USAGE', '--order-id needs an order id');
    return { kind: 'orders', orderIds: values['order-id'] };
  }
  return { kind: 'created_since', since: parseInstant('--created-since', values['created-since']!) };
}

/** A date alone means midnight UTC; anything else must say its offset, or the instant is a guess. */
function parseInstant(option: string, text: string): Date {
  const value = /^\d{4}-\d{2}-\d{2}$/.test(text.trim()) ? `${text.trim()}T00:00:00Z` : text;
  const instant = normalizeIsoInstant(value);
  if (instant instanceof RuleViolation) throw new ReconError('USAGE', `${option}: ${instant.reason}`);
  return new Date(instant);
}
