import type { TransactionColumn } from './transaction-row.ts';

/**
 * The export's column names (payment-api-3.0.md, "Exported transaction record") and the columns of
 * recon.transactions each one fills. SCHEDULE and RETRY `[n-m]` fill two.
 */
export const EXPORT_COLUMNS = {
  TRANSACTIONID: ['transaction_id'],
  IDENTIFIER: ['identifier'],
  ORDERID: ['order_id'],
  OPERATIONTYPE: ['operation_type'],
  DATE: ['occurred_at'],
  AMOUNT: ['amount_minor'],
  CURRENCY: ['currency'],
  EXECCODE: ['exec_code'],
  'BILLINGFEES INCL. VAT': ['fees_minor'],
  SCHEDULE: ['schedule_index', 'schedule_count'],
  RETRY: ['retry_index', 'retry_count'],
  CLIENTEMAIL: ['client_email'],
  CLIENTADDRESS: ['client_address'],
  CARDFULLNAME: ['card_full_name'],
  CARDTYPE: ['card_type'],
  CARDCOUNTRY: ['card_country'],
  '3DSECURE': ['three_d_secure'],
  '3DSGLOBALSTATUS': ['three_ds_global_status'],
  'RULE APPLIED': ['rule_applied'],
} as const satisfies Record<string, readonly TransactionColumn[]>;

export type ExportColumn = keyof typeof EXPORT_COLUMNS;

/** The header name without a stray byte order mark and surrounding spaces: the name as the file means it. */
export function cleanHeaderName(name: string): string {
  return (name.charCodeAt(0) === 0xfeff ? name.slice(1) : name).trim();
}

/** Which export column a header name is, case-insensitively; null for a column recon keeps in `extra`. */
export function exportColumnOf(name: string): ExportColumn | null {
  const upper = cleanHeaderName(name).toUpperCase();
  return Object.hasOwn(EXPORT_COLUMNS, upper) ? (upper as ExportColumn) : null;
}
