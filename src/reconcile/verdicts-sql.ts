import { sql, type RawBuilder } from 'kysely';
import { orderFactsCtes, scopeFilter } from './order-facts-sql.ts';
import type { ReconcileScope } from './reconcile-scope.ts';

export interface VerdictParameters {
  readonly runId: string;
  readonly scope: ReconcileScope;
  readonly asOf: Date;
  readonly toleranceMinor: bigint;
  readonly graceHours: number;
}

/**
 * The verdicts written, grouped: per status, lifecycle, currency ('XXX' when none) and whether the order is known,
 * with how many transactions they considered and their expected and settled totals (text: minor units).
 */
export interface WrittenVerdictGroup {
  readonly status: string;
  readonly lifecycle: 'new' | 'persisting' | 'resolved' | null;
  readonly currency: string;
  readonly known_order: boolean;
  readonly verdicts: number;
  readonly transactions: number;
  readonly expected_minor: string;
  readonly settled_minor: string;
}

/** Days of the service's rules (payment-api-3.0.md, Limits): approval wait, capture window, and its warning. */
const APPROVAL_WAIT_DAYS = 6;
const CAPTURE_WINDOW_DAYS = 7;
const CAPTURE_AT_RISK_DAYS = 5;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * A run's verdicts in one statement: the facts of the scope (order-facts-sql.ts), the
 * rules, the lifecycle, the INSERT into recon.verdicts, and the groups of what it wrote, from which the caller
 * makes the counts and the bridge. One statement, one pass: a million orders are never read twice nor written to
 * a temporary table on the way.
 *
 * The rules, in order, the first that holds giving the status (issue 6, "Verdicts"). Ages are measured at as_of.
 * Boundaries: an age of exactly 6 days is an expired approval (the service treats the approval as expired once
 * 6 days have elapsed, and "younger than 6 days" is pending: the two rules partition time); "7 days old or more"
 * and "5 days old or more" are as written; an order exactly as old as the grace period is past it.
 *
 * Lifecycle against the order's latest earlier verdict: an exception after an exception is `persisting` and keeps
 * the run and instant it first appeared, even when its status changed (capture_at_risk growing into
 * capture_expired is the same problem getting older; a warning names the previous status); an exception after
 * no exception (or none at all) is `new`; no exception after an exception is `resolved`.
 */
export function writeVerdictsSql(p: VerdictParameters): RawBuilder<WrittenVerdictGroup> {
  const runId = sql`${p.runId}::bigint`;
  const asOf = sql`${p.asOf.toISOString()}::timestamptz`;
  const tolerance = sql`${p.toleranceMinor.toString()}::bigint`;
  // The cutoffs are computed here, once: in SQL, timestamptz - interval depends on the session's zone, so it is not
  // folded into a constant and PostgreSQL would compute it again for every row.
  const before = (ms: number) => sql`${new Date(p.asOf.getTime() - ms).toISOString()}::timestamptz`;
  const graceStart = before(p.graceHours * HOUR_MS);
  const daysBefore = (days: number) => before(days * DAY_MS);
  const unknownOrders = scopeFilter(p.scope).unknownOrders ? sql`true` : sql`false`;
  // Every step ends with OFFSET 0, which keeps it a step of its own: otherwise PostgreSQL inlines each step into the
  // next, copying an expression like settled into every place that reads it and computing it again there (the
  // statement had forty copies of one subquery, and spent two thirds of its time recomputing).
  return sql<WrittenVerdictGroup>`WITH ${orderFactsCtes(p.scope)},
joined AS (
  SELECT coalesce(s.order_id, x.order_id) AS order_id, s.order_id IS NOT NULL AS known,
    s.amount_minor, s.order_currency, s.status, s.refunded_minor, s.payment_method, s.created_at,
    coalesce(x.tx_count, 0) AS tx_count, coalesce(x.succeeded_count, 0) AS succeeded_count,
    coalesce(x.paid, 0) AS paid, coalesce(x.refunded, 0) AS refunded, coalesce(x.authorized, 0) AS authorized,
    coalesce(x.payment_count, 0) AS payment_count, coalesce(x.capture_count, 0) AS capture_count,
    coalesce(x.authorization_count, 0) AS authorization_count,
    x.first_authorized_at, x.latest_approval_wait_at, x.first_currency, x.last_currency,
    coalesce(x.transaction_ids, '{}') AS transaction_ids, x.abandoned_ids, x.last_position,
    s.order_id IS NOT NULL AND (x.first_currency <> s.order_currency OR x.last_currency <> s.order_currency) AS currency_mismatch,
    coalesce(x.scheduled_count, 0) > 0 AND NOT coalesce(x.last_position <= 62 AND x.scheduled_count = x.last_position
      AND x.position_mask = (1::bigint << (x.last_position + 1)) - 2, false) AS schedule_irregular,
    x.conflicts
  FROM scoped s
  FULL JOIN (SELECT sums.*, conflicts.conflicts FROM sums LEFT JOIN conflicts ON conflicts.order_id = sums.order_id) x
    ON x.order_id = s.order_id
  WHERE s.order_id IS NOT NULL OR (${unknownOrders} AND x.succeeded_count > 0)
  OFFSET 0
), money AS (
  -- A currency_mismatch order's money is summed again in its own currency (rare: one subquery for each of them).
  SELECT j.*,
    CASE WHEN j.currency_mismatch THEN ${inOrderCurrency(sql`op IN ('payment', 'capture')`)} ELSE j.paid END AS paid_in_currency,
    CASE WHEN j.currency_mismatch THEN ${inOrderCurrency(sql`op = 'refund'`)} ELSE j.refunded END AS refunded_in_currency,
    CASE WHEN j.currency_mismatch THEN ${inOrderCurrency(sql`op = 'authorization'`)} ELSE j.authorized END AS authorized_in_currency
  FROM joined j
  OFFSET 0
), figures AS (
  SELECT j.order_id, j.known, j.amount_minor, j.order_currency, j.status, j.refunded_minor, j.payment_method, j.created_at,
    j.tx_count, j.succeeded_count, j.paid_in_currency AS paid, j.refunded_in_currency AS refunded,
    j.authorized_in_currency AS authorized, j.payment_count, j.capture_count, j.authorization_count,
    j.first_authorized_at, j.latest_approval_wait_at, j.first_currency, j.last_currency, j.transaction_ids,
    j.abandoned_ids, j.last_position, j.currency_mismatch, j.schedule_irregular, j.conflicts,
    CASE WHEN NOT j.known THEN 0 WHEN j.status = 'paid' THEN j.amount_minor
         WHEN j.status = 'partially_refunded' THEN j.amount_minor - j.refunded_minor ELSE 0 END AS expected,
    j.paid_in_currency - j.refunded_in_currency AS settled,
    coalesce(j.status IN ('paid', 'partially_refunded', 'refunded'), false) AS expects_payment,
    coalesce(j.status IN ('paid', 'partially_refunded', 'refunded', 'authorized'), false) AS expects_money,
    coalesce(j.created_at > ${graceStart}, false) AS in_grace,
    coalesce(j.latest_approval_wait_at <= ${daysBefore(APPROVAL_WAIT_DAYS)}, false) AS approval_wait_over,
    coalesce(j.latest_approval_wait_at > ${daysBefore(APPROVAL_WAIT_DAYS)}, false) AS approval_waiting,
    coalesce(j.first_authorized_at <= ${daysBefore(CAPTURE_WINDOW_DAYS)}, false) AS capture_window_closed,
    coalesce(j.first_authorized_at <= ${daysBefore(CAPTURE_AT_RISK_DAYS)}, false) AS capture_window_closing
  FROM money j
  OFFSET 0
), ruled AS (
  SELECT f.*,
    CASE
      WHEN NOT f.known THEN 'unknown_order'
      WHEN f.currency_mismatch THEN 'currency_mismatch'
      WHEN f.conflicts IS NOT NULL THEN 'notification_conflict'
      WHEN f.payment_count > 1 THEN 'duplicate_payment'
      WHEN f.refunded > f.paid THEN 'over_refunded'
      WHEN (f.status = 'cancelled' AND f.settled > 0)
        OR (f.status = 'authorized' AND f.paid > 0)
        OR (f.expects_payment AND f.paid = 0 AND f.authorized > 0) THEN 'status_mismatch'
      WHEN (f.expects_payment AND f.paid > 0 AND abs(f.settled - f.expected) > ${tolerance})
        OR (f.status = 'authorized' AND f.authorized > 0 AND f.authorized <> f.amount_minor) THEN 'amount_mismatch'
      WHEN f.payment_method = 'instalment' AND f.approval_wait_over AND f.succeeded_count = 0 THEN 'approval_expired'
      WHEN f.status = 'authorized' AND f.capture_count = 0 AND f.capture_window_closed THEN 'capture_expired'
      WHEN f.status = 'authorized' AND f.capture_count = 0 AND f.capture_window_closing THEN 'capture_at_risk'
      WHEN (f.expects_money AND f.in_grace) OR (f.approval_waiting AND f.succeeded_count = 0) THEN 'pending'
      WHEN (f.expects_payment AND f.payment_count = 0)
        OR (f.status = 'authorized' AND f.authorization_count = 0) THEN 'missing_at_provider'
      ELSE 'matched'
    END AS verdict
  FROM figures f
  OFFSET 0
), decided AS (
  SELECT r.*,
    CASE WHEN r.verdict = 'amount_mismatch' AND r.status = 'authorized' THEN r.authorized - r.amount_minor
         ELSE r.settled - r.expected END AS delta,
    r.verdict NOT IN ('matched', 'pending') AS is_exception,
    coalesce(p.status NOT IN ('matched', 'pending'), false) AS was_exception,
    p.status AS previous_status, p.first_seen_run_id AS previous_first_seen_run_id, p.first_seen_at AS previous_first_seen_at
  FROM ruled r
  LEFT JOIN LATERAL (
    SELECT v.status, v.first_seen_run_id, v.first_seen_at FROM recon.verdicts v
    WHERE v.order_id = r.order_id ORDER BY v.run_id DESC LIMIT 1
  ) p ON true
  OFFSET 0
), warned AS (
  SELECT d.*,
    CASE WHEN d.abandoned_ids IS NULL AND NOT d.schedule_irregular AND (d.known OR d.first_currency = d.last_currency)
           AND NOT (d.is_exception AND d.was_exception AND d.previous_status <> d.verdict) THEN NULL
    ELSE nullif(array_remove(ARRAY[
      CASE WHEN d.abandoned_ids IS NOT NULL THEN 'abandoned at the redirect step (0002), no money moved: '
        || array_to_string(d.abandoned_ids, ', ') END,
      CASE WHEN d.schedule_irregular THEN (
        SELECT 'instalment SCHEDULE position repeated: ' || string_agg(position::text, ', ' ORDER BY position)
        FROM (SELECT t.schedule_index AS position FROM recon.transactions t
              WHERE t.order_id = d.order_id AND t.exec_code = '0000' AND t.schedule_index IS NOT NULL
                AND lower(btrim(t.operation_type)) IN ('payment', 'capture')
              GROUP BY t.schedule_index HAVING count(*) > 1) repeated) END,
      CASE WHEN d.schedule_irregular THEN (
        SELECT 'instalment SCHEDULE position missing: ' || string_agg(position::text, ', ' ORDER BY position)
        FROM generate_series(1, d.last_position) AS position
        WHERE NOT EXISTS (SELECT 1 FROM recon.transactions t
                          WHERE t.order_id = d.order_id AND t.exec_code = '0000' AND t.schedule_index = position
                            AND lower(btrim(t.operation_type)) IN ('payment', 'capture'))) END,
      CASE WHEN NOT d.known AND d.first_currency <> d.last_currency THEN
        'succeeded transactions in several currencies: settled adds them up' END,
      CASE WHEN d.is_exception AND d.was_exception AND d.previous_status <> d.verdict THEN
        'was ' || d.previous_status || ' in the previous run' END
    ], NULL), '{}') END AS warnings
  FROM decided d
  OFFSET 0
), written AS (
  INSERT INTO recon.verdicts (run_id, order_id, known_order, status, lifecycle, first_seen_run_id, first_seen_at,
    expected_minor, settled_minor, delta_minor, currency, transaction_ids, warnings, explanation)
  SELECT ${runId}, w.order_id, w.known, w.verdict,
    CASE WHEN w.is_exception THEN CASE WHEN w.was_exception THEN 'persisting' ELSE 'new' END
         WHEN w.was_exception THEN 'resolved' END,
    CASE WHEN w.is_exception THEN CASE WHEN w.was_exception THEN w.previous_first_seen_run_id ELSE ${runId} END END,
    CASE WHEN w.is_exception THEN CASE WHEN w.was_exception THEN w.previous_first_seen_at ELSE ${asOf} END END,
    w.expected, w.settled, w.delta, coalesce(w.order_currency, w.first_currency), w.transaction_ids, w.warnings,
    CASE WHEN w.verdict <> 'matched' THEN jsonb_build_object(
      'rule', w.verdict,
      'reason', ${reasonSql(tolerance, p.graceHours)},
      'transactions', (
        SELECT coalesce(jsonb_agg(recon.explained_transaction(t, f.name) ORDER BY t.occurred_at, t.transaction_id), '[]'::jsonb)
        FROM recon.transactions t LEFT JOIN recon.files f ON f.file_id = t.file_id
        WHERE t.order_id = w.order_id),
      'warnings', to_jsonb(coalesce(w.warnings, '{}'::text[])),
      'figures', jsonb_build_object(
        'paid', w.paid::text, 'refunded', w.refunded::text, 'authorized', w.authorized::text,
        'settled', w.settled::text, 'expected', w.expected::text, 'delta', w.delta::text, 'tolerance', ${tolerance}::text),
      'conflicts', w.conflicts
    ) END
  FROM warned w
  RETURNING status, lifecycle, known_order, currency, expected_minor, settled_minor, cardinality(transaction_ids) AS tx_count
)
SELECT status, lifecycle, coalesce(currency, 'XXX') AS currency, known_order, count(*)::integer AS verdicts,
  sum(tx_count)::integer AS transactions, sum(expected_minor)::text AS expected_minor, sum(settled_minor)::text AS settled_minor
FROM written
GROUP BY status, lifecycle, coalesce(currency, 'XXX'), known_order`;
}

/** The sum of a currency_mismatch order's succeeded transactions of one kind, in the order's currency alone. */
function inOrderCurrency(kind: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(SELECT coalesce(sum(t.amount_minor), 0)::bigint FROM (
      SELECT t.amount_minor, lower(btrim(t.operation_type)) AS op FROM recon.transactions t
      WHERE t.order_id = j.order_id AND t.exec_code = '0000' AND (t.currency IS NULL OR t.currency = j.order_currency)
    ) t WHERE ${kind})`;
}

/** One sentence per rule, saying why in the numbers an accountant can check, in the currency's own units. */
function reasonSql(tolerance: RawBuilder<unknown>, graceHours: number): RawBuilder<unknown> {
  const money = (column: string) => sql.raw(`recon.format_money(w.${column}, coalesce(w.order_currency, w.first_currency))`);
  return sql`CASE w.verdict
    WHEN 'unknown_order' THEN format('%s succeeded transaction(s) carry this ORDERID but there is no such order', w.succeeded_count)
    WHEN 'currency_mismatch' THEN format('succeeded transaction(s) in %s, the order is in %s',
      (SELECT string_agg(DISTINCT t.currency, ', ') FROM recon.transactions t
       WHERE t.order_id = w.order_id AND t.exec_code = '0000' AND t.currency <> w.order_currency), w.order_currency)
    WHEN 'notification_conflict' THEN format('a notification and the export disagree on %s transaction(s): %s',
      jsonb_array_length(w.conflicts), (SELECT string_agg(c->>'transaction_id', ', ') FROM jsonb_array_elements(w.conflicts) c))
    WHEN 'duplicate_payment' THEN format('%s succeeded payments or captures where one was expected: %s', w.payment_count,
      (SELECT string_agg(t.transaction_id, ', ' ORDER BY t.occurred_at, t.transaction_id) FROM recon.transactions t
       WHERE t.order_id = w.order_id AND t.exec_code = '0000' AND lower(btrim(t.operation_type)) IN ('payment', 'capture')))
    WHEN 'over_refunded' THEN format('refunded %s is more than paid %s', ${money('refunded')}, ${money('paid')})
    WHEN 'status_mismatch' THEN CASE
      WHEN w.status = 'cancelled' THEN format('the order is cancelled but %s was settled', ${money('settled')})
      WHEN w.status = 'authorized' THEN format('the order is authorized but %s was paid or captured', ${money('paid')})
      ELSE format('the order is %s but the service only authorized %s, never captured', w.status, ${money('authorized')}) END
    WHEN 'amount_mismatch' THEN CASE
      WHEN w.status = 'authorized' THEN format('authorized %s, the order is for %s (delta %s)',
        ${money('authorized')}, ${money('amount_minor')}, ${money('delta')})
      ELSE format('settled %s (paid %s - refunded %s) differs from the expected %s by %s, beyond the tolerance of %s',
        ${money('settled')}, ${money('paid')}, ${money('refunded')}, ${money('expected')}, ${money('delta')},
        recon.format_money(${tolerance}, coalesce(w.order_currency, w.first_currency))) END
    WHEN 'approval_expired' THEN format('the instalment authorization has waited for approval (0003) since %s, 6 days or more: expired',
      w.latest_approval_wait_at)
    WHEN 'capture_expired' THEN format('authorized on %s, 7 days or more ago, and never captured: the capture window is closed',
      w.first_authorized_at)
    WHEN 'capture_at_risk' THEN format('authorized on %s and not captured: capture before %s or lose it',
      w.first_authorized_at, w.first_authorized_at + interval '7 days')
    WHEN 'pending' THEN CASE
      WHEN w.approval_waiting AND w.succeeded_count = 0 THEN format('waiting for the approval (0003) given on %s, less than 6 days ago',
        w.latest_approval_wait_at)
      ELSE format('created %s, within the grace period of %s hours', w.created_at, ${graceHours}::integer) END
    WHEN 'missing_at_provider' THEN format('the order is %s but the service has no succeeded %s for it, %s transaction(s) seen',
      w.status, CASE WHEN w.status = 'authorized' THEN 'authorization' ELSE 'payment or capture' END, w.tx_count)
  END`;
}
