import { readFile } from 'node:fs/promises';
import { backfill } from '../../pipelines/backfill.ts';
import type { BackfillResult } from '../../src/backfill/backfill-result.ts';
import { checkOrderId, parseOrderIdsFile, uniqueOrderIds } from '../../src/backfill/order-id-list.ts';
import { accountClients } from '../../src/client/service-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { ReconError } from '../../src/errors.ts';
import { printable } from '../../src/report/report-table.ts';
import { formatBackfillJson, formatBackfillSummary } from '../../src/terminal/backfill-summary.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';

const USAGE = `usage: recon backfill (--order-id ID... | --orders-file FILE) [--json]

Asks the payment service now (a synchronous getTransactions) for the transactions of the orders given, loads them
as an export file is loaded (normalized, upserted into recon.transactions, bad rows kept in recon.rejected_rows;
one recon.files row per request, named "backfill:getTransactions <instant> <ids>"), reconciles those orders as one
run and prints their verdicts. An answer identical to one loaded before is not loaded again; the orders are
reconciled all the same.

options:
  --order-id ID       this order (repeat the option for several: a comma is part of an ORDERID, not a separator)
  --orders-file FILE  one ORDERID per line; blank lines and lines starting with # are skipped
  --json              one JSON object on stdout: the requests, the run and the verdicts
  -h, --help          this help

Both options may be given together; each order is asked for once, RECON_EXPORT_BATCH_SIZE (default 200) ORDERIDs
per request.
Every account is asked (RECON_ACCOUNTS; a group once, SCOPE=CLIENTSGROUP).
settings: RECON_SERVICE_URL, RECON_IDENTIFIER and RECON_SECRET or RECON_ACCOUNTS (required); RECON_EXPORT_BATCH_SIZE,
RECON_AMOUNT_TOLERANCE_MINOR, RECON_GRACE_HOURS.
exit codes: 0 reconciled (exceptions are results, not errors), 3 some rows of the service's answer were rejected
(the rest loaded and reconciled), 2 the service failed or could not be reached, or the load failed, 1 usage or
configuration error.
`;

export const OPTIONS = {
  'order-id': { type: 'string', multiple: true },
  'orders-file': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const given = values['order-id'] ?? [];
  // A comma is legal inside an ORDERID, so `A,B` is one; but it is more often a list typed the wrong way.
  for (const id of given.filter((each) => each.includes(','))) {
    ctx.stderr.write(
      `recon backfill: warning: --order-id '${printable(id)}' is taken as one ORDERID (a comma may be part of one); for several orders, repeat --order-id\n`,
    );
  }
  const orderIds = await chooseOrderIds(given, values['orders-file']);
  const config = loadConfig(ctx.env, ['service']);
  const accounts = accountClients(config.service);

  const database = await openDatabase(config);
  try {
    await prepareDatabase(database, config);
    await syncAccounts(database.db, config.service.accounts);
    const result = await backfill(database, accounts, {
      orderIds,
      batchSize: config.nightly.exportBatchSize,
      ...config.reconcile,
      signal: ctx.signal,
    });
    ctx.stdout.write((values.json ? formatBackfillJson(result) : formatBackfillSummary(result)) + '\n');
    return exitCode(result);
  } finally {
    await database.close();
  }
}

async function chooseOrderIds(given: readonly string[], ordersFile: string | undefined): Promise<string[]> {
  given.forEach((id) => checkOrderId(id, '--order-id'));
  const fromFile = ordersFile === undefined ? [] : parseOrderIdsFile(await readOrdersFile(ordersFile), ordersFile);
  const orderIds = uniqueOrderIds([...given, ...fromFile]);
  if (orderIds.length === 0) {
    const where = ordersFile === undefined ? '' : ` (${ordersFile} lists none)`;
    throw new ReconError(
      'USAGE',
      `no ORDERID given${where}: --order-id ID or --orders-file FILE (see 'recon backfill --help')`,
    );
  }
  return orderIds;
}

async function readOrdersFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new ReconError(
      'USAGE',
      `--orders-file ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      {
        cause: error,
      },
    );
  }
}

function exitCode(result: BackfillResult): number {
  return result.requests.some((request) => request.status === 'loaded' && request.rejected > 0)
    ? EXIT.rowsRejected
    : EXIT.ok;
}
