-- The one way to act on an exception, for the CLI and for an accountant's SQL tool alike. The actions:
--   ack     an open exception (neither matched nor pending) is handled; note required
--   note    a note on an order's verdict, the acknowledgement unchanged; note required
--   reopen  an acknowledged exception is not handled after all; note optional
-- Errors carry SQLSTATEs of their own (src/db/sql-state.ts names them): RC001 no verdict for the ORDERID, RC002 not
-- an open exception, RC003 not acknowledged, RC004 a note is required, RC005 a note or name too long, RC006 already
-- acknowledged; 22023 an unknown action. Notes and names are bounded: they reach every report, spreadsheet and page.
-- SECURITY DEFINER with a fixed search_path and every name qualified: it runs as recon's own role, so that the
-- accountant needs no right on schema recon, and nothing the caller puts on their search_path can stand in.
-- EXECUTE is the accountant role's alone (the roles step grants it, src/db/reporting-roles.ts): PUBLIC loses it here.
CREATE FUNCTION reporting.exception_action(order_id text, action text, note text DEFAULT NULL, actor text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
  verdict record;
  held boolean;
  by_name text;
  by_login text;
  since timestamptz;
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
  IF char_length(given_note) > 4000 THEN
    RAISE EXCEPTION 'the note is % characters long; at most 4000: shorten it, or keep the document elsewhere and note where',
      char_length(given_note) USING ERRCODE = 'RC005';
  END IF;
  IF char_length(btrim(actor)) > 100 THEN
    RAISE EXCEPTION 'the name is % characters long; at most 100', char_length(btrim(actor)) USING ERRCODE = 'RC005';
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
  IF action IN ('ack', 'reopen') THEN
    -- reporting.exceptions says whether an acknowledgement holds: one definition, read here as by everyone.
    SELECT e.acknowledged, e.acknowledged_by, e.acknowledged_login, e.acknowledged_at INTO held, by_name, by_login, since
    FROM reporting.exceptions e WHERE e.order_id = exception_action.order_id;
    IF action = 'reopen' AND held IS NOT TRUE THEN
      RAISE EXCEPTION 'order % is not acknowledged: nothing to reopen', exception_action.order_id USING ERRCODE = 'RC003';
    END IF;
    -- The first acknowledgement keeps its author: a second one would hand the exception to somebody else silently.
    IF action = 'ack' AND held THEN
      RAISE EXCEPTION 'order % is already acknowledged by % (login %) since %: add a note, or reopen it first',
        exception_action.order_id, by_name, by_login, to_char(since AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI "UTC"')
        USING ERRCODE = 'RC006';
    END IF;
  END IF;
  INSERT INTO recon.exception_actions (order_id, action, note, acted_by, status, run_id, first_seen)
  VALUES (exception_action.order_id, action, given_note, coalesce(nullif(btrim(actor), ''), session_user),
    verdict.status, verdict.run_id, verdict.first_seen_at)
  RETURNING action_id INTO new_id;
  RETURN new_id;
END
$$;

REVOKE EXECUTE ON FUNCTION reporting.exception_action(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION reporting.exception_action(text, text, text, text) IS
  'Acts on an exception and appends the action to reporting.exception_actions; returns its action_id. action: ack (an open exception not acknowledged yet is handled; note required), note (a note only; note required) or reopen (withdraws an acknowledgement; note optional). note: at most 4000 characters. actor: the name recorded (at most 100 characters), by default the database login, which is recorded whatever the name.';
