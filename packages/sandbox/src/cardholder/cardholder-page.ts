import { currencyMinorUnits, escapeHtml } from '@recon/protocol';
import type { SandboxTransaction } from '../store.ts';
import type { CardholderOutcome } from './finish-cardholder-step.ts';

/**
 * The payment method's page as the sandbox plays it: the order, its state, and one button per outcome the
 * transaction still accepts. Each button POSTs `outcome=...` to the page's own URL.
 */
export function cardholderPage(transaction: SandboxTransaction, notice?: string): string {
  const outcomes = acceptedOutcomes(transaction);
  const methodName = transaction.method === 'instalment' ? 'instalment payment' : 'wallet';
  const rows: Array<[string, string]> = [
    ['Order', transaction.orderId],
    ['Transaction', transaction.transactionId],
    ['Operation', transaction.operationType],
    ['Amount', `${formatAmount(transaction.amount, transaction.currency)} ${transaction.currency}`],
    ...(transaction.paymentOption ? [['Option', transaction.paymentOption] as [string, string]] : []),
    ['Status', `${transaction.status} (EXECCODE ${transaction.execCode})`],
  ];
  const buttons = outcomes.map(
    (outcome) => `<button type="submit" name="outcome" value="${outcome}">${OUTCOME_LABELS[outcome]}</button>`,
  );
  return page(`Sandbox ${methodName}`, [
    notice ? `<p role="status">${escapeHtml(notice)}</p>` : '',
    '<table>',
    ...rows.map(([label, value]) => `<tr><th>${label}</th><td>${escapeHtml(value)}</td></tr>`),
    '</table>',
    buttons.length > 0
      ? `<form method="post">\n${buttons.join('\n')}\n</form>`
      : '<p>Nothing is left to do on this page.</p>',
  ]);
}

export function messagePage(title: string, message: string): string {
  return page(title, [`<p>${escapeHtml(message)}</p>`]);
}

const OUTCOME_LABELS: Record<CardholderOutcome, string> = {
  validated: 'Validate the payment',
  pending: 'Validate, approval pending',
  refused: 'Refuse the payment',
};

function acceptedOutcomes(transaction: SandboxTransaction): CardholderOutcome[] {
  if (transaction.status === 'pending-approval') return ['validated', 'refused'];
  if (transaction.status !== 'awaiting-cardholder') return [];
  return transaction.method === 'instalment' ? ['validated', 'pending', 'refused'] : ['validated', 'refused'];
}

function formatAmount(amount: bigint, currency: string): string {
  const digits = currencyMinorUnits(currency) ?? 2;
  if (digits === 0) return amount.toString();
  const sign = amount < 0n ? '-' : '';
  const units = (amount < 0n ? -amount : amount).toString().padStart(digits + 1, '0');
  return `${sign}${units.slice(0, -digits)}.${units.slice(-digits)}`;
}

function page(title: string, body: string[]): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '</head><body>',
    `<h1>${escapeHtml(title)}</h1>`,
    ...body.filter(Boolean),
    '</body></html>',
  ].join('\n');
}
