import { dateInZone } from '@recon/protocol';
import type { MoneyMoved, VerdictGroup } from './run-report.ts';

/**
 * The run's days: from the first day an order of the run was created (an unknown ORDERID: its earliest transaction),
 * which is the verdict chart's first day, to the day of the run's as_of, both dates in the report's zone. The money
 * an order brings moves between those two, so the money per day lines up with the verdicts per day; and the window
 * is fixed by the run, however many runs come after. Null when the run has no dated verdict.
 */
export function reportWindow(groups: readonly VerdictGroup[], asOf: Date, timeZone: string): MoneyMoved['window'] {
  let first: string | undefined;
  for (const group of groups) {
    if (group.day !== null && (first === undefined || group.day < first)) first = group.day;
  }
  if (first === undefined) return null;
  const asOfDay = dateInZone(asOf, timeZone);
  return { from: first, to: asOfDay > first ? asOfDay : first };
}
