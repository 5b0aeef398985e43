import { describe, expect, it } from 'vitest';
import { createSandboxClock } from '../src/clock.ts';

describe('sandbox clock', () => {
  it('moves only when told, when not ticking', () => {
    const clock = createSandboxClock({ start: new Date('2026-03-01T10:00:00Z'), ticking: false });
    expect(clock.now().toISOString()).toBe('2026-03-01T10:00:00.000Z');
    clock.advanceDays(6);
    clock.advance(1000);
    expect(clock.now().toISOString()).toBe('2026-03-07T10:00:01.000Z');
  });

  it('tells listeners the new time after each move and lets them unsubscribe', () => {
    const clock = createSandboxClock({ start: new Date('2026-03-01T00:00:00Z'), ticking: false });
    const seen: string[] = [];
    const unsubscribe = clock.onAdvance((now) => seen.push(now.toISOString()));
    clock.advanceDays(1);
    unsubscribe();
    clock.advanceDays(1);
    expect(seen).toEqual(['2026-03-02T00:00:00.000Z']);
  });

  it('refuses to go backwards', () => {
    const clock = createSandboxClock({ ticking: false });
    expect(() => clock.advance(-1)).toThrow(/only moves forward/);
    expect(() => clock.advanceDays(Number.NaN)).toThrow(/only moves forward/);
  });

  it('runs with real time by default, offset by what was advanced', () => {
    const clock = createSandboxClock();
    const before = Date.now();
    clock.advanceDays(2);
    const reading = clock.now().getTime();
    expect(reading).toBeGreaterThanOrEqual(before + 2 * 86_400_000);
  });
});
