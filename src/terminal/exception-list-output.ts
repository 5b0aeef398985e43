import { actedBy } from '../exceptions/acted-by.ts';
import type { ExceptionList } from '../exceptions/exception-list.ts';
import { printable } from '../report/report-table.ts';
import { formatTextTable } from './text-table.ts';

const NOTE_WIDTH = 60;

/**
 * `recon exceptions list` as a table, oldest first, then how many more the limit left out. The money at risk is in
 * the currency's unit; an acknowledged exception says by whom. Order ids, names and notes are written by others (a
 * note from any accountant's SQL tool): their control characters are shown, never sent to the reader's terminal.
 */
export function formatExceptionTable(list: ExceptionList): string {
  if (list.total === 0) return 'no open exception matches';
  const table = formatTextTable(
    ['order', 'status', 'at risk', 'currency', 'order age', 'first seen', 'acknowledged', 'last note'],
    list.items.map((item) => [
      printable(item.orderId),
      item.status,
      item.atRisk ?? '?',
      item.currency === null ? null : printable(item.currency),
      item.orderAgeDays === null ? null : `${item.orderAgeDays} d`,
      item.firstSeen === null ? null : item.firstSeen.toISOString().slice(0, 10),
      item.acknowledged ? `by ${printable(actedBy(item.acknowledgedBy, item.acknowledgedLogin))}` : 'no',
      item.lastNote === null ? null : shorten(printable(item.lastNote)),
    ]),
    [2, 4],
  );
  const more = list.total - list.items.length;
  return more > 0 ? `${table}\n${more} more not shown (of ${list.total}): raise --limit, or filter` : table;
}

/** One JSON document: amounts as digit strings of minor units and as decimal strings, instants in ISO 8601. */
export function formatExceptionJson(list: ExceptionList): string {
  return JSON.stringify({ total: list.total, shown: list.items.length, exceptions: list.items });
}

function shorten(text: string): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length <= NOTE_WIDTH ? line : `${line.slice(0, NOTE_WIDTH - 1)}…`;
}
