import { gunzipSync, gzipSync } from 'node:zlib';
import { formatMinorUnits, type SandboxTransaction } from '@recon/sandbox';

/** Who asked for the export a forged delivery rides on. */
export interface ForgedRequest {
  readonly identifier: string;
  readonly scope: 'CLIENT' | 'CLIENTSGROUP';
  readonly orderIds: readonly string[];
}

/**
 * A stranger's rows appended to a genuine export on its way to recon: a real transaction of an account the request
 * did not ask (or of an ORDERID it did not name) rewritten to 1.00 and 4001, and a row of an account recon is not
 * configured with. recon must keep them as rejected rows and change nothing of the victim's. Returns the new bytes
 * and the transaction it tried to rewrite, if it found one.
 */
export function forgeExport(
  gzipped: Buffer,
  request: ForgedRequest,
  transactions: readonly SandboxTransaction[],
): { readonly body: Buffer; readonly victim: string | undefined } {
  const text = gunzipSync(gzipped).toString('utf8');
  const [headerLine = ''] = text.split('\n', 1);
  const columns = headerLine.split(';').map((name) => name.replace(/^"|"$/g, ''));
  const asked = new Set(request.orderIds);
  const victim = transactions.find(
    (transaction) =>
      transaction.execCode === '0000' &&
      (request.scope === 'CLIENT' ? transaction.identifier !== request.identifier : !asked.has(transaction.orderId)),
  );
  const rows: Record<string, string>[] = [];
  if (victim) rows.push(rowOf(victim, { AMOUNT: '1.00', EXECCODE: '4001' }));
  const sample = transactions[0];
  if (sample)
    rows.push(
      rowOf(sample, {
        IDENTIFIER: 'shop-evil',
        TRANSACTIONID: 'EVIL000000001',
        ORDERID: request.orderIds[0] ?? sample.orderId,
      }),
    );
  const lines = rows.map((row) => columns.map((column) => row[column] ?? '').join(';'));
  const forged = text.endsWith('\n') ? text + lines.join('\n') + '\n' : `${text}\n${lines.join('\n')}\n`;
  return { body: gzipSync(forged), victim: victim?.transactionId };
}

function rowOf(transaction: SandboxTransaction, overrides: Record<string, string>): Record<string, string> {
  const date = new Date(Math.floor(transaction.createdAt.getTime() / 1000) * 1000);
  return {
    IDENTIFIER: transaction.identifier,
    DATE: date
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d{3}Z$/, ''),
    TRANSACTIONID: transaction.transactionId,
    ORDERID: transaction.orderId,
    OPERATIONTYPE: transaction.operationType,
    AMOUNT: formatMinorUnits(transaction.amount, transaction.currency),
    CURRENCY: transaction.currency,
    EXECCODE: transaction.execCode.replace(/^0+(?=\d)/, ''),
    ...overrides,
  };
}
