/**
 * The exportable columns of getTransactions, in the default order. The spec shows no other column, so a
 * COLUMNS entry outside this list is an invalid parameter (1002).
 */
export const EXPORT_COLUMNS = [
  'IDENTIFIER', 'DATE', 'TRANSACTIONID', 'ORDERID', 'OPERATIONTYPE', 'AMOUNT', 'CURRENCY', 'BILLINGFEES INCL. VAT',
  'EXECCODE', 'CLIENTEMAIL', 'CLIENTADDRESS', 'CARDFULLNAME', 'CARDTYPE', 'CARDCOUNTRY', '3DSECURE',
  '3DSGLOBALSTATUS', 'RULE APPLIED', 'SCHEDULE', 'RETRY',
] as const;

export type ExportColumn = (typeof EXPORT_COLUMNS)[number];

const byUpperCase: ReadonlyMap<string, ExportColumn> = new Map(EXPORT_COLUMNS.map((column) => [column.toUpperCase(), column]));

/** The column a COLUMNS entry names, in any letter case (`amount` → `AMOUNT`); undefined for no known column. */
export function canonicalExportColumn(name: string): ExportColumn | undefined {
  return byUpperCase.get(name.toUpperCase());
}

export const COLUMN_SEPARATOR = ';';

export function joinColumns(columns: readonly ExportColumn[]): string {
  return columns.join(COLUMN_SEPARATOR);
}

/** Splits a COLUMNS value; the caller checks each name with canonicalExportColumn. */
export function splitColumns(value: string): string[] {
  return value.split(COLUMN_SEPARATOR);
}
