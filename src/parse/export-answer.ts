import type { ExportRow } from '@recon/protocol';

/**
 * The DATA of a synchronous getTransactions answer, made into what a csv export gives the rest of ingest: a header
 * and records of values, for the same normalizer. And one canonical text of the answer, which recon.files
 * describes (sha256, size) as it describes a file's bytes, so a repeated answer is recognised as a repeated file is:
 *
 *     {"ORDERID":["A","B"],"DATA":[
 *     {"AMOUNT":"10.00","CURRENCY":"EUR",...},
 *     {"AMOUNT":"2.50","CURRENCY":"EUR",...}
 *     ]}
 *
 * Line 1 holds the ORDERIDs asked for, so that the same empty answer to two different requests is not one file;
 * then one record per line, its keys sorted, in the order the service gave them. A record's line number is its
 * line in this text: 2 for the first, as a csv record under its header.
 */
export interface ExportAnswer {
  readonly text: string;
  /** The records' keys in order of first appearance; when DATA is empty, the columns asked for. */
  readonly header: string[];
  readonly records: ExportAnswerRecord[];
}

export interface ExportAnswerRecord {
  readonly line: number;
  /** In `header` order; '' where the record has no such key (see `missing`). */
  readonly values: string[];
  /** Keys of the header this record lacks: other records have them, so its row is incomplete. */
  readonly missing: string[];
  /** The record's line of `text`, without the separating comma. */
  readonly raw: string;
}

const FIRST_RECORD_LINE = 2;

export function readExportAnswer(
  orderIds: readonly string[],
  data: readonly ExportRow[],
  askedColumns: readonly string[],
): ExportAnswer {
  const keys = new Set<string>();
  for (const row of data) for (const key of Object.keys(row)) keys.add(key);
  const header = data.length === 0 ? [...askedColumns] : [...keys];
  const records = data.map((row, index): ExportAnswerRecord => ({
    line: FIRST_RECORD_LINE + index,
    values: header.map((key) => (Object.hasOwn(row, key) ? row[key]! : '')),
    missing: header.filter((key) => !Object.hasOwn(row, key)),
    raw: canonicalRecord(row),
  }));
  const lines = [
    `{"ORDERID":${JSON.stringify(orderIds)},"DATA":[`,
    ...records.map((record, index) => record.raw + (index < records.length - 1 ? ',' : '')),
    ']}',
  ];
  return { text: lines.join('\n'), header, records };
}

/**
 * Keys sorted by code unit and written out one by one: JSON.stringify of an object would put integer-like keys
 * first whatever their order, and the text must not depend on the order the service listed them in.
 */
function canonicalRecord(row: ExportRow): string {
  const keys = Object.keys(row).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${JSON.stringify(row[key])}`).join(',')}}`;
}
