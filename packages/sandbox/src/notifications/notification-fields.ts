import { createHash } from 'node:crypto';
import type { Params } from '@recon/protocol';
import type { SandboxTransaction } from '../store.ts';

/**
 * The fields of the notification for one operation, HASH excepted (the outbox signs), exactly as the
 * spec's Events section lists them per kind. Pure: the caller passes the transaction, the payment or
 * authorization it descends from (for the cardholder's fields) and, for instalment refunds, the
 * reference the voucher network gave the refund.
 */
export interface NotificationSubject {
  readonly transaction: SandboxTransaction;
  /** The payment or authorization at the root of the transaction's chain (itself for those). */
  readonly origin: SandboxTransaction;
  readonly descriptor: string;
  readonly externalReference?: string;
}

/** The merchant's account at the instalment method's voucher network, as the sandbox plays it. */
export const SANDBOX_EXTERNAL_ENTITY_ID = '7311';

export function notificationFields(subject: NotificationSubject): Record<string, string> {
  const { transaction, origin } = subject;
  const common: Record<string, string> = {
    IDENTIFIER: transaction.identifier,
    OPERATIONTYPE: transaction.operationType,
    TRANSACTIONID: transaction.transactionId,
    CLIENTIDENT: text(origin.request, 'CLIENTIDENT'),
    CLIENTEMAIL: text(origin.request, 'CLIENTEMAIL'),
    ORDERID: transaction.orderId,
    AMOUNT: transaction.amount.toString(),
    VERSION: '3.0',
    LANGUAGE: text(origin.request, 'LANGUAGE') || 'en',
    CURRENCY: transaction.currency,
    EXECCODE: transaction.execCode,
    MESSAGE: transaction.message,
    DESCRIPTOR: subject.descriptor,
  };
  if (transaction.method === 'instalment') {
    const extraData = { EXTRADATA: text(transaction.request, 'EXTRADATA') };
    if (transaction.operationType !== 'refund') return { ...common, ...extraData };
    if (subject.externalReference === undefined)
      throw new Error('an instalment refund notification needs its external reference');
    return {
      ...common,
      EXTERNALENTITYID: SANDBOX_EXTERNAL_ENTITY_ID,
      EXTERNALREFERENCE: subject.externalReference,
      ...extraData,
    };
  }
  if (transaction.operationType === 'refund') return common;
  return { ...common, ...walletPayerFields(transaction, origin) };
}

/**
 * What the wallet reports about its payer. The sandbox has no wallet account behind it, so the payer is
 * derived from the request: ids are stable digests, the shipping address is the one the merchant sent.
 */
function walletPayerFields(transaction: SandboxTransaction, origin: SandboxTransaction): Record<string, string> {
  const request = origin.request;
  const payer = text(request, 'CLIENTIDENT') || text(request, 'CLIENTEMAIL') || origin.orderId;
  const shipToName =
    [text(request, 'SHIPTOFIRSTNAME'), text(request, 'SHIPTOLASTNAME')].filter(Boolean).join(' ') ||
    text(request, 'CARDFULLNAME') ||
    'Sandbox Payer';
  const succeeded = transaction.execCode === '0000';
  return {
    PP_ADDRESS_STATUS: 'confirmed',
    PP_PAYER_ID: digest(`payer:${payer}`, 13),
    PP_PAYER_STATUS: succeeded ? 'completed' : 'denied',
    PP_PROTECTION_ELIGIBILITY: succeeded ? 'eligible' : 'ineligible',
    PP_PROTECTION_ELIGIBILITY_TYPE: succeeded ? 'itemnotreceivedeligible' : 'ineligible',
    PP_SHIP_TO_CITY: truncateBytes(text(request, 'SHIPTOCITY') || text(request, 'BILLINGCITY') || 'Paris', 40),
    PP_SHIP_TO_COUNTRYCODE: text(request, 'SHIPTOCOUNTRY') || text(request, 'BILLINGCOUNTRY') || 'FR',
    PP_SHIP_TO_NAME: shipToName.slice(0, 32),
    PP_SHIP_TO_STREET: (text(request, 'SHIPTOADDRESS') || text(request, 'BILLINGADDRESS') || '1 rue de la Paix').slice(
      0,
      100,
    ),
    PP_SHIP_TO_ZIP: (text(request, 'SHIPTOPOSTALCODE') || text(request, 'BILLINGPOSTALCODE') || '75002').slice(0, 20),
    PP_TRANSACTION_ID: digest(`transaction:${transaction.transactionId}`, 17),
  };
}

function text(request: Params, name: string): string {
  const value = request[name];
  return typeof value === 'string' ? value : '';
}

/** Upper-case alphanumeric id of `length` characters, stable for the same input. */
function digest(input: string, length: number): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
  const bytes = createHash('sha256').update(input).digest();
  return Array.from(bytes.subarray(0, length), (byte) => alphabet[byte % alphabet.length]).join('');
}

/** PP_SHIP_TO_CITY is limited in bytes, not characters: cut on a character boundary. */
function truncateBytes(value: string, maxBytes: number): string {
  let result = '';
  for (const char of value) {
    if (Buffer.byteLength(result + char) > maxBytes) break;
    result += char;
  }
  return result;
}
