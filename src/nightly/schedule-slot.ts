import { wallClockAt } from '@recon/protocol';
import { CronExpressionParser } from 'cron-parser';
import { createWallTimeResolver } from '../normalize/wall-time-resolver.ts';

/**
 * A slot of the nightly schedule: the instant the scheduler fires for a date, and that date. Slots are read on the
 * zone's wall clock (the cron expression evaluated over local times as they are written, as schedule-gap.ts does),
 * then turned into instants; a wall time the spring-forward gap skipped is read as the instant just after the gap.
 */
export interface ScheduleSlot {
  /** The slot's date in the schedule's zone: the key of its nightly run. */
  readonly runDate: string;
  readonly at: Date;
}

/** The first slot on `runDate` (YYYY-MM-DD), or undefined when the schedule does not fire that day. */
export function slotOnDate(schedule: string, timezone: string, runDate: string): ScheduleSlot | undefined {
  const dayStart = new Date(`${runDate}T00:00:00Z`);
  const wall = CronExpressionParser.parse(schedule, { currentDate: new Date(dayStart.getTime() - 1), tz: 'UTC' })
    .next()
    .toDate();
  if (wall.toISOString().slice(0, 10) !== runDate) return undefined;
  return { runDate, at: instantOfWall(wall, timezone) };
}

/** The latest slot at or before `instant`. */
export function latestSlot(schedule: string, timezone: string, instant: Date): ScheduleSlot {
  // prev() is strictly before its current date: a second on, so that a slot at `instant` itself counts.
  const after = new Date(wallClock(instant, timezone).getTime() + 1000);
  const wall = CronExpressionParser.parse(schedule, { currentDate: after, tz: 'UTC' }).prev().toDate();
  return { runDate: wall.toISOString().slice(0, 10), at: instantOfWall(wall, timezone) };
}

/** The wall-clock time of `instant` in `timezone`, as a Date whose UTC fields are the local ones. */
export function wallClock(instant: Date, timezone: string): Date {
  const wall = wallClockAt(instant, timezone);
  return new Date(Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second));
}

function instantOfWall(wall: Date, timezone: string): Date {
  return new Date(createWallTimeResolver(timezone).toEpochSeconds(wall.getTime() / 1000) * 1000);
}
