import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';
import { STAGING_TABLE, withStaging } from './staging-table.ts';

/**
 * A request's file may write only its accounts' transactions (row-scope.ts). A row naming one of them, or none,
 * still changes another account's money when its TRANSACTIONID is a stored transaction of that other account: a
 * transaction never changes account at the service, so such a row is not the answer to this request. The file's
 * last merge, which alone changes stored rows (every earlier insert takes new ids only), rejects those rows first.
 * A stored transaction of no known account (loaded before accounts, or from a file that did not say) is left to the
 * row, as before.
 */
export interface StoredAccountGuard {
  /** The accounts whose stored transactions the file may change. */
  readonly accounts: readonly string[];
  readonly reason: string;
  /**
   * The records' text at these lines (entry index to lines), for the rejected rows: read only when a row is
   * rejected here, which a file from the service never has.
   */
  readonly rawLines: (lines: ReadonlyMap<number, ReadonlySet<number>>) => Promise<RawLines>;
}

/** Record text by entry index, then line. */
export type RawLines = ReadonlyMap<number, ReadonlyMap<number, string>>;

/**
 * Marks the staged accepted rows of stored transactions of other accounts as rejected, with the record's text, in
 * the load's transaction and merge turn; returns how many. One join over the staged rows; the text is fetched and
 * written only when there are some.
 */
export async function rejectRowsOfOtherAccounts(connection: Connection, guard: StoredAccountGuard): Promise<number> {
  const db = withStaging(connection.db);
  const rejected = await db
    .updateTable(`${STAGING_TABLE} as s`)
    .from('recon.transactions as t')
    .set({ reject_reason: guard.reason })
    .whereRef('t.transaction_id', '=', 's.transaction_id')
    .where('s.reject_reason', 'is', null)
    .where(sql<boolean>`t.identifier <> ALL (${[...guard.accounts]}::text[])`)
    .returning(['s.entry_index', 's.line'])
    .execute();
  if (rejected.length === 0) return 0;
  const wanted = new Map<number, Set<number>>();
  for (const { entry_index, line } of rejected) {
    let lines = wanted.get(entry_index);
    if (!lines) wanted.set(entry_index, (lines = new Set()));
    lines.add(line);
  }
  const raw = await guard.rawLines(wanted);
  const text = (entry: number, line: number): string => {
    const found = raw.get(entry)?.get(line);
    if (found === undefined)
      throw new Error(`the text of line ${line} of entry ${entry} was not found on reading again`);
    return found;
  };
  const entries = rejected.map((row) => row.entry_index);
  const lines = rejected.map((row) => row.line);
  const texts = rejected.map((row) => text(row.entry_index, row.line));
  const reread = sql<{
    entry_index: number;
    line: number;
    raw: string;
  }>`unnest(${entries}::integer[], ${lines}::integer[], ${texts}::text[])`;
  await db
    .updateTable(`${STAGING_TABLE} as s`)
    .from(reread.as(sql`r (entry_index, line, raw)`))
    .set({ raw: sql`r.raw` })
    .whereRef('s.entry_index', '=', 'r.entry_index')
    .whereRef('s.line', '=', 'r.line')
    .where('s.raw', 'is', null)
    .execute();
  return rejected.length;
}
