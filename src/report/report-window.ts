import { dateInZone } from '@recon/protocol';
import type { MoneyMoved, SettlementDay, VerdictGroup } from './run-report.ts';

/**
 * The days the money of a run is read for: from the first day an order of the run was created (an unknown ORDERID:
 * its earliest transaction), which is the verdict chart's first day, to the day of the run's as_of, both dates in the
 * report's zone. The money an order brings moves between those two, so the money per day lines up with the verdicts
 * per day; and the days are fixed by the run, however many runs come after. Null when the run has no dated verdict.
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

/**
 * The run's days: the window read, ending on its last day with something in it (an order created, money moved)
 * rather than on the day of as_of. A nightly run at 06:00 ends on the day before, whose money is the morning's news,
 * unless money moved already that day; a run made in 2026 over orders of 2024 ends in 2024, so that a chart of its
 * days is not two empty years beside the data.
 */
export function runDays(
  read: MoneyMoved['window'],
  groups: readonly VerdictGroup[],
  days: readonly SettlementDay[],
): MoneyMoved['window'] {
  if (read === null) return null;
  let last = read.from;
  for (const group of groups) if (group.day !== null && group.day > last) last = group.day;
  for (const day of days) if (day.day > last) last = day.day;
  return { from: read.from, to: last < read.to ? last : read.to };
}
