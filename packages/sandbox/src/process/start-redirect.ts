import { invalidParameter, type Params, type PaymentMethod } from '@recon/protocol';
import { cardholderUrl } from '../cardholder/cardholder-url.ts';
import { encodeRedirectHtml } from '../cardholder/redirect-html.ts';
import { servesMethod, type SandboxAccount } from '../sandbox-accounts.ts';
import type { SandboxContext } from '../sandbox-context.ts';
import type { SandboxTransaction } from '../store.ts';
import { awaitingCardholderRecord } from '../transaction-records.ts';
import { ProcessRefusal } from './process-answer.ts';

/** The instalment method's order amount: 150 to 2000 EUR, in cents. */
export const INSTALMENT_MIN_CENTS = 15_000n;
export const INSTALMENT_MAX_CENTS = 200_000n;
/** The instalment method is EUR only; a request without CURRENCY is taken as EUR for either method. */
export const DEFAULT_CURRENCY = 'EUR';

/**
 * A payment or authorization (validated already) on `account`: both methods answer 0002 and send the cardholder to
 * the method's page, where the transaction is decided. A method the account is not enabled for is refused 3001, the
 * account family's code (the service lists no narrower one), before anything is recorded.
 */
export function startRedirect(
  ctx: SandboxContext,
  account: SandboxAccount,
  operationType: 'payment' | 'authorization',
  method: PaymentMethod,
  params: Params,
): SandboxTransaction {
  if (!servesMethod(account, method)) {
    throw new ProcessRefusal('3001', `account ${account.identifier} is not enabled for the ${method} method`);
  }
  const amount = BigInt(params['AMOUNT'] as string);
  const paymentOption = params['PAYMENTOPTION'] as string | undefined;
  if (method === 'instalment' && (amount < INSTALMENT_MIN_CENTS || amount > INSTALMENT_MAX_CENTS)) {
    throw invalidParameter(
      'AMOUNT',
      `${amount} cents is outside the instalment method's 15000-200000 (150 to 2000 EUR)`,
    );
  }
  const currency = (params['CURRENCY'] as string | undefined) ?? DEFAULT_CURRENCY;
  if (method === 'instalment' && currency !== DEFAULT_CURRENCY) {
    throw invalidParameter('CURRENCY', `the instalment method takes EUR only, not ${currency}`);
  }
  const start = {
    orderId: params['ORDERID'] as string,
    identifier: account.identifier,
    method,
    operationType,
    amount,
    currency,
    paymentOption,
    request: params,
  };
  return ctx.store.add(awaitingCardholderRecord(ctx.store, start, ctx.clock.now()));
}

export function redirectHtmlFor(transaction: SandboxTransaction, baseUrl: string): string {
  return encodeRedirectHtml(cardholderUrl(baseUrl, transaction.transactionId));
}
