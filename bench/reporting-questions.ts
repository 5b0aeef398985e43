import { DEFAULT_REPORTING_ROLES } from '../src/db/reporting-roles.ts';
import { literal, type ReportingQuery, type Samples } from './reporting-queries.ts';

/**
 * The questions an accountant writes after reading docs/reporting.md: its examples with another filter, another
 * order or another limit, the whole list exported, one order looked into. Each runs as the readers' role.
 */
export function reportingQuestions(s: Samples): ReportingQuery[] {
  const status = literal(s.status);
  const currency = literal(s.currency);
  const identifier = literal(s.identifier);
  const order = literal(s.orderId);
  const run = s.runId;
  const exceptionColumns = 'order_id, status, order_age_days, open_days, currency, at_risk, reason';
  const questions: Array<[string, string]> = [
    // The open exceptions, filtered and ordered.
    [
      'exceptions of one status, most at risk first, 50',
      `SELECT ${exceptionColumns} FROM reporting.exceptions WHERE status = ${status} ORDER BY at_risk_minor DESC NULLS FIRST, order_id LIMIT 50`,
    ],
    [
      'exceptions of one currency, most at risk first, 20',
      `SELECT ${exceptionColumns} FROM reporting.exceptions WHERE currency = ${currency} ORDER BY at_risk_minor DESC NULLS FIRST, order_id LIMIT 20`,
    ],
    [
      'exceptions of one status and currency, oldest order first, 100',
      `SELECT ${exceptionColumns} FROM reporting.exceptions WHERE status = ${status} AND currency = ${currency} ORDER BY order_age_days DESC NULLS LAST, order_id LIMIT 100`,
    ],
    [
      'exceptions open 7 days or more, most at risk first, 100',
      `SELECT ${exceptionColumns} FROM reporting.exceptions WHERE open_days >= 7 ORDER BY at_risk_minor DESC NULLS FIRST, order_id LIMIT 100`,
    ],
    [
      'exceptions of orders 7 days old or more, oldest first, 50',
      `SELECT ${exceptionColumns} FROM reporting.exceptions WHERE order_age_days >= 7 ORDER BY order_age_days DESC, order_id LIMIT 50`,
    ],
    [
      'exceptions not acknowledged, most at risk first, 20',
      `SELECT ${exceptionColumns}, last_note FROM reporting.exceptions WHERE NOT acknowledged ORDER BY at_risk_minor DESC NULLS FIRST, order_id LIMIT 20`,
    ],
    [
      'exceptions acknowledged, latest first, 50',
      `SELECT ${exceptionColumns}, acknowledged_by, acknowledged_at, last_note FROM reporting.exceptions WHERE acknowledged ORDER BY acknowledged_at DESC LIMIT 50`,
    ],
    [
      'not acknowledged, of one status, open 7 days or more, longest open first, 100',
      `SELECT ${exceptionColumns} FROM reporting.exceptions WHERE NOT acknowledged AND status = ${status} AND open_days >= 7 ORDER BY open_days DESC, order_id LIMIT 100`,
    ],
    [
      'exceptions with a transaction on one account, most at risk first, 50',
      `SELECT e.order_id, e.status, e.currency, e.at_risk, e.reason FROM reporting.exceptions e WHERE EXISTS (SELECT 1 FROM reporting.transactions t WHERE t.order_id = e.order_id AND t.identifier = ${identifier}) ORDER BY e.at_risk_minor DESC NULLS FIRST, e.order_id LIMIT 50`,
    ],
    [
      'exceptions, most at risk first, 100',
      `SELECT ${exceptionColumns} FROM reporting.exceptions ORDER BY at_risk_minor DESC NULLS FIRST, order_id LIMIT 100`,
    ],
    ['exceptions, oldest first (the view order), 20', `SELECT ${exceptionColumns} FROM reporting.exceptions LIMIT 20`],
    [
      'exceptions, oldest first, the third page of 50',
      `SELECT ${exceptionColumns} FROM reporting.exceptions ORDER BY first_seen, order_id LIMIT 50 OFFSET 100`,
    ],
    [
      'unknown ORDERIDs, most settled first, 50',
      `SELECT order_id, settled, currency, first_seen FROM reporting.exceptions WHERE NOT known_order ORDER BY settled_minor DESC, order_id LIMIT 50`,
    ],
    // The open exceptions, whole or counted.
    ['all open exceptions exported (select *)', 'SELECT * FROM reporting.exceptions'],
    [
      'open exceptions of one status exported (select *)',
      `SELECT * FROM reporting.exceptions WHERE status = ${status}`,
    ],
    [
      'open exceptions per status, acknowledged or not',
      'SELECT status, count(*) FILTER (WHERE acknowledged) AS handled, count(*) FILTER (WHERE NOT acknowledged) AS not_handled, sum(at_risk_minor) AS at_risk_minor FROM reporting.exceptions GROUP BY status ORDER BY status',
    ],
    [
      'money at risk per currency',
      'SELECT currency, count(*) AS open, sum(at_risk) AS at_risk FROM reporting.exceptions GROUP BY currency ORDER BY currency',
    ],
    [
      'current verdicts per status',
      'SELECT status, count(*) AS verdicts FROM reporting.reconciliation GROUP BY status ORDER BY verdicts DESC',
    ],
    // Warnings of the current verdicts.
    [
      'warnings of the current verdicts, LIKE, 100',
      "SELECT r.order_id, r.status, w.warning FROM reporting.reconciliation r CROSS JOIN LATERAL unnest(r.warnings) AS w (warning) WHERE w.warning LIKE 'abandoned at %' ORDER BY r.order_id LIMIT 100",
    ],
    [
      'every open warning, reporting.warnings, 100',
      'SELECT order_id, status, identifier, currency, warning FROM reporting.warnings ORDER BY order_id, position LIMIT 100',
    ],
    [
      'open warnings per account',
      'SELECT identifier, count(*) AS warnings FROM reporting.warnings WHERE identifier IS NOT NULL GROUP BY identifier ORDER BY warnings DESC',
    ],
    [
      'verdicts with a warning, per status',
      'SELECT status, count(*) AS verdicts FROM reporting.reconciliation WHERE cardinality(warnings) > 0 GROUP BY status ORDER BY status',
    ],
    // The latest run's totals.
    [
      'latest run: totals per status',
      `SELECT * FROM reporting.run_status_totals WHERE run_id = ${run} ORDER BY currency, status`,
    ],
    [
      'latest run: totals per account',
      `SELECT * FROM reporting.run_account_totals WHERE run_id = ${run} ORDER BY identifier, currency`,
    ],
    [
      'latest run: from the money received to the bridge',
      `SELECT currency, line, orders, transactions, amount, fees FROM reporting.received_to_bridge WHERE run_id = ${run} ORDER BY currency, step`,
    ],
    [
      'every run: bridge per currency',
      'SELECT run_id, currency, orders, expected, settled, settled - expected AS difference FROM reporting.run_totals ORDER BY run_id DESC, currency',
    ],
    // Ageing.
    [
      'ageing of one currency',
      `SELECT * FROM reporting.exception_ageing WHERE currency = ${currency} ORDER BY status, min_order_age_days NULLS LAST`,
    ],
    [
      'ageing per bucket, all statuses',
      'SELECT order_age_bucket, sum(exceptions) AS exceptions, sum(at_risk_minor) AS at_risk_minor, sum(unacknowledged) AS unacknowledged FROM reporting.exception_ageing GROUP BY order_age_bucket, min_order_age_days ORDER BY min_order_age_days NULLS LAST',
    ],
    // What the latest run judged.
    [
      'latest run: its orders with their verdict, exceptions most at risk first, 100',
      `SELECT r.order_id, r.status, r.at_risk, r.reason FROM reporting.run_orders o JOIN reporting.reconciliation r ON r.order_id = o.order_id WHERE o.run_id = ${run} AND r.status NOT IN ('matched', 'pending') ORDER BY r.at_risk_minor DESC NULLS FIRST, r.order_id LIMIT 100`,
    ],
    [
      'latest run: its orders per current status',
      `SELECT r.status, count(*) AS orders FROM reporting.run_orders o JOIN reporting.reconciliation r ON r.order_id = o.order_id WHERE o.run_id = ${run} GROUP BY r.status ORDER BY orders DESC`,
    ],
    // One order.
    ["one order's exception", `SELECT * FROM reporting.exceptions WHERE order_id = ${order}`],
    [
      "one order's history",
      `SELECT run_id, as_of, change, status_before, status_after, settled_before_minor, settled_after_minor, currency FROM reporting.verdict_history WHERE order_id = ${order} ORDER BY run_id`,
    ],
    [
      "one order's history with its last note",
      `SELECT h.run_id, h.change, h.status_after, e.last_note, e.last_note_by FROM reporting.verdict_history h LEFT JOIN reporting.exceptions e ON e.order_id = h.order_id WHERE h.order_id = ${order} ORDER BY h.run_id`,
    ],
    [
      "one order's verdict, explanation and transactions",
      `SELECT status, reason, jsonb_pretty(explanation) FROM reporting.reconciliation WHERE order_id = ${order}`,
    ],
    [
      "one order's trail of actions",
      `SELECT acted_at, action, acted_by, status, note FROM reporting.exception_actions WHERE order_id = ${order} ORDER BY action_id`,
    ],
  ];
  return questions.map(([name, sql]) => ({
    name,
    sql,
    role: DEFAULT_REPORTING_ROLES.reader,
    before: [],
    writes: false,
  }));
}
