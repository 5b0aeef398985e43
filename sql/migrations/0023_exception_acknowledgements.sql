-- An accountant marks an open exception as handled, with a note, and every such action is kept.
--
-- recon.exception_actions is the audit trail, append-only: each ack, note and reopen with who, when, the note, and
-- the verdict as it stood (its status, the run it held from, when it was first seen). Whether an exception is
-- acknowledged is derived on read, never stored beside the verdict: the reconcile path writes nothing for it. An
-- acknowledgement holds while the exception persists with the status it was given for; it lapses when the status
-- changes or the exception resolves, even if it later comes back with the same status (a new first_seen).
--
-- Accountants write through reporting.exception_action only (SECURITY DEFINER, granted to the accountant role by
-- the roles step that runs after migrations, src/db/reporting-roles.ts: roles are cluster-wide and configurable).

CREATE TABLE recon.exception_actions (
  action_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  order_id    text NOT NULL,
  action      text NOT NULL CHECK (action IN ('ack', 'note', 'reopen')),
  note        text CHECK (note IS NULL OR btrim(note) <> ''),
  -- The name given (recon exceptions --by, the function's actor), else the database login.
  acted_by    text NOT NULL,
  -- The database login that called: what a name given cannot change.
  login       text NOT NULL DEFAULT session_user,
  acted_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- The verdict at the time: its status, the run it held from, and when the exception was first seen.
  status      text NOT NULL,
  run_id      bigint NOT NULL,
  first_seen  timestamptz,
  CHECK (action = 'reopen' OR note IS NOT NULL)
);

-- The latest acknowledgement (or its withdrawal) and the latest note of an order, in order.
CREATE INDEX exception_actions_ack_idx ON recon.exception_actions (order_id, action_id) WHERE action IN ('ack', 'reopen');
CREATE INDEX exception_actions_note_idx ON recon.exception_actions (order_id, action_id) WHERE note IS NOT NULL;

-- An audit trail is only one if nobody edits it, the migrating role included.
CREATE FUNCTION recon.refuse_audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER exception_actions_append_only BEFORE UPDATE OR DELETE ON recon.exception_actions
  FOR EACH ROW EXECUTE FUNCTION recon.refuse_audit_change();
CREATE TRIGGER exception_actions_no_truncate BEFORE TRUNCATE ON recon.exception_actions
  FOR EACH STATEMENT EXECUTE FUNCTION recon.refuse_audit_change();

-- What the roles step last granted, and after which migration: commands start often, and grants are written only
-- when the configured roles or the schema changed (a GRANT rewrites catalog rows, and two at once may collide).
CREATE TABLE recon.reporting_grants (
  singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  reader_role      text NOT NULL,
  accountant_role  text NOT NULL,
  migration        text NOT NULL,
  granted_at       timestamptz NOT NULL DEFAULT now()
);

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

-- The one way to act on an exception, for the CLI and for an accountant's SQL tool alike. The actions:
--   ack     an open exception (neither matched nor pending) is handled; note required
--   note    a note on an order's verdict, the acknowledgement unchanged; note required
--   reopen  an acknowledged exception is not handled after all; note optional
-- Errors carry SQLSTATEs of their own (src/db/sql-state.ts names them): RC001 no verdict for the ORDERID, RC002 not
-- an open exception, RC003 not acknowledged, RC004 a note is required; 22023 an unknown action.
-- SECURITY DEFINER with a fixed search_path and every name qualified: it runs as recon's own role, so that the
-- accountant needs no right on schema recon, and nothing the caller puts on their search_path can stand in.
-- OR REPLACE: schema reporting outlives a DROP SCHEMA recon CASCADE (a function body depends on nothing), and
-- migrating such a database from zero again must not stop here.
CREATE OR REPLACE FUNCTION reporting.exception_action(order_id text, action text, note text DEFAULT NULL, actor text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
  verdict record;
  held boolean;
  given_note text := nullif(btrim(note), '');
  new_id bigint;
BEGIN
  IF action IS NULL OR action NOT IN ('ack', 'note', 'reopen') THEN
    RAISE EXCEPTION 'unknown action %: expected ack, note or reopen', coalesce(quote_literal(action), 'null')
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF given_note IS NULL AND action IN ('ack', 'note') THEN
    RAISE EXCEPTION '% needs a note: say what was done or found', action USING ERRCODE = 'RC004';
  END IF;
  SELECT v.status, v.run_id, v.first_seen_at INTO verdict
  FROM recon.current_verdicts v WHERE v.order_id = exception_action.order_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no verdict for order %: recon has not judged it', exception_action.order_id USING ERRCODE = 'RC001';
  END IF;
  IF action = 'ack' AND verdict.status IN ('matched', 'pending') THEN
    RAISE EXCEPTION 'order % is not an open exception: its verdict is %', exception_action.order_id, verdict.status
      USING ERRCODE = 'RC002';
  END IF;
  IF action = 'reopen' THEN
    -- reporting.exceptions says whether an acknowledgement holds: one definition, read here as by everyone.
    SELECT e.acknowledged INTO held FROM reporting.exceptions e WHERE e.order_id = exception_action.order_id;
    IF held IS NOT TRUE THEN
      RAISE EXCEPTION 'order % is not acknowledged: nothing to reopen', exception_action.order_id USING ERRCODE = 'RC003';
    END IF;
  END IF;
  INSERT INTO recon.exception_actions (order_id, action, note, acted_by, status, run_id, first_seen)
  VALUES (exception_action.order_id, action, given_note, coalesce(nullif(btrim(actor), ''), session_user),
    verdict.status, verdict.run_id, verdict.first_seen_at)
  RETURNING action_id INTO new_id;
  RETURN new_id;
END
$$;

COMMENT ON FUNCTION reporting.exception_action(text, text, text, text) IS
  'Acts on an exception and appends the action to reporting.exception_actions; returns its action_id. action: ack (an open exception is handled; note required), note (a note only; note required) or reopen (withdraws an acknowledgement; note optional). actor: the name recorded, by default the database login.';

-- Only the accountant role (granted by the roles step) may call it; a function is executable by PUBLIC otherwise.
REVOKE EXECUTE ON FUNCTION reporting.exception_action(text, text, text, text) FROM PUBLIC;

-- The exceptions with their acknowledgement and last note. The latest ack or reopen of the order decides: an ack
-- holds if the exception still has the status it was given for, is still the same exception (first seen at the
-- same instant: one that resolved and came back is first seen anew), and no version since had another status.
-- The latest actions are joined as DISTINCT ON sets, not as a LATERAL per exception: actions are people's work, few
-- beside 100k exceptions, and a hash join of them costs the whole view nothing measurable where two index probes per
-- exception doubled it; a query that reads neither column drops the joins (one row per order_id), and a query on
-- one order_id still reaches the actions through their index.
CREATE OR REPLACE VIEW reporting.exceptions AS
SELECT
  c.order_id,
  c.known_order,
  c.status,
  c.lifecycle,
  c.first_seen,
  floor(extract(epoch FROM now() - c.first_seen) / 86400)::integer AS age_days,
  c.expected_minor,
  c.settled_minor,
  c.delta_minor,
  c.currency,
  o.created_at AS order_created_at,
  o.status AS order_status,
  o.payment_method,
  o.amount_minor AS order_amount_minor,
  c.run_id,
  c.as_of,
  c.explanation,
  c.explanation ->> 'reason' AS reason,
  floor(extract(epoch FROM now() - o.created_at) / 86400)::integer AS order_age_days,
  c.expected,
  c.settled,
  c.delta,
  recon.minor_to_unit(o.amount_minor, o.currency) AS order_amount,
  c.at_risk_minor,
  c.at_risk,
  k.holds AS acknowledged,
  CASE WHEN k.holds THEN a.acted_by END AS acknowledged_by,
  CASE WHEN k.holds THEN a.acted_at END AS acknowledged_at,
  n.note AS last_note,
  n.acted_by AS last_note_by,
  n.acted_at AS last_note_at
FROM reporting.reconciliation c
LEFT JOIN recon.orders o ON o.order_id = c.order_id
LEFT JOIN (
  SELECT DISTINCT ON (x.order_id) x.order_id, x.action, x.status, x.run_id, x.first_seen, x.acted_by, x.acted_at
  FROM recon.exception_actions x
  WHERE x.action IN ('ack', 'reopen')
  ORDER BY x.order_id, x.action_id DESC
) a ON a.order_id = c.order_id
-- CASE, so that the history is looked at only for an acknowledged exception still of the same status.
CROSS JOIN LATERAL (
  SELECT CASE WHEN a.action = 'ack' AND a.status = c.status AND a.first_seen IS NOT DISTINCT FROM c.first_seen
    THEN NOT EXISTS (SELECT 1 FROM recon.verdict_history h
      WHERE h.order_id = c.order_id AND h.run_id > a.run_id AND h.status <> a.status)
    ELSE false END AS holds
) k
LEFT JOIN (
  SELECT DISTINCT ON (x.order_id) x.order_id, x.note, x.acted_by, x.acted_at
  FROM recon.exception_actions x
  WHERE x.note IS NOT NULL
  ORDER BY x.order_id, x.action_id DESC
) n ON n.order_id = c.order_id
WHERE c.status NOT IN ('matched', 'pending')
ORDER BY c.first_seen, c.order_id;

COMMENT ON COLUMN reporting.exceptions.acknowledged IS
  'Whether an accountant marked the exception as handled (reporting.exception_action) and that still holds: it lapses when the status changes or the exception resolves, even if it comes back with the same status, and when it is reopened.';
COMMENT ON COLUMN reporting.exceptions.acknowledged_by IS 'Who acknowledged it (reporting.exception_actions.acted_by); null when not acknowledged.';
COMMENT ON COLUMN reporting.exceptions.acknowledged_at IS 'When it was acknowledged, timestamptz; null when not acknowledged.';
COMMENT ON COLUMN reporting.exceptions.last_note IS 'The latest note on the order (of an ack, a note or a reopen), even from an acknowledgement that lapsed; null when none.';
COMMENT ON COLUMN reporting.exceptions.last_note_by IS 'Who wrote the latest note.';
COMMENT ON COLUMN reporting.exceptions.last_note_at IS 'When the latest note was written, timestamptz.';

CREATE OR REPLACE VIEW reporting.exception_ageing AS
SELECT
  e.status,
  e.currency,
  b.age_bucket,
  b.min_days,
  b.max_days,
  count(*)::integer AS exceptions,
  sum(e.at_risk_minor)::bigint AS at_risk_minor,
  recon.minor_to_unit(sum(e.at_risk_minor)::bigint, e.currency) AS at_risk,
  count(*) FILTER (WHERE e.at_risk_minor IS NULL)::integer AS at_risk_unknown,
  count(*) FILTER (WHERE e.acknowledged)::integer AS acknowledged,
  count(*) FILTER (WHERE NOT e.acknowledged)::integer AS unacknowledged
FROM reporting.exceptions e
CROSS JOIN LATERAL (
  SELECT CASE
      WHEN e.order_age_days IS NULL THEN 'no order'
      WHEN e.order_age_days <= 3 THEN '0-3'
      WHEN e.order_age_days <= 7 THEN '4-7'
      WHEN e.order_age_days <= 30 THEN '8-30'
      ELSE 'over 30' END AS age_bucket,
    CASE
      WHEN e.order_age_days IS NULL THEN NULL
      WHEN e.order_age_days <= 3 THEN 0
      WHEN e.order_age_days <= 7 THEN 4
      WHEN e.order_age_days <= 30 THEN 8
      ELSE 31 END AS min_days,
    CASE
      WHEN e.order_age_days IS NULL THEN NULL
      WHEN e.order_age_days <= 3 THEN 3
      WHEN e.order_age_days <= 7 THEN 7
      WHEN e.order_age_days <= 30 THEN 30 END AS max_days
) b
GROUP BY e.status, e.currency, b.age_bucket, b.min_days, b.max_days
ORDER BY e.status, e.currency, b.min_days NULLS LAST;

COMMENT ON COLUMN reporting.exception_ageing.acknowledged IS 'Number of exceptions in the bucket an accountant acknowledged (reporting.exceptions.acknowledged).';
COMMENT ON COLUMN reporting.exception_ageing.unacknowledged IS 'Number of exceptions in the bucket not acknowledged: new, reopened, or whose acknowledgement lapsed.';
