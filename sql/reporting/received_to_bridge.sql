-- From the money a run's orders received to the bridge's settled, per currency: the lines of each currency add up to
-- its settled in reporting.run_totals. Settled counts a verdict's money in the verdict's currency: an order's in its
-- own currency (money paid in another currency is a currency_mismatch and in no bridge; a transaction without a
-- CURRENCY counts in its order's), an unknown ORDERID's all of it in the currency of its first transaction. Read
-- from the per-run totals written when the run finishes: the money received per account (recon.run_account_totals)
-- and the money counted elsewhere than in its own currency (recon.run_currency_moves,
-- src/reconcile/run-currency-moves.ts): a few rows a run, whatever its size. Plain subqueries, not CTEs, so that a
-- filter on run_id reaches every branch.
CREATE VIEW reporting.received_to_bridge AS
SELECT
  l.run_id,
  l.currency,
  l.step,
  l.line,
  l.description,
  l.orders,
  l.transactions,
  l.amount_minor,
  l.fees_minor,
  recon.minor_to_unit(l.amount_minor, l.currency) AS amount,
  recon.minor_to_unit(l.fees_minor, l.currency) AS fees
FROM (
  SELECT a.run_id, a.currency, 1 AS step, 'received' AS line,
    'succeeded payments and captures minus refunds of the run''s orders and unknown ORDERIDs in this currency' AS description,
    sum(a.orders)::integer AS orders, sum(a.transactions)::integer AS transactions,
    sum(a.paid_minor - a.refunded_minor)::bigint AS amount_minor, sum(a.fees_minor)::bigint AS fees_minor
  FROM recon.run_account_totals a
  WHERE a.currency IS NOT NULL
  GROUP BY a.run_id, a.currency
  UNION ALL
  SELECT m.run_id, m.currency, 2, 'paid_for_another_currency',
    'minus: paid in this currency for orders in another (currency_mismatch): in no bridge',
    sum(m.orders)::integer, sum(m.transactions)::integer, -sum(m.paid_minor - m.refunded_minor)::bigint, NULL::bigint
  FROM recon.run_currency_moves m
  WHERE m.known_order AND m.currency <> m.verdict_currency
  GROUP BY m.run_id, m.currency
  UNION ALL
  SELECT m.run_id, m.currency, 3, 'unknown_to_another_currency',
    'minus: unknown ORDERIDs'' money in this currency, counted in the currency of their first transaction',
    sum(m.orders)::integer, sum(m.transactions)::integer, -sum(m.paid_minor - m.refunded_minor)::bigint, NULL::bigint
  FROM recon.run_currency_moves m
  WHERE NOT m.known_order AND m.currency <> m.verdict_currency
  GROUP BY m.run_id, m.currency
  UNION ALL
  SELECT m.run_id, m.verdict_currency, 4, 'unknown_from_another_currency',
    'plus: unknown ORDERIDs'' money in other currencies, counted here as their first transaction is in this currency',
    sum(m.orders)::integer, sum(m.transactions)::integer, sum(m.paid_minor - m.refunded_minor)::bigint, NULL::bigint
  FROM recon.run_currency_moves m
  WHERE NOT m.known_order AND m.currency <> m.verdict_currency
  GROUP BY m.run_id, m.verdict_currency
  UNION ALL
  SELECT m.run_id, m.verdict_currency, 5, 'without_currency',
    'plus: transactions without a CURRENCY, counted in their order''s currency',
    sum(m.orders)::integer, sum(m.transactions)::integer, sum(m.paid_minor - m.refunded_minor)::bigint, NULL::bigint
  FROM recon.run_currency_moves m
  WHERE m.currency IS NULL
  GROUP BY m.run_id, m.verdict_currency
  UNION ALL
  -- What the lines above do not explain: nothing for a run recon wrote since migration 0034; for an earlier run,
  -- whose totals were written again from the transactions as they were then, what changed since.
  SELECT t.run_id, t.currency, 6, 'not_explained',
    'not explained by the lines above: transactions changed since the run',
    NULL::integer, NULL::integer, t.settled_minor - coalesce(r.received_minor, 0) - coalesce(c.moved_minor, 0), NULL::bigint
  FROM recon.run_totals t
  LEFT JOIN (
    SELECT a.run_id, a.currency, sum(a.paid_minor - a.refunded_minor)::bigint AS received_minor
    FROM recon.run_account_totals a
    GROUP BY a.run_id, a.currency
  ) r ON r.run_id = t.run_id AND r.currency = t.currency
  LEFT JOIN (
    -- The lines 2 to 5 of the currency: added where counted, taken off where paid.
    SELECT run_id, currency, sum(moved)::bigint AS moved_minor FROM (
      SELECT m.run_id, m.verdict_currency AS currency, m.paid_minor - m.refunded_minor AS moved
      FROM recon.run_currency_moves m
      WHERE NOT m.known_order OR m.currency IS NULL
      UNION ALL
      SELECT m.run_id, m.currency, -(m.paid_minor - m.refunded_minor)
      FROM recon.run_currency_moves m
      WHERE m.currency IS NOT NULL AND m.currency <> m.verdict_currency
    ) moves
    GROUP BY run_id, currency
  ) c ON c.run_id = t.run_id AND c.currency = t.currency
  WHERE t.settled_minor <> coalesce(r.received_minor, 0) + coalesce(c.moved_minor, 0)
  UNION ALL
  SELECT t.run_id, t.currency, 7, 'settled', 'equals: the bridge''s settled (reporting.run_totals.settled_minor)',
    t.orders + t.unknown_orders, NULL::integer, t.settled_minor, NULL::bigint
  FROM recon.run_totals t
  UNION ALL
  -- A currency the run's orders received money in but no verdict is in: its bridge settled nothing.
  SELECT a.run_id, a.currency, 7, 'settled', 'equals: the bridge''s settled (reporting.run_totals.settled_minor)',
    0, NULL::integer, 0::bigint, NULL::bigint
  FROM recon.run_account_totals a
  WHERE a.currency IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM recon.run_totals t WHERE t.run_id = a.run_id AND t.currency = a.currency)
  GROUP BY a.run_id, a.currency
) l
ORDER BY l.run_id, l.currency, l.step;

COMMENT ON VIEW reporting.received_to_bridge IS
  'From the money a finished run''s orders received to its bridge''s settled, per currency: one row per run, currency and line, the lines of a currency adding up to its settled (reporting.run_totals.settled_minor). Filter by run_id; order by step.';
COMMENT ON COLUMN reporting.received_to_bridge.run_id IS 'The run (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.received_to_bridge.currency IS 'ISO 4217 currency code of the line; XXX for the bridge of verdicts without a currency, as in reporting.run_totals.';
COMMENT ON COLUMN reporting.received_to_bridge.step IS 'The line''s place, 1 to 7: received, paid_for_another_currency, unknown_to_another_currency, unknown_from_another_currency, without_currency, not_explained, settled.';
COMMENT ON COLUMN reporting.received_to_bridge.line IS 'What the line is: received (succeeded payments and captures minus refunds in this currency), paid_for_another_currency (minus: for orders in another currency, currency_mismatch), unknown_to_another_currency (minus: unknown ORDERIDs counted in another currency), unknown_from_another_currency (plus: unknown ORDERIDs'' money in other currencies counted here), without_currency (plus: transactions without a CURRENCY), not_explained (what changed since the run; absent when nothing), settled (the bridge''s settled, the sum of the lines above).';
COMMENT ON COLUMN reporting.received_to_bridge.description IS 'The line in words.';
COMMENT ON COLUMN reporting.received_to_bridge.orders IS 'Number of orders and unknown ORDERIDs behind the line, counted once per account they moved money through; for settled, the bridge''s orders and unknown ORDERIDs; null for not_explained.';
COMMENT ON COLUMN reporting.received_to_bridge.transactions IS 'Number of succeeded transactions behind the line; null for not_explained and settled.';
COMMENT ON COLUMN reporting.received_to_bridge.amount_minor IS 'The line''s amount, signed as it adds up to settled, in minor units of currency (an unknown ORDERID''s money in other currencies is added as the bridge adds it).';
COMMENT ON COLUMN reporting.received_to_bridge.fees_minor IS 'On the received line, the service''s fees (BILLINGFEES INCL. VAT) of those succeeded transactions, in minor units of currency; null on the other lines.';
COMMENT ON COLUMN reporting.received_to_bridge.amount IS 'amount_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.received_to_bridge.fees IS 'fees_minor in the currency''s unit, exact (numeric).';
