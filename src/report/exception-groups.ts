import type { VerdictStatus } from '../db/schema.ts';
import { ageingRows, type AgeingRow } from './report-money.ts';
import { STATUS_DISPLAY_ORDER, type AgeingCell, type OpenException } from './run-report.ts';

/**
 * The open exceptions as a reader goes through them: the new ones (not acknowledged) by status, then the
 * acknowledged ones by status, each group with how many there are and the money they put at risk per currency
 * (from the ageing, so a group's figures cover every exception, not only those listed), and the oldest listed.
 */
export interface ExceptionGroupKey {
  readonly status: VerdictStatus;
  readonly acknowledged: boolean;
}

export interface ExceptionGroup {
  readonly key: ExceptionGroupKey;
  readonly exceptions: number;
  /** Per currency: how many, the money at risk, how many without known money at risk. */
  readonly perCurrency: readonly AgeingRow[];
  /** The oldest first; at most as many as the report lists per group. */
  readonly listed: readonly OpenException[];
}

export function exceptionGroups(ageing: readonly AgeingCell[], listed: readonly OpenException[]): ExceptionGroup[] {
  return [false, true].flatMap((acknowledged) => {
    const rows = ageingRows(ageing.filter((cell) => cell.acknowledged === acknowledged));
    return STATUS_DISPLAY_ORDER.flatMap((status) => {
      const perCurrency = rows.filter((row) => row.status === status);
      if (perCurrency.length === 0) return [];
      return [
        {
          key: { status, acknowledged },
          exceptions: perCurrency.reduce((sum, row) => sum + row.exceptions, 0),
          perCurrency,
          listed: listed.filter((exception) => exception.status === status && exception.acknowledged === acknowledged),
        },
      ];
    });
  });
}
