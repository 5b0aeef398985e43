import { syncOrders } from '../../pipelines/sync-orders.ts';
import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { describeError } from '../../src/errors.ts';
import { formatOrderImportJson, formatOrderImportSummary } from '../../src/terminal/order-import-summary.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';
import { orderImportExitCode } from './import-orders.ts';

const USAGE = `usage: recon sync-orders [--json]

Reads the merchant's orders from its own PostgreSQL database and upserts them into recon.orders by order_id,
like import-orders: all of it in one transaction, each bad row kept in recon.rejected_order_rows with its
position in the query's result and the row as JSON.

  RECON_ORDERS_DATABASE_URL  postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE of the merchant's database
  RECON_ORDERS_QUERY         the SQL query that returns the orders, run through a cursor in a read-only
                             transaction, with the columns order_id, amount_minor (a whole number of minor
                             units), currency, status, refunded_minor (optional; NULL is 0), payment_method and
                             created_at (timestamptz, or text in ISO 8601 with an offset)

options:
  --json      one JSON object on stdout instead of a summary line
  -h, --help  this help

exit codes: 0 loaded with no rejected row, 3 some rows were rejected, 2 the database could not be read or the
load failed or was interrupted (SIGINT, SIGTERM: nothing is committed), 1 usage or configuration error.
`;

export const OPTIONS = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  // A missing or malformed variable is a configuration error, said with any other before opening anything.
  const config = loadConfig(ctx.env, ['ordersSource']);

  const database = await openDatabase(config);
  try {
    await prepareDatabase(database, config);
    const result = await syncOrders(database, config.orders, { signal: ctx.signal });
    ctx.stdout.write((values.json ? formatOrderImportJson(result) : formatOrderImportSummary(result)) + '\n');
    return orderImportExitCode([result]);
  } catch (error) {
    if (!ctx.signal.aborted) throw error;
    ctx.stderr.write(`recon sync-orders: ${describeError(ctx.signal.reason)}: nothing of the sync was committed\n`);
    return EXIT.failed;
  } finally {
    await database.close();
  }
}
