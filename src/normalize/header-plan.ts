import { ReconError } from '../errors.ts';
import { cleanHeaderName, exportColumnOf, TRANSACTION_COLUMNS_BY_EXPORT_COLUMN } from './export-columns.ts';
import { TRANSACTION_COLUMNS, type TransactionColumn } from './transaction-row.ts';

/** What a file's header says it carries, checked once before any record is read. */
export interface HeaderPlan {
  /** The header as the parser read it. */
  readonly header: string[];
  /** The recon.transactions columns this file fills, in table order: the only ones an upsert may set. */
  readonly presentColumns: TransactionColumn[];
  /** Names of the columns recon has no column for, as written (without BOM and surrounding spaces), in file order. */
  readonly extraHeaders: string[];
}

/** The column of the old export format (amounts in cents, service-facts.md); its presence means that format. */
const OLD_FORMAT_COLUMN = 'BILLINGFEESTTC';
/** A file that is not an export at all can have a header of any length; the error stays one readable line. */
const MAX_SHOWN_HEADER = 120;

/**
 * Checks a header and says which columns the file fills. Names match the export's column names
 * case-insensitively, ignoring surrounding spaces and a byte order mark; any other column is kept as `extra`,
 * never dropped. A header that cannot be read safely fails the whole file (ReconError CSV_HEADER naming `label`):
 * the old format, whose amounts are in cents and would be read a hundred times too large; a column without a
 * name; a column twice (which value would count?); no TRANSACTIONID, the key of every row.
 */
export function planHeader(header: string[], label: string): HeaderPlan {
  const fail = (message: string): never => {
    throw new ReconError('CSV_HEADER', `${label}: ${message}`);
  };
  const names = header.map(cleanHeaderName);
  if (names.some((name) => name.toUpperCase() === OLD_FORMAT_COLUMN)) {
    fail(
      `old export format (column ${OLD_FORMAT_COLUMN}, AMOUNT in cents) is not supported: ` +
        'request a new export, whose amounts are decimal major units with "BILLINGFEES INCL. VAT"',
    );
  }

  const present = new Set<TransactionColumn>();
  const extraHeaders: string[] = [];
  const firstPositionByKey = new Map<string, number>();
  names.forEach((name, index) => {
    if (name === '') fail(`column ${index + 1} of the header has no name`);
    const exportColumn = exportColumnOf(name);
    const key = exportColumn ?? name;
    const firstPosition = firstPositionByKey.get(key);
    if (firstPosition !== undefined) {
      fail(
        `column ${JSON.stringify(name)} appears twice in the header (columns ${firstPosition + 1} and ${index + 1})`,
      );
    }
    firstPositionByKey.set(key, index);
    if (exportColumn === null) extraHeaders.push(name);
    else for (const column of TRANSACTION_COLUMNS_BY_EXPORT_COLUMN[exportColumn]) present.add(column);
  });

  if (!present.has('transaction_id')) {
    const found = names.join(', ');
    const shown = found.length > MAX_SHOWN_HEADER ? `${found.slice(0, MAX_SHOWN_HEADER)}...` : found;
    fail(`the header has no TRANSACTIONID column (found: ${JSON.stringify(shown)})`);
  }
  return {
    header,
    presentColumns: TRANSACTION_COLUMNS.filter((column) => present.has(column)),
    extraHeaders,
  };
}
