-- The money a verdict puts at risk, by its status (the rule is in the comment on reporting.reconciliation.at_risk_minor).
-- The verdict's own amounts decide, and for the capture and approval rules the authorization figures its stored
-- explanation holds (every verdict but matched stores them): null where they are missing rather than a reassuring 0.
-- order_amount is the order's own amount, read only for an order that expects nothing yet (authorized) and whose
-- authorization never came or was never approved. A SQL expression over built-ins only: inlined, and a reader may
-- call it although schema recon is closed to them.
CREATE FUNCTION recon.at_risk_minor(status text, expected bigint, settled bigint, delta bigint, figures jsonb,
  order_amount bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE status
    WHEN 'matched' THEN 0
    WHEN 'pending' THEN 0
    -- Authorized and never captured: what the authorization would have brought.
    -- (CASE, not greatest(), which would turn missing figures into 0.)
    WHEN 'capture_at_risk' THEN CASE WHEN (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint < 0 THEN 0 ELSE (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint END
    WHEN 'capture_expired' THEN CASE WHEN (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint < 0 THEN 0 ELSE (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint END
    -- Never approved: what was authorized and not captured, what the order still expects, or, for an order that
    -- expects nothing yet (authorized), its amount not paid: the largest.
    WHEN 'approval_expired' THEN CASE WHEN (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint IS NOT NULL THEN greatest((figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint, expected - settled, CASE WHEN expected = 0 THEN order_amount - (figures ->> 'paid')::bigint END, 0) END
    -- What the order expects, or its whole amount when it expects nothing yet (authorized: no authorization found).
    WHEN 'missing_at_provider' THEN CASE WHEN expected > 0 THEN expected ELSE order_amount END
    -- Refunded beyond what was paid.
    WHEN 'over_refunded' THEN CASE WHEN (figures ->> 'refunded')::bigint - (figures ->> 'paid')::bigint < 0 THEN 0
      ELSE (figures ->> 'refunded')::bigint - (figures ->> 'paid')::bigint END
    -- Taken beyond what the order expects: what is owed back.
    WHEN 'duplicate_payment' THEN greatest(settled - expected, 0)
    -- amount_mismatch, status_mismatch, currency_mismatch, notification_conflict, unknown_order.
    ELSE abs(delta)
  END
$$;
