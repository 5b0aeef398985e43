import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { ReconError } from '../../src/errors.ts';
import { CSV_LOCALES, type CsvLocale } from '../../src/report/csv-cell.ts';
import { renderCsv } from '../../src/report/report-csv.ts';
import { HTML_LISTED_PER_STATUS, renderHtml } from '../../src/report/report-html.ts';
import { renderJson } from '../../src/report/report-json.ts';
import { checkOutputFolder, writeFileAtomically, writeToStream } from '../../src/report/report-output.ts';
import {
  findRun,
  loadReportOf,
  oldestOpenExceptions,
  oldestOpenExceptionsPerStatus,
  openExceptionPages,
} from '../../src/report/report-queries.ts';
import { renderTable } from '../../src/report/report-table.ts';
import { reportWarnings } from '../../src/report/run-report.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

const FORMATS = ['table', 'csv', 'json', 'html'] as const;
type Format = (typeof FORMATS)[number];

/** The lists that show only the head of the open exceptions; csv and json stream them all. */
const LISTED = { table: 100, html: HTML_LISTED_PER_STATUS } as const;

/** The warnings listed (every one is counted): a page's worth for people, more in the files programs read. */
const WARNINGS_LISTED = { table: 100, html: 100, csv: 10_000, json: 10_000 } as const;

const USAGE = `usage: recon report [--format table|csv|json|html] [--csv-locale en|fr] [--out FILE] [--run ID]

Reports one reconciliation run. First the money: the gross, refunds, fees and net of the run's last day and
of all its days per currency, the money the open exceptions put at risk, handled and not, and how many nobody
has handled. Then its totals, the bridge per currency (expected vs settled) with its difference and money at
risk by status, the money received down to the bridge's settled, the money moved per day, the counts per
status, the open exceptions' ageing, the open exceptions with their explanation, and the warnings on the run's
verdicts, whatever their status. Days are dates in RECON_REPORT_TIMEZONE (default UTC).
A suspect run (orders expect money but no transaction was found) is flagged at the top of every format.

Which run, without --run: the finished nightly run with the highest run id (a nightly run's reconciliation);
before any nightly run has finished, the finished run over all orders (recon reconcile of all orders or of
those created since a date) with the highest run id. A backfill, a run over named orders and a run that
never finished are shown only when named with --run. The report's first line says which run it is and why.

options:
  --format F   table  for a terminal (default; the ${LISTED.table} oldest open exceptions)
               csv    sections of a spreadsheet-safe csv (every open exception)
               json   one document, amounts as strings of minor units (every open exception)
               html   one self-contained page: totals, the difference by status, money moved, charts of
                      verdicts and money per day, ageing, the open exceptions grouped by status (the
                      ${LISTED.html} oldest of each) with their explanation
  --csv-locale L
               en  the csv's cells separated by commas, amounts with a decimal point (default, or
                   RECON_REPORT_CSV_LOCALE)
               fr  separated by semicolons, amounts with a decimal comma, as a spreadsheet set to French
                   reads them (1234,56); only with --format csv
  --out FILE   write to FILE (a temporary file renamed into place) and print its path
  --run ID     the run to report (see above for the run shown without it)
  -h, --help   this help

exit codes: 0 the report was written; 2 no such run, no run yet, or FILE could not be written;
1 usage or configuration error.
`;

export const OPTIONS = {
  format: { type: 'string', default: 'table' },
  'csv-locale': { type: 'string' },
  out: { type: 'string' },
  run: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const format = values.format as Format;
  if (!FORMATS.includes(format))
    throw new ReconError('USAGE', `--format must be one of ${FORMATS.join(', ')}, not '${values.format}'`);
  if (values.run !== undefined && !/^[1-9]\d{0,17}$/.test(values.run)) {
    throw new ReconError('USAGE', `--run expects a run id (a positive whole number), not '${values.run}'`);
  }
  const csvLocale = values['csv-locale'] as CsvLocale | undefined;
  if (csvLocale !== undefined && !CSV_LOCALES.includes(csvLocale)) {
    throw new ReconError('USAGE', `--csv-locale must be one of ${CSV_LOCALES.join(', ')}, not '${csvLocale}'`);
  }
  if (csvLocale !== undefined && format !== 'csv') {
    throw new ReconError('USAGE', `--csv-locale is for --format csv, not ${format}`);
  }
  if (values.out !== undefined) await checkOutputFolder(values.out);
  const config = loadConfig(ctx.env);

  const database = await openDatabase(config);
  try {
    await prepareDatabase(database, config);
    const run = await findRun(database.db, values.run);
    const runId = run.runId;
    // Started before the summary is computed: the first pages are read beside it.
    const exceptionPages =
      format === 'csv' || format === 'json'
        ? openExceptionPages(database.db, runId, { signal: ctx.signal })
        : undefined;
    // Not awaited for csv and json: they render the open exceptions while it is computed.
    const summary = loadReportOf(database.db, run, {
      timeZone: config.reportTimezone,
      warningsListed: WARNINGS_LISTED[format],
    });
    // Its failure is thrown where it is awaited; a file that cannot be opened may stop the writing before that.
    summary.catch(() => undefined);
    const options = {
      generatedAt: new Date(),
      perGroup: LISTED.html,
      locale: csvLocale ?? config.reportCsvLocale,
    };
    const chunks: AsyncIterable<string> | Iterable<string> =
      format === 'csv'
        ? renderCsv(summary, exceptionPages!, options)
        : format === 'json'
          ? renderJson(summary, exceptionPages!, options)
          : format === 'html'
            ? [renderHtml(await summary, await oldestOpenExceptionsPerStatus(database.db, runId, LISTED.html), options)]
            : [renderTable(await summary, await oldestOpenExceptions(database.db, runId, LISTED.table), options)];

    if (values.out === undefined) {
      await writeToStream(chunks, ctx.stdout);
    } else {
      ctx.stdout.write(`${await writeFileAtomically(values.out, chunks)}\n`);
    }
    // The table says it in its own lines; a file or a machine format could be read by no one: say it here too.
    if (values.out !== undefined || format !== 'table') {
      for (const warning of reportWarnings(await summary)) ctx.stderr.write(`recon report: run ${runId}: ${warning}\n`);
    }
    return EXIT.ok;
  } finally {
    await database.close();
  }
}
