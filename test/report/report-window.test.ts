import { describe, expect, it } from 'vitest';
import { reportWindow, runDays } from '../../src/report/report-window.ts';
import type { VerdictGroup } from '../../src/report/run-report.ts';
import { settlementDay } from './morning-report-fixture.ts';

const created = (day: string | null): VerdictGroup => ({ day, status: 'matched', lifecycle: null, verdicts: 1 });

describe("the run's days", () => {
  it('end on the last day with an order created or money moved, not on the day of as_of', () => {
    // A nightly run at 06:00 Paris: yesterday's money is the morning's news, today holds nothing yet.
    const groups = [created('2026-11-10'), created('2026-11-18')];
    const read = reportWindow(groups, new Date('2026-11-20T05:00:00Z'), 'Europe/Paris');
    expect(read).toEqual({ from: '2026-11-10', to: '2026-11-20' });
    expect(runDays(read, groups, [settlementDay('2026-11-19', 'EUR', '100', '0', '1')])).toEqual({
      from: '2026-11-10',
      to: '2026-11-19',
    });
    // Money moved already on the day of as_of: it is the last day.
    expect(runDays(read, groups, [settlementDay('2026-11-20', 'EUR', '100', '0', '1')])).toEqual(read);
  });

  it('of a run made in 2026 over orders of 2024 stay in 2024, where the data is', () => {
    const groups = [created('2024-03-01'), created('2024-03-05'), created(null)];
    const read = reportWindow(groups, new Date('2026-05-01T00:00:00Z'), 'UTC');
    expect(read).toEqual({ from: '2024-03-01', to: '2026-05-01' });
    expect(runDays(read, groups, [settlementDay('2024-03-07', 'EUR', '100', '0', '1')])).toEqual({
      from: '2024-03-01',
      to: '2024-03-07',
    });
    expect(runDays(read, groups, [])).toEqual({ from: '2024-03-01', to: '2024-03-05' });
  });

  it('are none without a dated verdict', () => {
    expect(runDays(reportWindow([created(null)], new Date(), 'UTC'), [created(null)], [])).toBeNull();
  });
});
