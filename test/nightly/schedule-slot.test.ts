import { describe, expect, it } from 'vitest';
import { latestSlot, slotOnDate } from '../../src/nightly/schedule-slot.ts';

/** When a nightly run's slot was: what its lateness is measured from (the alerts). Pure: no database. */
describe('the slots of the nightly schedule', () => {
  const DAILY = '30 2 * * *';

  it.each([
    ['Europe/Paris', '2026-11-24', '2026-11-24T01:30:00.000Z'],
    ['Europe/Paris', '2026-07-01', '2026-07-01T00:30:00.000Z'],
    // East of UTC the slot's instant is on the day before in UTC; the run's date stays the zone's.
    ['Asia/Tokyo', '2026-11-24', '2026-11-23T17:30:00.000Z'],
    ['UTC', '2026-11-24', '2026-11-24T02:30:00.000Z'],
    // 02:30 does not exist in Paris that morning (02:00 jumps to 03:00): the instant just after the gap, 03:30 CEST.
    ['Europe/Paris', '2027-03-28', '2027-03-28T01:30:00.000Z'],
    // It exists twice when the clocks go back: the first.
    ['Europe/Paris', '2026-10-25', '2026-10-25T00:30:00.000Z'],
  ])('%s, %s: %s', (timezone, runDate, instant) => {
    expect(slotOnDate(DAILY, timezone, runDate)).toEqual({ runDate, at: new Date(instant) });
  });

  it('has no slot on a day the schedule does not fire', () => {
    // Mondays only; 2026-11-24 is a Tuesday.
    expect(slotOnDate('30 2 * * 1', 'Europe/Paris', '2026-11-24')).toBeUndefined();
    expect(slotOnDate('30 2 * * 1', 'Europe/Paris', '2026-11-23')?.at).toEqual(new Date('2026-11-23T01:30:00Z'));
  });

  it('finds the latest slot at or before an instant', () => {
    const latest = (iso: string) => latestSlot(DAILY, 'Europe/Paris', new Date(iso));
    expect(latest('2026-11-24T07:30:00Z')).toEqual({ runDate: '2026-11-24', at: new Date('2026-11-24T01:30:00Z') });
    expect(latest('2026-11-24T01:30:00Z')).toEqual({ runDate: '2026-11-24', at: new Date('2026-11-24T01:30:00Z') });
    expect(latest('2026-11-24T01:29:59Z')).toEqual({ runDate: '2026-11-23', at: new Date('2026-11-23T01:30:00Z') });
    // Just after midnight in Paris, before the slot: yesterday's.
    expect(latest('2026-11-23T23:30:00Z')).toEqual({ runDate: '2026-11-23', at: new Date('2026-11-23T01:30:00Z') });
    expect(latestSlot(DAILY, 'Asia/Tokyo', new Date('2026-11-23T18:00:00Z'))).toEqual({
      runDate: '2026-11-24',
      at: new Date('2026-11-23T17:30:00Z'),
    });
  });
});
