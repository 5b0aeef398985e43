-- The one way to act on an exception, for the CLI and for an accountant's SQL tool alike. The actions:
--   ack     an open exception (neither matched nor pending) is handled; note required
--   note    a note on an order's verdict, the acknowledgement unchanged; note required
--   reopen  an acknowledged exception is not handled after all; note optional
-- Errors carry SQLSTATEs of their own (src/db/sql-state.ts names them): RC001 no verdict for the ORDERID, RC002 not
-- an open exception, RC003 not acknowledged, RC004 a note is required; 22023 an unknown action.
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

REVOKE EXECUTE ON FUNCTION reporting.exception_action(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION reporting.exception_action(text, text, text, text) IS
  'Acts on an exception and appends the action to reporting.exception_actions; returns its action_id. action: ack (an open exception is handled; note required), note (a note only; note required) or reopen (withdraws an acknowledgement; note optional). actor: the name recorded, by default the database login.';
