import path from 'node:path';
import { sql } from 'kysely';
import { ingestFiles } from '../../../pipelines/ingest-files.ts';
import { loadConfig } from '../../config/config.ts';
import type { Database } from '../../db/database.ts';
import { migrate } from '../../db/migrate.ts';
import { openDatabase } from '../../db/open-database.ts';
import { packageRoot } from '../../package-root.ts';
import { formatFileSummary } from '../../terminal/file-summary.ts';
import { formatTextTable } from '../../terminal/text-table.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

/**
 * What `npm start` runs until the nightly flow exists: the sample exports of fixtures/ into the embedded
 * database, then a look at what landed. Always the embedded database, even when DATABASE_URL is set,
 * so that a demo never writes sample rows into a real server.
 *
 * The files show every compression, a newer export updating an older one and a file with bad rows.
 * A second run finds them all loaded and reports duplicates. Rejected rows are part of the show, so
 * they do not make the exit code non-zero; a failed file does (2), since these files should all load.
 */
const DEMO_FILES = [
  'semicolon-bom-crlf.csv',
  'comma-quoted.csv',
  'subset-reordered.csv',
  'extra-column.csv',
  'single-member.csv.gz',
  'multi-stream.csv.bz2',
  'two-entries.zip',
  'data-descriptor.zip',
  'newer-export.csv',
  'bad-rows.csv',
];

const USAGE = `usage: recon demo

Ingests the sample exports of fixtures/ into the embedded database under RECON_DATA_DIR (default ./.recon)
and prints the per-file summaries, a few normalized transactions and the rejected rows.
`;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, { help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const config = loadConfig(ctx.env);
  const database = await openDatabase({ databaseUrl: undefined, dataDir: config.dataDir });
  try {
    await migrate(database);
    ctx.stdout.write(`recon demo: sample exports into the embedded database at ${path.join(config.dataDir, 'pgdata')}\n\n`);
    const fixtures = path.relative(process.cwd(), path.join(packageRoot(), 'fixtures')) || '.';
    const results = await ingestFiles(
      database,
      DEMO_FILES.map((name) => path.join(fixtures, name)),
      {
        timezone: config.timezone,
        limits: config.limits,
        signal: ctx.signal,
        onResult: (result) => ctx.stdout.write(formatFileSummary(result) + '\n'),
      },
    );
    ctx.stdout.write(`\n${await recentTransactions(database)}\n\n${await rejectedRows(database)}\n`);
    return results.some((result) => result.status === 'failed') ? EXIT.failed : EXIT.ok;
  } finally {
    await database.close();
  }
}

async function recentTransactions(database: Database): Promise<string> {
  const rows = await database.db
    .selectFrom('recon.transactions as t')
    .innerJoin('recon.files as f', 'f.file_id', 't.file_id')
    .select([
      't.transaction_id',
      sql<string>`to_char(t.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`.as('occurred_at'),
      't.amount_minor',
      't.currency',
      't.exec_code',
      't.operation_type',
      't.schedule_index',
      't.schedule_count',
      'f.name',
      't.line',
    ])
    .orderBy('t.updated_at', 'desc')
    .orderBy('t.transaction_id')
    .limit(8)
    .execute();
  const table = formatTextTable(
    ['TRANSACTIONID', 'OCCURRED (UTC)', 'AMOUNT (minor)', 'CUR', 'EXEC', 'OPERATION', 'SCHEDULE', 'FROM'],
    rows.map((row) => [
      row.transaction_id,
      row.occurred_at,
      row.amount_minor,
      row.currency,
      row.exec_code,
      row.operation_type,
      row.schedule_index === null ? null : `${row.schedule_index}/${row.schedule_count}`,
      `${path.basename(row.name)}:${row.line}`,
    ]),
  );
  return `Most recently written transactions (recon.transactions):\n${table}`;
}

async function rejectedRows(database: Database): Promise<string> {
  const rows = await database.db
    .selectFrom('recon.rejected_rows as r')
    .innerJoin('recon.files as f', 'f.file_id', 'r.file_id')
    .select(['f.name', 'r.line', 'r.reason'])
    .orderBy('r.rejected_row_id', 'desc')
    .limit(7)
    .execute();
  const table = formatTextTable(
    ['FILE', 'LINE', 'REASON'],
    rows.reverse().map((row) => [path.basename(row.name), row.line, row.reason]),
  );
  return `Rejected rows (recon.rejected_rows, raw text kept):\n${table}`;
}
