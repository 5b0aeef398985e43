import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../../src/db/database.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/** `YYYY-MM-DD` of an instant in a zone, by the JavaScript calendar: a second opinion on the database's. */
function dateIn(zone: string, instant: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    instant,
  );
}

function dayBefore(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}

/**
 * "Yesterday" in the report's time zone, the zone of reporting.settlement_daily.day, whatever the session's:
 * current_date follows the session's TimeZone, so an accountant's psql in Tokyo asking for yesterday in Paris got
 * Paris's today for part of every day.
 */
describe.each(BACKENDS)('reporting.report_today and reporting.report_yesterday on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  const inZones = <T>(session: string, report: string | null, work: (c: Connection) => Promise<T>) =>
    testDb.database.transaction(async (c) => {
      await c.query(`SET LOCAL TIME ZONE '${session}'`);
      if (report !== null) await c.query(`SET LOCAL recon.report_timezone = '${report}'`);
      return work(c);
    });

  it.skipIf(skip)("gives the report zone's dates at an instant the session's zone has another", async () => {
    // 16:00Z on 26 November: 01:00 on the 27th in Tokyo, 17:00 on the 26th in Paris.
    const { rows } = await inZones('Asia/Tokyo', 'Europe/Paris', (c) =>
      c.query<{ today: string; yesterday: string; session_yesterday: string }>(
        `SELECT reporting.report_today(timestamptz '2026-11-26 16:00:00Z')::text AS today,
           reporting.report_yesterday(timestamptz '2026-11-26 16:00:00Z')::text AS yesterday,
           ((timestamptz '2026-11-26 16:00:00Z')::date - 1)::text AS session_yesterday`,
      ),
    );
    expect(rows).toEqual([{ today: '2026-11-26', yesterday: '2026-11-25', session_yesterday: '2026-11-26' }]);
  });

  it.skipIf(skip)('counts from now by default, in the report zone', async () => {
    // Kiritimati (UTC+14) and Pago Pago (UTC-11) are 25 hours apart: their dates differ at every instant.
    const { rows } = await inZones('Pacific/Kiritimati', 'Pacific/Pago_Pago', (c) =>
      c.query<{ now: Date; today: string; yesterday: string; session_yesterday: string }>(
        `SELECT now() AS now, reporting.report_today()::text AS today, reporting.report_yesterday()::text AS yesterday,
           (current_date - 1)::text AS session_yesterday`,
      ),
    );
    const { now, today, yesterday, session_yesterday: sessionYesterday } = rows[0]!;
    expect(today).toBe(dateIn('Pacific/Pago_Pago', new Date(now)));
    expect(yesterday).toBe(dayBefore(today));
    expect(sessionYesterday).not.toBe(yesterday);
  });

  it.skipIf(skip)('takes UTC when the session has no recon.report_timezone, as settlement_daily does', async () => {
    const { rows } = await inZones('Asia/Tokyo', null, (c) =>
      c.query<{ today: string }>("SELECT reporting.report_today(timestamptz '2026-11-26 23:30:00Z')::text AS today"),
    );
    expect(rows).toEqual([{ today: '2026-11-26' }]);
  });
});
