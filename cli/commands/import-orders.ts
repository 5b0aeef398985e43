import { importOrderFiles } from '../../pipelines/import-orders.ts';
import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { describeError, ReconError } from '../../src/errors.ts';
import type { OrderImportResult } from '../../src/orders/order-import-result.ts';
import { formatOrderImportJson, formatOrderImportSummary } from '../../src/terminal/order-import-summary.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

const USAGE = `usage: recon import-orders [--json] FILE...

Imports the merchant's orders from csv files (plain, or gzip, bzip2 or a zip holding one csv, detected from the
bytes) into recon.orders, by order_id: a new order is inserted, a changed one updated, an unchanged one left
alone. Each file loads whole or not at all; a bad row is kept in recon.rejected_order_rows with its reason.

The csv: a header row, ';' or ',', UTF-8 with or without BOM, columns in any order, names case-insensitive,
other columns ignored:
  order_id         required, as the payment service's ORDERID (1-40 characters)
  amount           required, decimal in major units with a dot (12.50), exact by the currency's minor unit
  currency         required, ISO 4217 code
  status           required, paid | authorized | cancelled | refunded | partially_refunded
  refunded_amount  optional, like amount; empty is 0; at most amount
  payment_method   required, instalment | wallet
  created_at       required, ISO 8601 with an offset or Z (2024-05-01T12:00:00+02:00; a space for T is fine)

options:
  --json      one JSON object per file on stdout instead of a summary line
  -h, --help  this help

exit codes: 0 every file loaded with no rejected row, 3 some rows were rejected, 2 a file failed or the run was
interrupted (SIGINT, SIGTERM: the file being loaded is rolled back), 1 usage or configuration error.
`;

export const OPTIONS = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, true);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  if (positionals.length === 0) throw new ReconError('USAGE', "no FILE given (see 'recon import-orders --help')");
  const config = loadConfig(ctx.env);

  const database = await openDatabase(config);
  let finished = 0;
  try {
    await prepareDatabase(database, config);
    const results = await importOrderFiles(database, positionals, {
      limits: config.limits,
      signal: ctx.signal,
      onResult(result) {
        ctx.stdout.write((values.json ? formatOrderImportJson(result) : formatOrderImportSummary(result)) + '\n');
        finished++;
      },
    });
    return orderImportExitCode(results);
  } catch (error) {
    if (!ctx.signal.aborted) throw error;
    // The file being loaded was rolled back with its transaction; the summary lines above stand.
    const rest = positionals.length - finished - 1;
    ctx.stderr.write(
      `recon import-orders: ${describeError(ctx.signal.reason)}: nothing of ${positionals[finished]} was committed` +
        `${rest > 0 ? `, ${rest} more file${rest === 1 ? '' : 's'} not started` : ''}\n`,
    );
    return EXIT.failed;
  } finally {
    await database.close();
  }
}

/** A failed import outranks rejected rows: both are worth a look, a failure more. */
export function orderImportExitCode(results: readonly OrderImportResult[]): number {
  if (results.some((result) => result.status === 'failed')) return EXIT.failed;
  if (results.some((result) => result.status === 'loaded' && result.rejected > 0)) return EXIT.rowsRejected;
  return EXIT.ok;
}
