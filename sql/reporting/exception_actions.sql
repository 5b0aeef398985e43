-- The audit trail of acknowledgements and notes (recon.exception_actions), newest last: who, when, what, and the verdict
-- as it stood.
CREATE VIEW reporting.exception_actions AS
SELECT
  a.order_id,
  a.action_id,
  a.acted_at,
  a.action,
  a.note,
  a.acted_by,
  a.login,
  a.status,
  a.run_id,
  a.first_seen
FROM recon.exception_actions a
ORDER BY a.action_id;

COMMENT ON VIEW reporting.exception_actions IS
  'The audit trail of acknowledgements, one row per action, oldest first: who acknowledged, annotated or reopened which exception, when, with what note, and the verdict as it stood then. Rows are only ever added.';
COMMENT ON COLUMN reporting.exception_actions.action_id IS 'The action''s number, increasing: the order the actions were taken in.';
COMMENT ON COLUMN reporting.exception_actions.acted_at IS 'When, timestamptz.';
COMMENT ON COLUMN reporting.exception_actions.order_id IS 'The order id (ORDERID) of the exception.';
COMMENT ON COLUMN reporting.exception_actions.action IS 'ack (marked as handled), note (a note only, the acknowledgement unchanged) or reopen (the acknowledgement withdrawn).';
COMMENT ON COLUMN reporting.exception_actions.note IS 'The note given; required for ack and note, optional for reopen.';
COMMENT ON COLUMN reporting.exception_actions.acted_by IS 'Who: the name given (recon exceptions --by, or the actor argument of reporting.exception_action), else the database login.';
COMMENT ON COLUMN reporting.exception_actions.login IS 'The database login that took the action, whatever name was given.';
COMMENT ON COLUMN reporting.exception_actions.status IS 'The verdict''s status at the time (see reporting.reconciliation.status).';
COMMENT ON COLUMN reporting.exception_actions.run_id IS 'The run the verdict held from at the time (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.exception_actions.first_seen IS 'When the exception was first seen, as it stood at the time (reporting.exceptions.first_seen), timestamptz; null for a verdict that was no exception.';
