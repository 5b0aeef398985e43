import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { EXPORT_COLUMNS, type DocumentedExportColumn } from '@recon/protocol';
import {
  feesMinorOf,
  MERCHANT_IDENTIFIER,
  reconcileScenarios,
  transactionIdOf,
  type BenchOrder,
  type BenchTransaction,
} from './reconcile-scenarios.ts';

/**
 * The benchmark's scenarios as the files recon reads: export rows as the service writes them (every column of
 * EXPORT_COLUMNS, `;`, AMOUNT in major units, EXECCODE without leading zeros, DATE as UTC wall time) and the
 * merchant's orders csv of docs/orders.md. A row holds what bench/load-reconcile-data.ts COPYs for the same
 * transaction and nothing more, so a file of them loads the same rows as that COPY.
 */

/** Digits after the point, by currency: the scenarios use EUR, USD, GBP and JPY only. */
const EXPONENTS: Readonly<Record<string, number>> = { EUR: 2, USD: 2, GBP: 2, JPY: 0 };

/** Exact major units of an integer amount of minor units, as the service writes it (`123.90`, JPY `1500`). */
export function majorUnits(amountMinor: number, currency: string): string {
  const exponent = EXPONENTS[currency];
  if (exponent === undefined) throw new Error(`no exponent known for currency ${currency}`);
  if (exponent === 0) return String(amountMinor);
  const digits = String(Math.abs(amountMinor)).padStart(exponent + 1, '0');
  return `${amountMinor < 0 ? '-' : ''}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/** The service's header line: names with a space are quoted, as it writes them. */
export const EXPORT_HEADER = EXPORT_COLUMNS.map((column) => (column.includes(' ') ? `"${column}"` : column)).join(';');

/** `YYYY-MM-DD hh:mm:ss` in UTC, the export's DATE (the scenarios' instants are whole seconds). */
const exportDate = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

/** One export row (with its line break) of a transaction under the given TRANSACTIONID. */
export function exportLine(transaction: BenchTransaction, transactionId: string): string {
  const values: Partial<Record<DocumentedExportColumn, string>> = {
    IDENTIFIER: MERCHANT_IDENTIFIER,
    DATE: exportDate(transaction.occurredMs),
    TRANSACTIONID: transactionId,
    ORDERID: transaction.orderId,
    OPERATIONTYPE: transaction.operation,
    AMOUNT: majorUnits(transaction.amountMinor, transaction.currency),
    CURRENCY: transaction.currency,
    'BILLINGFEES INCL. VAT': majorUnits(feesMinorOf(transaction.amountMinor), transaction.currency),
    EXECCODE: String(Number(transaction.execCode)),
  };
  return EXPORT_COLUMNS.map((column) => values[column] ?? '').join(';') + '\n';
}

export const ORDERS_HEADER = 'order_id;amount;currency;status;refunded_amount;payment_method;created_at';

/** One orders csv row (with its line break). */
export function orderCsvLine(order: BenchOrder): string {
  return (
    [
      order.orderId,
      majorUnits(order.amountMinor, order.currency),
      order.currency,
      order.status,
      order.refundedMinor === 0 ? '' : majorUnits(order.refundedMinor, order.currency),
      order.method,
      new Date(order.createdMs).toISOString(),
    ].join(';') + '\n'
  );
}

/**
 * Writes the whole seeded sequence of `orders` orders as one export file and one orders csv: what
 * loadReconcileData COPYs, to be loaded through `recon ingest` and `recon import-orders` instead.
 */
export async function writeScenarioFiles(
  orders: number,
  exportPath: string,
  ordersPath: string,
): Promise<{ transactions: number }> {
  const exportOut = createWriteStream(exportPath);
  const ordersOut = createWriteStream(ordersPath);
  const write = async (out: NodeJS.WritableStream, text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(exportOut, EXPORT_HEADER + '\n');
  await write(ordersOut, ORDERS_HEADER + '\n');
  let transactions = 0;
  let exportChunk = '';
  let ordersChunk = '';
  for (const { order, transactions: list } of reconcileScenarios(orders)) {
    if (order) ordersChunk += orderCsvLine(order);
    for (const transaction of list) exportChunk += exportLine(transaction, transactionIdOf(++transactions));
    if (exportChunk.length > 1 << 20) {
      await write(exportOut, exportChunk);
      exportChunk = '';
    }
    if (ordersChunk.length > 1 << 20) {
      await write(ordersOut, ordersChunk);
      ordersChunk = '';
    }
  }
  await write(exportOut, exportChunk);
  await write(ordersOut, ordersChunk);
  exportOut.end();
  ordersOut.end();
  await Promise.all([once(exportOut, 'finish'), once(ordersOut, 'finish')]);
  return { transactions };
}
