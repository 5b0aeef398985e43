-- Every version, current or not; a version holds at run R when run_id <= R < coalesce(until_run_id, infinity).
CREATE VIEW recon.verdict_versions AS
SELECT v.run_id, v.order_id, v.known_order, v.status, v.lifecycle, v.first_seen_run_id, v.first_seen_at,
  v.expected_minor, v.settled_minor, v.delta_minor, v.currency, v.transaction_ids, v.warnings, v.explanation,
  v.at_risk_minor, NULL::bigint AS until_run_id
FROM recon.verdicts v
UNION ALL
SELECT h.run_id, h.order_id, h.known_order, h.status, h.lifecycle, h.first_seen_run_id, h.first_seen_at,
  h.expected_minor, h.settled_minor, h.delta_minor, h.currency, h.transaction_ids, h.warnings, h.explanation,
  h.at_risk_minor, h.until_run_id
FROM recon.verdict_history h;
