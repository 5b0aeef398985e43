-- The date in the report's time zone, the zone of reporting.settlement_daily.day (the session's recon.report_timezone,
-- UTC when unset), whatever the session's TimeZone: current_date follows the session's, so an accountant in Tokyo
-- asking for Paris's yesterday with current_date - 1 got Paris's today, a partial day, for part of every day.
-- The zone is read as settlement_daily reads it; a test holds the two to the same day.
CREATE FUNCTION reporting.report_today(instant timestamptz DEFAULT now()) RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT (instant AT TIME ZONE coalesce(nullif(current_setting('recon.report_timezone', true), ''), 'UTC'))::date
$$;

COMMENT ON FUNCTION reporting.report_today(timestamptz) IS
  'Today in the report''s time zone (the session''s recon.report_timezone, UTC when unset: the zone of reporting.settlement_daily.day), whatever the session''s TimeZone; current_date follows the session''s. instant: another moment than now, whose date to give.';
