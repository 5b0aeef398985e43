import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';
import { planBulkJoins } from './bulk-plans.ts';
import type { RepeatedIdFilter } from './repeated-id-filter.ts';
import { escapeCopyText } from './copy-text.ts';

/**
 * A file's fingerprints: for every record, its transaction id and the digest of the record (row-digest.ts), in a
 * temporary table of the load's transaction. Joined to recon.transactions they say which records would leave their
 * stored row as it is, so that a file mostly loaded already (the nightly windows overlap) is normalized, staged and
 * merged only for the rest.
 */
const FINGERPRINT_TABLE = 'recon_fingerprints';

export async function beginFingerprints(connection: Connection): Promise<void> {
  await connection.db.schema
    .createTable(FINGERPRINT_TABLE)
    .temporary()
    .onCommit('drop')
    .addColumn('entry_index', 'integer', (column) => column.notNull())
    .addColumn('line', 'integer', (column) => column.notNull())
    .addColumn('transaction_id', 'text', (column) => column.notNull())
    .addColumn('row_digest', 'bigint', (column) => column.notNull())
    .execute();
}

interface FingerprintsTable {
  entry_index: number;
  line: number;
  transaction_id: string;
  row_digest: string;
}

export const FINGERPRINT_COPY_SQL = `COPY ${FINGERPRINT_TABLE} (entry_index, line, transaction_id, row_digest) FROM STDIN`;

/** One record's COPY line (the csv scanner has refused NUL bytes already, so the id always escapes). */
export function fingerprintLine(entryIndex: number, line: number, transactionId: string, digest: string): string {
  return `${entryIndex}\t${line}\t${escapeCopyText(transactionId)}\t${digest}\n`;
}

/**
 * The digest of a record outside the file's scope (row-scope.ts): no stored row has it (digests are 53-bit and never
 * negative), so the record is loaded, and rejected there with its reason, as a whole load would.
 */
export const OUTSIDE_SCOPE_DIGEST = '-1';

export interface FingerprintVerdict {
  /** The lines to load, by entry index: every line of each id whose last record would change or add a row. */
  readonly neededLines: ReadonlyMap<number, ReadonlySet<number>>;
  /** Distinct ids whose last record would leave their stored row as it is. */
  readonly unchangedIds: number;
}

/**
 * Which fingerprinted records must be loaded; null when more than `maxNeededLines` would be (loading the whole file
 * is then as cheap, and the lines need not be held in memory). `repeatedIds` says whether an id may occur twice:
 * then the last record of each id decides, and all its records are loaded so that the merge keeps the last one
 * the normalizer accepts; every record of an id is loaded too when one of them is outside the file's scope
 * (`scoped`), wherever it stands, so that it is rejected as a whole load rejects it.
 */
export async function classifyFingerprints(
  connection: Connection,
  options: {
    readonly fingerprinted: number;
    readonly repeatedIds: boolean;
    readonly maxNeededLines: number;
    readonly scoped?: boolean;
  },
): Promise<FingerprintVerdict | null> {
  await planBulkJoins(connection, FINGERPRINT_TABLE);
  const table = sql.table(FINGERPRINT_TABLE);
  const differs = sql`t.transaction_id IS NULL OR t.row_digest IS DISTINCT FROM f.row_digest`;
  const outsideScope = options.scoped
    ? sql` UNION SELECT transaction_id FROM ${table} WHERE row_digest = ${OUTSIDE_SCOPE_DIGEST}::bigint`
    : sql``;
  const limit = options.maxNeededLines + 1;
  // The LIMIT only caps what comes back: left to plan the join, it chose a nested loop of an index probe per
  // fingerprint, expecting to stop early, where every fingerprint is read. A MATERIALIZED join is planned for all of
  // its rows, and hashed.
  const query = options.repeatedIds
    ? sql<NeededLine>`WITH last AS (
        SELECT DISTINCT ON (transaction_id) transaction_id, row_digest FROM ${table}
        ORDER BY transaction_id, entry_index DESC, line DESC
      ), needed AS (
        SELECT f.transaction_id FROM last f LEFT JOIN recon.transactions t ON t.transaction_id = f.transaction_id
        WHERE ${differs}${outsideScope}
      ), lines AS MATERIALIZED (
        SELECT f.entry_index, f.line, f.transaction_id FROM ${table} f JOIN needed USING (transaction_id)
      )
      SELECT entry_index, line, transaction_id FROM lines LIMIT ${limit}`
    : sql<NeededLine>`WITH needed AS MATERIALIZED (
        SELECT f.entry_index, f.line, f.transaction_id
        FROM ${table} f LEFT JOIN recon.transactions t ON t.transaction_id = f.transaction_id
        WHERE ${differs}
      )
      SELECT entry_index, line, transaction_id FROM needed LIMIT ${limit}`;
  const { rows } = await query.execute(connection.db);
  if (rows.length > options.maxNeededLines) return null;

  const neededLines = new Map<number, Set<number>>();
  for (const { entry_index, line } of rows) {
    let lines = neededLines.get(entry_index);
    if (!lines) neededLines.set(entry_index, (lines = new Set()));
    lines.add(line);
  }
  const distinct = options.repeatedIds
    ? Number(
        (await sql<{ ids: string }>`SELECT count(DISTINCT transaction_id) AS ids FROM ${table}`.execute(connection.db))
          .rows[0]!.ids,
      )
    : options.fingerprinted;
  const neededIds = options.repeatedIds ? new Set(rows.map((row) => row.transaction_id)).size : rows.length;
  return { neededLines, unchangedIds: distinct - neededIds };
}

interface NeededLine {
  entry_index: number;
  line: number;
  transaction_id: string;
}

/**
 * Whether an id occurs twice among the fingerprints. The filter's candidates are the only ids that may, but at five
 * million rows a few hundred of them are false positives, and treating them as repeats would sort every fingerprint
 * to keep the last of each id: they are checked first, in one scan of the narrow table.
 */
export async function fingerprintsRepeatIds(connection: Connection, ids: RepeatedIdFilter): Promise<boolean> {
  if (ids.overflowed) return true;
  return ids.candidates.length > 0 && (await countRepeatedFingerprints(connection, ids.candidates)) > 0;
}

/** How many fingerprints of the `candidates` ids repeat an id fingerprinted before them. */
async function countRepeatedFingerprints(connection: Connection, candidates: readonly string[]): Promise<number> {
  const { repeated } = await connection.db
    .withTables<{ [FINGERPRINT_TABLE]: FingerprintsTable }>()
    .selectFrom(FINGERPRINT_TABLE)
    .select(sql<string>`count(*) - count(DISTINCT transaction_id)`.as('repeated'))
    .where('transaction_id', '=', sql<string>`ANY (${[...candidates]}::text[])`)
    .executeTakeFirstOrThrow();
  return Number(repeated);
}

/** How many of `ids` are stored already: one index probe each. */
export async function countStored(connection: Connection, ids: readonly string[]): Promise<number> {
  const { stored } = await connection.db
    .selectFrom('recon.transactions')
    .select(({ fn }) => fn.countAll<string>().as('stored'))
    .where('transaction_id', '=', sql<string>`ANY (${[...ids]}::text[])`)
    .executeTakeFirstOrThrow();
  return Number(stored);
}
