import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { describeError, ReconError } from '../../src/errors.ts';
import { configuredScope } from '../../src/normalize/row-scope.ts';
import { createWallTimeResolver } from '../../src/normalize/wall-time-resolver.ts';
import type { FileResult } from '../../src/ingest/file-result.ts';
import { formatFileJson, formatFileSummary } from '../../src/terminal/file-summary.ts';
import { createProgressBar } from '../../src/terminal/progress-bar.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

const USAGE = `usage: recon ingest [--json] [--timezone ZONE] FILE...

Loads export files (zip, gzip, bzip2 or plain csv, detected from the bytes) into recon.transactions.
Each file loads whole or not at all; a file whose bytes were loaded before is skipped as a duplicate.
Once accounts are configured (RECON_ACCOUNTS, RECON_ACCOUNTS_FILE, or RECON_IDENTIFIER and RECON_SECRET),
a row naming another account is rejected ("account not configured").

options:
  --json           one JSON object per file on stdout instead of a summary line
  --timezone ZONE  IANA zone of the exports' DATE column (default: RECON_TIMEZONE, else UTC)
  -h, --help       this help

exit codes: 0 every file loaded (or was a duplicate) with no rejected row, 3 some rows were rejected,
2 a file failed or the run was interrupted (SIGINT, SIGTERM: the file being loaded is rolled back),
1 usage or configuration error.
`;

export const OPTIONS = {
  json: { type: 'boolean' },
  timezone: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, true);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  if (positionals.length === 0) throw new ReconError('USAGE', "no FILE given (see 'recon ingest --help')");
  const config = loadConfig(ctx.env);
  const timezone = values.timezone ?? config.timezone;
  // A wrong zone is a usage error: say so before touching the database.
  createWallTimeResolver(timezone);

  const database = await openDatabase(config);
  const progress = createProgressBar(ctx.stderr);
  let finished = 0;
  try {
    await prepareDatabase(database, config);
    const results = await ingestFiles(database, positionals, {
      timezone,
      limits: config.limits,
      // Once accounts are configured, a row naming another account is rejected rather than kept as its money.
      scope: configuredScope(config.service.accounts.map((account) => account.identifier)),
      signal: ctx.signal,
      onProgress: progress?.update,
      onWarning(message) {
        progress?.clear();
        ctx.stderr.write(`recon ingest: warning: ${message}\n`);
      },
      onResult(result) {
        progress?.clear();
        ctx.stdout.write((values.json ? formatFileJson(result) : formatFileSummary(result)) + '\n');
        finished++;
      },
    });
    return exitCode(results);
  } catch (error) {
    if (!ctx.signal.aborted) throw error;
    // The file being loaded was rolled back with its transaction; the summary lines above stand.
    const rest = positionals.length - finished - 1;
    // On a terminal the bar of the interrupted file is still drawn: the message takes a line of its own.
    progress?.clear();
    ctx.stderr.write(
      `recon ingest: ${describeError(ctx.signal.reason)}: nothing of ${positionals[finished]} was committed` +
        `${rest > 0 ? `, ${rest} more file${rest === 1 ? '' : 's'} not started` : ''}\n`,
    );
    return EXIT.failed;
  } finally {
    progress?.clear();
    await database.close();
  }
}

/** A failed file outranks rejected rows: both are worth a look, a failure more. */
export function exitCode(results: readonly FileResult[]): number {
  if (results.some((result) => result.status === 'failed')) return EXIT.failed;
  if (results.some((result) => result.status === 'loaded' && result.rejected > 0)) return EXIT.rowsRejected;
  return EXIT.ok;
}
