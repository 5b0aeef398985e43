-- Yesterday in the report's time zone: the day before reporting.report_today, for the morning's question about the
-- day that has ended (reporting.settlement_daily WHERE day = reporting.report_yesterday()).
CREATE FUNCTION reporting.report_yesterday(instant timestamptz DEFAULT now()) RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT reporting.report_today(instant) - 1
$$;

COMMENT ON FUNCTION reporting.report_yesterday(timestamptz) IS
  'Yesterday in the report''s time zone (the session''s recon.report_timezone, UTC when unset: the zone of reporting.settlement_daily.day), whatever the session''s TimeZone: reporting.report_today(instant) - 1.';
