import { CronExpressionParser } from 'cron-parser';
import { createWallTimeResolver } from '../normalize/wall-time-resolver.ts';
import { wallClock } from './schedule-slot.ts';

const HOUR_MS = 3_600_000;

/**
 * The date of a schedule slot that the clock change skipped within the last hour, if any: a daily 02:30 in
 * Europe/Paris names a local time that does not exist on the last Sunday of March (02:00 jumps to 03:00), and
 * node-cron, like cron-parser, then fires nothing that day. Slots are read on the zone's wall clock (the cron
 * expression evaluated over local times as they are written), so the skipped 02:30 is found at 03:00-03:30 and its
 * date can be run. Undefined on every other day: this never adds a run a regular firing would have made.
 */
export function slotSkippedByClockChange(schedule: string, timezone: string, now: Date): string | undefined {
  const wallNow = wallClock(now, timezone);
  const previous = CronExpressionParser.parse(schedule, { currentDate: wallNow, tz: 'UTC' }).prev().toDate();
  if (wallNow.getTime() - previous.getTime() > HOUR_MS) return undefined;
  const resolver = createWallTimeResolver(timezone);
  const instant = new Date(resolver.toEpochSeconds(previous.getTime() / 1000) * 1000);
  const exists = wallClock(instant, timezone).getTime() === previous.getTime();
  return exists ? undefined : previous.toISOString().slice(0, 10);
}
