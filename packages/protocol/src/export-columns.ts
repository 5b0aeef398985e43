/**
 * The columns of getTransactions. EXPORT_COLUMNS are the documented record (payment-api-3.0.md), in the default
 * order: what an export without COLUMNS holds. LATER_EXPORT_COLUMNS appear in the service's files beyond it
 * and are exported only when asked by name. A name the service does not know is not an error: it is answered
 * with an empty value, as the service does, so a COLUMNS entry is any non-empty name.
 */
export const EXPORT_COLUMNS = [
  'IDENTIFIER',
  'DATE',
  'TRANSACTIONID',
  'ORDERID',
  'OPERATIONTYPE',
  'AMOUNT',
  'CURRENCY',
  'BILLINGFEES INCL. VAT',
  'EXECCODE',
  'CLIENTEMAIL',
  'CLIENTADDRESS',
  'CARDFULLNAME',
  'CARDTYPE',
  'CARDCOUNTRY',
  '3DSECURE',
  '3DSGLOBALSTATUS',
  'RULE APPLIED',
  'SCHEDULE',
  'RETRY',
] as const;

export const LATER_EXPORT_COLUMNS = ['NATURE', 'CHARGEBACKDATE', 'TRANSFER REFERENCE', 'EXTRADATA'] as const;

/** A column of the documented record. */
export type DocumentedExportColumn = (typeof EXPORT_COLUMNS)[number];
export type ExportColumn = DocumentedExportColumn | (typeof LATER_EXPORT_COLUMNS)[number];

const byUpperCase: ReadonlyMap<string, ExportColumn> = new Map(
  [...EXPORT_COLUMNS, ...LATER_EXPORT_COLUMNS].map((column) => [column.toUpperCase(), column]),
);

/** The column a COLUMNS entry names, in any letter case (`amount` → `AMOUNT`); undefined for a name not known. */
export function canonicalExportColumn(name: string): ExportColumn | undefined {
  return byUpperCase.get(name.toUpperCase());
}

export const COLUMN_SEPARATOR = ';';

export function joinColumns(columns: readonly ExportColumn[]): string {
  return columns.join(COLUMN_SEPARATOR);
}

/** Splits a COLUMNS value; the caller reads each name with canonicalExportColumn. */
export function splitColumns(value: string): string[] {
  return value.split(COLUMN_SEPARATOR);
}
