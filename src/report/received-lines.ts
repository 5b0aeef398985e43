import type { ReceivedLine, ReceivedLineKind } from './run-report.ts';

/** Each line of the money received to the bridge, as people read it: its sign first, then what it is. */
export const RECEIVED_LABELS: Readonly<Record<ReceivedLineKind, string>> = {
  received: 'received: payments and captures − refunds',
  paid_for_another_currency: '− paid for orders in another currency (currency_mismatch: in no bridge)',
  unknown_to_another_currency: "− unknown ORDERIDs' money counted in another currency",
  unknown_from_another_currency: "+ unknown ORDERIDs' money from other currencies, counted here",
  without_currency: '+ transactions without a CURRENCY, counted in their order’s currency',
  not_explained: '± not explained: transactions changed since the run',
  settled: '= settled, the bridge',
};

export interface CurrencyReceived {
  readonly currency: string;
  /** In their order; the last is the bridge's settled. */
  readonly lines: readonly ReceivedLine[];
}

/** The lines by currency, in currency order (as read: by currency, then step). */
export function receivedByCurrency(lines: readonly ReceivedLine[]): CurrencyReceived[] {
  const byCurrency = new Map<string, ReceivedLine[]>();
  for (const line of lines) byCurrency.set(line.currency, [...(byCurrency.get(line.currency) ?? []), line]);
  return [...byCurrency].map(([currency, own]) => ({ currency, lines: own }));
}
