import { formatWallClock } from '@recon/protocol';
import type { SandboxTransaction } from '../store.ts';
import { firstInstalment } from '../transaction-records.ts';
import { billingFeesMinorUnits } from './billing-fees.ts';
import { deriveCardDetails, threeDSecureStatus } from './card-details.ts';
import { formatExecCode, formatMinorUnits, formatPosition } from './format-export-value.ts';

/** One exported transaction: every column the sandbox knows, every value a string ("" when empty). */
export type ExportRow = Readonly<Record<string, string>>;

export type TransactionLookup = (transactionId: string) => SandboxTransaction | undefined;

/**
 * The record the service would export for `transaction`. Captures and refunds carry few request fields of
 * their own, so client and cardholder columns come from the nearest transaction up the parent chain that has
 * them, and the card columns from the order's first transaction (the one the cardholder paid with).
 */
export function toExportRow(transaction: SandboxTransaction, lookup: TransactionLookup, timeZone: string): ExportRow {
  const chain = parentChain(transaction, lookup);
  const origin = chain[chain.length - 1]!;
  const requested = (name: string) => firstRequestValue(chain, name);
  const card = deriveCardDetails(origin);
  return {
    IDENTIFIER: transaction.identifier,
    DATE: formatWallClock(transaction.createdAt, timeZone),
    TRANSACTIONID: transaction.transactionId,
    ORDERID: transaction.orderId,
    OPERATIONTYPE: transaction.operationType,
    AMOUNT: formatMinorUnits(transaction.amount, transaction.currency),
    CURRENCY: transaction.currency,
    'BILLINGFEES INCL. VAT': formatMinorUnits(billingFeesMinorUnits(transaction), transaction.currency),
    EXECCODE: formatExecCode(transaction.execCode),
    CLIENTEMAIL: requested('CLIENTEMAIL'),
    CLIENTADDRESS: requested('CLIENTADDRESS'),
    CARDFULLNAME:
      requested('CARDFULLNAME') || [requested('BILLINGFIRSTNAME'), requested('BILLINGLASTNAME')].join(' ').trim(),
    CARDTYPE: card.cardType,
    CARDCOUNTRY: card.cardCountry,
    '3DSECURE': card.threeDSecure,
    '3DSGLOBALSTATUS': threeDSecureStatus(card, transaction),
    // Merchant anti-fraud rules exist only as the 6xxx refusals; the sandbox has no rule engine to name.
    'RULE APPLIED': transaction.execCode.startsWith('6') ? 'MERCHANT_RULES' : '',
    SCHEDULE: scheduleOf(transaction, chain),
    // The sandbox never retries a payment on the merchant's behalf, so no row has a retry position.
    RETRY: '',
    // Beyond the documented record: columns the service's real files hold. The sandbox has no chargebacks and pays nothing out by transfer, and
    // what NATURE would distinguish is unknown, so these stay empty; EXTRADATA echoes the merchant's own field.
    NATURE: '',
    CHARGEBACKDATE: '',
    'TRANSFER REFERENCE': '',
    EXTRADATA: requested('EXTRADATA'),
  };
}

/** `transaction`, its parent, its parent's parent… up to the order's first transaction. */
function parentChain(transaction: SandboxTransaction, lookup: TransactionLookup): SandboxTransaction[] {
  const chain = [transaction];
  let current = transaction;
  while (current.parentTransactionId !== undefined) {
    const parent = lookup(current.parentTransactionId);
    if (!parent || chain.includes(parent)) break;
    chain.push(parent);
    current = parent;
  }
  return chain;
}

function firstRequestValue(chain: readonly SandboxTransaction[], name: string): string {
  for (const transaction of chain) {
    const value = transaction.request[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return '';
}

/**
 * SCHEDULE on instalment rows: the stored position when the store has one, otherwise the first position of
 * the plan named by PAYMENTOPTION. Refunds have no position.
 */
function scheduleOf(transaction: SandboxTransaction, chain: readonly SandboxTransaction[]): string {
  if (transaction.schedule) return formatPosition(transaction.schedule);
  if (transaction.method !== 'instalment' || transaction.operationType === 'refund') return '';
  for (const link of chain) {
    const option = link.paymentOption ?? link.request.PAYMENTOPTION;
    if (typeof option === 'string') return formatPosition(firstInstalment(option));
  }
  return '';
}
