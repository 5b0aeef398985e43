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
