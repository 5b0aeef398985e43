import type { HtmlAnswer } from '../http/sandbox-request-handler.ts';
import type { SandboxContext } from '../sandbox-context.ts';
import { currentTransaction } from '../time-rules.ts';
import { cardholderPage, messagePage } from './cardholder-page.ts';
import { finishCardholderStep, isCardholderOutcome } from './finish-cardholder-step.ts';

/** GET of the cardholder page: the payment or authorization and the outcomes it still accepts. */
export function showCardholderPage(ctx: SandboxContext, transactionId: string): HtmlAnswer {
  const transaction = currentTransaction(ctx.store, transactionId, ctx.clock.now());
  if (!transaction || (transaction.operationType !== 'payment' && transaction.operationType !== 'authorization')) {
    return { status: 404, html: messagePage('Unknown payment', `No payment or authorization ${transactionId}.`) };
  }
  return { status: 200, html: cardholderPage(transaction) };
}

/** The page's form POST of `outcome`: 400 for an unknown outcome, 404 for an unknown payment, 409 for one that is over. */
export function answerCardholderPage(ctx: SandboxContext, transactionId: string, form: URLSearchParams): HtmlAnswer {
  const outcome = form.get('outcome');
  if (!isCardholderOutcome(outcome)) {
    return { status: 400, html: messagePage('Bad answer', 'outcome must be validated, pending or refused.') };
  }
  const result = finishCardholderStep(ctx, transactionId, outcome);
  if (result.ok) {
    const notice = `Recorded: ${result.transaction.status} (EXECCODE ${result.transaction.execCode}).`;
    return { status: 200, html: cardholderPage(result.transaction, notice) };
  }
  if (result.reason === 'not-found') return { status: 404, html: messagePage('Unknown payment', result.message) };
  return { status: 409, html: cardholderPage(result.transaction!, `Not allowed: ${result.message}.`) };
}
