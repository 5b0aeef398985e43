import type { TransactionRow } from '../normalize/transaction-row.ts';
import { COPY_NULL, copyValue, escapeCopyText, NulCharacterError } from './copy-text.ts';
import { recordDigest } from './row-digest.ts';
import { stagedColumns, type StagedEntry, type StagedRows } from './staged-file.ts';

/**
 * Turns normalized rows and rejected records of one entry into COPY text lines for the staging table,
 * in the column order `stageEntry` gives COPY. Built once per entry; the per-row work is
 * one string concatenation per column. Each accepted row is noted in `staged` once its text is made, and carries
 * the digest of the record it came from (row-digest.ts, `digestSeed` from its header and zone).
 */
export interface StagingRowEncoder {
  /** `values`: the source record, as the normalizer read it. */
  accepted(row: TransactionRow, line: number, values: readonly string[]): string;
  rejected(line: number, raw: string, reason: string): string;
  /**
   * The same accepted row as a line of recon.transactions itself, in the order of `straightCopySql`, with its lineage:
   * for a `straight-into-table` chunk (straight-copy.ts).
   */
  straight(row: TransactionRow, line: number, values: readonly string[], lineage: RowLineage): string;
}

/** The lineage a row COPYed straight into the table carries: its file, as a COPY value, and its zip entry's name, encoded. */
export interface RowLineage {
  readonly fileId: string;
  readonly entry: string;
}

export function rowLineage(fileId: string, entryName: string | null): RowLineage {
  return { fileId, entry: entryName === null ? COPY_NULL : escapeCopyText(entryName) };
}

export function createStagingRowEncoder(
  entryIndex: number,
  entry: StagedEntry,
  staged: StagedRows,
  digestSeed: number,
): StagingRowEncoder {
  const columns = stagedColumns(entry);
  const { withExtra } = entry;
  const prefix = `${entryIndex}\t`;
  const acceptedSuffix = `\t${COPY_NULL}\t${COPY_NULL}\n`;
  // A rejected row has no values and no digest.
  const rejectedNulls = `\t${COPY_NULL}`.repeat(columns.length + (withExtra ? 1 : 0) + 1);
  const count = columns.length;
  const { ids, acceptedByEntry } = staged;
  acceptedByEntry[entryIndex] = 0;
  /** The row's values from transaction_id on, and its digest, separated by tabs. */
  const valuesOf = (row: TransactionRow, values: readonly string[]): string => {
    let text = copyValue(row[columns[0]!]);
    for (let i = 1; i < count; i++) text += '\t' + copyValue(row[columns[i]!]);
    if (withExtra) text += '\t' + (row.extra === null ? COPY_NULL : encodeExtra(row.extra));
    ids.add(row.transaction_id);
    acceptedByEntry[entryIndex]!++;
    return text + '\t' + recordDigest(values, digestSeed);
  };
  return {
    accepted(row, line, values) {
      return prefix + line + '\t' + valuesOf(row, values) + acceptedSuffix;
    },
    straight(row, line, values, lineage) {
      return `${valuesOf(row, values)}\t${lineage.fileId}\t${lineage.entry}\t${line}\n`;
    },
    rejected(line, raw, reason) {
      return `${prefix}${line}${rejectedNulls}\t${escapeCopyText(storable(reason))}\t${escapeCopyText(storable(raw))}\n`;
    },
  };
}

function encodeExtra(extra: Record<string, string>): string {
  // jsonb refuses the \u0000 escape just as text refuses the character.
  for (const header in extra) if (header.includes('\0') || extra[header]!.includes('\0')) throw new NulCharacterError();
  return escapeCopyText(JSON.stringify(extra));
}

/** A rejected row's text is evidence to keep, not data to load: a NUL becomes U+FFFD rather than losing the row. */
function storable(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}
