import { EXPORT_COLUMNS, type DocumentedExportColumn } from '@recon/protocol';
import type { TransactionColumn } from './transaction-row.ts';

/**
 * The columns of recon.transactions each column of the export's documented record fills. The names are the
 * protocol's EXPORT_COLUMNS: the type holds this to exactly those. SCHEDULE and RETRY `[n-m]` fill two.
 */
export const TRANSACTION_COLUMNS_BY_EXPORT_COLUMN: {
  readonly [Column in DocumentedExportColumn]: readonly TransactionColumn[];
} = {
  IDENTIFIER: ['identifier'],
  DATE: ['occurred_at'],
  TRANSACTIONID: ['transaction_id'],
  ORDERID: ['order_id'],
  OPERATIONTYPE: ['operation_type'],
  AMOUNT: ['amount_minor'],
  CURRENCY: ['currency'],
  'BILLINGFEES INCL. VAT': ['fees_minor'],
  EXECCODE: ['exec_code'],
  CLIENTEMAIL: ['client_email'],
  CLIENTADDRESS: ['client_address'],
  CARDFULLNAME: ['card_full_name'],
  CARDTYPE: ['card_type'],
  CARDCOUNTRY: ['card_country'],
  '3DSECURE': ['three_d_secure'],
  '3DSGLOBALSTATUS': ['three_ds_global_status'],
  'RULE APPLIED': ['rule_applied'],
  SCHEDULE: ['schedule_index', 'schedule_count'],
  RETRY: ['retry_index', 'retry_count'],
};

const DOCUMENTED_COLUMNS: ReadonlySet<string> = new Set(EXPORT_COLUMNS);

/** The header name without a stray byte order mark and surrounding spaces: the name as the file means it. */
export function cleanHeaderName(name: string): string {
  return (name.charCodeAt(0) === 0xfeff ? name.slice(1) : name).trim();
}

/**
 * Which column of the documented record a header name is, case-insensitively; null for a column recon keeps in
 * `extra`, the protocol's later columns (NATURE...) included.
 */
export function exportColumnOf(name: string): DocumentedExportColumn | null {
  const upper = cleanHeaderName(name).toUpperCase();
  return DOCUMENTED_COLUMNS.has(upper) ? (upper as DocumentedExportColumn) : null;
}
