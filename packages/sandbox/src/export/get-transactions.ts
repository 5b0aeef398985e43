import { decodeRequest, ProtocolError, retry, type Params } from '@recon/protocol';
import type { SandboxClock } from '../clock.ts';
import { ProcessRefusal } from '../process/process-answer.ts';
import type { SandboxAccounts } from '../sandbox-accounts.ts';
import type { SandboxStore, SandboxTransaction } from '../store.ts';
import { settleExpiry } from '../time-rules.ts';
import { createCallbackDispatch, type CallbackDispatch } from './callback-switches.ts';
import { uploadExport } from './callback-upload.ts';
import { compressExport } from './compress.ts';
import type { ExportFile } from './compress.ts';
import { formatCsv } from './csv-writer.ts';
import type { ExportDeliveries } from './export-deliveries.ts';
import { toExportRow } from './export-row.ts';
import type { ExportRow } from './export-row.ts';
import { mailExport } from './mail-export.ts';
import type { SmtpServerAddress } from './mail-export.ts';
import { parseExportRequest } from './parse-export-request.ts';
import type { ExportRequest } from './parse-export-request.ts';

export interface GetTransactionsContext {
  readonly store: SandboxStore;
  readonly clock: SandboxClock;
  /** The accounts served: a request is authenticated with its IDENTIFIER's secret and sees its SCOPE's transactions. */
  readonly accounts: SandboxAccounts;
  /** Where MAILTO exports are sent; without it a MAILTO request is refused. */
  readonly smtp?: SmtpServerAddress;
  /** Runs CALLBACKURL and MAILTO deliveries in the background; `deliveries.idle()` awaits them. */
  readonly deliveries: ExportDeliveries;
  /** How CALLBACKURL deliveries go out; default: multipart, none lost, none twice. */
  readonly callbacks?: CallbackDispatch;
  /** A CALLBACKURL delivery lost on purpose (the callbacks' `dropFirst`); `label` names it as in errors. */
  readonly onCallbackLost?: (label: string) => void;
  /** Transactions created less than this long ago (sandbox clock) are left out of every export. Default 0. */
  readonly exportLagMs?: number;
}

const OPERATIONTYPE = 'getTransactions';

/** The export endpoint's answer to a raw form body: a body that does not decode is answered with its EXECCODE. */
export async function handleExportRequest(ctx: GetTransactionsContext, body: string): Promise<Record<string, unknown>> {
  let params: Params;
  try {
    params = decodeRequest(body).params;
  } catch (error) {
    if (error instanceof ProtocolError) return answer(error.execCode, error.message);
    throw error;
  }
  return handleGetTransactions(ctx, params);
}

/**
 * The JSON answer of `POST {base}/front/service/rest/export` with method=getTransactions. Never throws for a
 * bad request: it answers the service's EXECCODE (1001, 1002, 1003, 1004) with a MESSAGE naming the field.
 * Without MAILTO or CALLBACKURL the rows come back in DATA; with one of them the answer is 0000 at once and the
 * csv, compressed as asked, follows in the background.
 */
export async function handleGetTransactions(
  ctx: GetTransactionsContext,
  params: Params,
): Promise<Record<string, unknown>> {
  let request: ExportRequest;
  try {
    request = parseExportRequest(params, ctx.accounts);
  } catch (error) {
    if (error instanceof ProtocolError || error instanceof ProcessRefusal) return answer(error.execCode, error.message);
    throw error;
  }
  const { delivery } = request;
  const smtp = ctx.smtp;
  if (delivery.kind === 'mail' && smtp === undefined) {
    return answer('1002', 'invalid parameter MAILTO: this sandbox has no SMTP server configured (--smtp HOST:PORT)');
  }

  const rows = selectRows(ctx, request);
  if (delivery.kind === 'response') {
    const found = rows.length === 1 ? '1 transaction found' : `${rows.length} transactions found`;
    return { ...answer('0000', `Operation succeeded: ${found}`), DATA: rows };
  }

  const requestedAt = ctx.clock.now();
  const csvName = `transactions-${compactTimestamp(requestedAt)}.csv`;
  const csv = Buffer.from(formatCsv(request.columns, rows), 'utf8');
  // Compressed once, before the first attempt: a compression failure is reported at once, never retried. A second
  // copy (duplicate callbacks) starts once the first has succeeded or given up, with the same bytes.
  const deliver = (label: string, send: (file: ExportFile, signal: AbortSignal) => Promise<void>, copies: 1 | 2) =>
    ctx.deliveries.start(label, async (signal) => {
      const file = await compressExport(csvName, csv, delivery.compression, requestedAt);
      const sendWithRetries = (copySignal: AbortSignal) =>
        retry(() => send(file, copySignal), ctx.deliveries.retry, { signal: copySignal });
      try {
        await sendWithRetries(signal);
      } finally {
        if (copies === 2 && !signal.aborted) ctx.deliveries.start(`${label} (second copy)`, sendWithRetries);
      }
    });
  if (delivery.kind === 'callback') {
    const callbacks = ctx.callbacks ?? createCallbackDispatch();
    const fields = { OPERATIONTYPE, IDENTIFIER: request.account.identifier, ROWS: String(rows.length) };
    const label = `to ${delivery.url}`;
    if (callbacks.loseNext()) ctx.onCallbackLost?.(label);
    else {
      const upload = (file: ExportFile, signal: AbortSignal) =>
        uploadExport(delivery.url, file, fields, callbacks.format, signal);
      deliver(label, upload, callbacks.duplicate ? 2 : 1);
    }
    return answer('0000', `Operation succeeded: the export of ${rows.length} rows will be sent to ${delivery.url}`);
  }
  deliver(
    `by e-mail to ${delivery.to}`,
    (file, signal) => mailExport(smtp!, delivery.to, file, request.account.identifier, signal),
    1,
  );
  return answer('0000', `Operation succeeded: the export of ${rows.length} rows will be e-mailed to ${delivery.to}`);
}

/**
 * The transactions of the request's SCOPE (the requesting account's, or its group's) named by ORDERID or TRANSACTIONID
 * (either list matches), oldest first, each
 * row as it stands now: a pending approval past its 6 days is settled before it is read. A transaction younger
 * than the export lag is not there yet, as in a service whose exports trail its live data; its age counts from its
 * creation (its DATE), so a later change of state does not hide it again.
 */
function selectRows(ctx: GetTransactionsContext, request: ExportRequest): ExportRow[] {
  const now = ctx.clock.now();
  const createdBy = now.getTime() - (ctx.exportLagMs ?? 0);
  const selected = new Map<string, SandboxTransaction>();
  for (const orderId of request.orderIds) {
    for (const transaction of ctx.store.byOrderId(orderId)) selected.set(transaction.transactionId, transaction);
  }
  for (const transactionId of request.transactionIds) {
    const transaction = ctx.store.get(transactionId);
    if (transaction) selected.set(transactionId, transaction);
  }
  const identifiers = ctx.accounts.exportedBy(request.account, request.scope);
  const lookup = (transactionId: string) => ctx.store.get(transactionId);
  return [...selected.values()]
    .filter((transaction) => identifiers.has(transaction.identifier) && transaction.createdAt.getTime() <= createdBy)
    .map((transaction) => settleExpiry(ctx.store, transaction, now))
    .sort(byCreation)
    .map((transaction) => {
      const row = toExportRow(transaction, lookup, request.timeZone);
      // A column the sandbox does not know is answered empty, as the service does; hasOwn, so that a name such as
      // `constructor` is not read from the prototype.
      return Object.fromEntries(
        request.columns.map((column) => [column, Object.hasOwn(row, column) ? row[column]! : '']),
      );
    });
}

function byCreation(a: SandboxTransaction, b: SandboxTransaction): number {
  return a.createdAt.getTime() - b.createdAt.getTime() || (a.transactionId < b.transactionId ? -1 : 1);
}

function answer(execCode: string, message: string): Record<string, unknown> {
  return { OPERATIONTYPE, EXECCODE: execCode, MESSAGE: message };
}

/** 20260504-102030: sortable, and safe in a file name. */
function compactTimestamp(at: Date): string {
  return at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}
