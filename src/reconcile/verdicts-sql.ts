import { sql, type RawBuilder } from 'kysely';
import { ORDER_FACTS_TABLE } from './order-facts-sql.ts';

export interface VerdictParameters {
  readonly runId: string;
  readonly asOf: Date;
  readonly toleranceMinor: bigint;
  readonly graceHours: number;
}

/** Days of the service's rules (payment-api-3.0.md, Limits): approval wait, capture window, and its warning. */
const APPROVAL_WAIT_DAYS = 6;
const CAPTURE_WINDOW_DAYS = 7;
const CAPTURE_AT_RISK_DAYS = 5;

/**
 * The rules of the verdict, in order: the first that holds gives the status (issue 6, "Verdicts"). One INSERT ...
 * SELECT over the run's facts: the whole scope in one statement.
 *
 * Ages are measured at the run's as_of. Boundaries: an age of exactly 6 days is an expired approval (the service
 * treats the approval as expired once 6 days have elapsed, and "younger than 6 days" is pending: the two rules
 * partition time); "7 days old or more" and "5 days old or more" are as written; an order exactly as old as the
 * grace period is past it.
 *
 * Lifecycle against the order's previous latest verdict: an exception after an exception is `persisting` and keeps
 * the run and instant it first appeared, even when its status changed (capture_at_risk growing into
 * capture_expired is the same problem getting older; the explanation names the previous status); an exception
 * after no exception (or none at all) is `new`; no exception after an exception is `resolved`.
 */
export function insertVerdictsSql(p: VerdictParameters): RawBuilder<unknown> {
  const asOf = sql`${p.asOf.toISOString()}::timestamptz`;
  const tolerance = sql`${p.toleranceMinor.toString()}::bigint`;
  const grace = sql`make_interval(hours => ${p.graceHours}::integer)`;
  const days = (n: number) => sql.raw(`interval '${n} days'`);
  return sql`INSERT INTO recon.verdicts (run_id, order_id, known_order, status, lifecycle, first_seen_run_id,
  first_seen_at, expected_minor, settled_minor, delta_minor, currency, explanation)
WITH figures AS (
  SELECT f.*,
    CASE f.status WHEN 'paid' THEN f.amount_minor WHEN 'partially_refunded' THEN f.amount_minor - f.refunded_minor ELSE 0 END AS expected,
    f.paid - f.refunded AS settled,
    f.status IN ('paid', 'partially_refunded', 'refunded') AS expects_payment,
    f.status IN ('paid', 'partially_refunded', 'refunded', 'authorized') AS expects_money,
    f.created_at > ${asOf} - ${grace} AS in_grace,
    f.latest_approval_wait_at <= ${asOf} - ${days(APPROVAL_WAIT_DAYS)} AS approval_wait_over,
    f.latest_approval_wait_at > ${asOf} - ${days(APPROVAL_WAIT_DAYS)} AS approval_waiting,
    f.first_authorized_at <= ${asOf} - ${days(CAPTURE_WINDOW_DAYS)} AS capture_window_closed,
    f.first_authorized_at <= ${asOf} - ${days(CAPTURE_AT_RISK_DAYS)} AS capture_window_closing
  FROM ${sql.raw(ORDER_FACTS_TABLE)} f
), ruled AS (
  SELECT g.*,
    CASE
      WHEN NOT g.known THEN 'unknown_order'
      WHEN g.other_currencies IS NOT NULL THEN 'currency_mismatch'
      WHEN g.conflicts IS NOT NULL THEN 'notification_conflict'
      WHEN g.payment_count > 1 THEN 'duplicate_payment'
      WHEN g.refunded > g.paid THEN 'over_refunded'
      WHEN (g.status = 'cancelled' AND g.settled > 0)
        OR (g.status = 'authorized' AND g.paid > 0)
        OR (g.expects_payment AND g.paid = 0 AND g.authorized > 0) THEN 'status_mismatch'
      WHEN (g.expects_payment AND g.paid > 0 AND abs(g.settled - g.expected) > ${tolerance})
        OR (g.status = 'authorized' AND g.authorized > 0 AND g.authorized <> g.amount_minor) THEN 'amount_mismatch'
      WHEN g.payment_method = 'instalment' AND g.approval_wait_over AND g.succeeded_count = 0 THEN 'approval_expired'
      WHEN g.status = 'authorized' AND g.capture_count = 0 AND g.capture_window_closed THEN 'capture_expired'
      WHEN g.status = 'authorized' AND g.capture_count = 0 AND g.capture_window_closing THEN 'capture_at_risk'
      WHEN (g.expects_money AND g.in_grace) OR (g.approval_waiting AND g.succeeded_count = 0) THEN 'pending'
      WHEN (g.expects_payment AND g.payment_count = 0)
        OR (g.status = 'authorized' AND g.authorization_count = 0) THEN 'missing_at_provider'
      ELSE 'matched'
    END AS verdict
  FROM figures g
), decided AS (
  SELECT r.*,
    CASE WHEN r.known THEN r.expected ELSE 0 END AS expected_minor,
    CASE WHEN r.verdict = 'amount_mismatch' AND r.status = 'authorized' THEN r.authorized - r.amount_minor
         ELSE r.settled - CASE WHEN r.known THEN r.expected ELSE 0 END END AS delta_minor,
    r.verdict NOT IN ('matched', 'pending') AS is_exception,
    p.status AS previous_status,
    p.status IS NOT NULL AND p.status NOT IN ('matched', 'pending') AS was_exception,
    p.first_seen_run_id AS previous_first_seen_run_id,
    p.first_seen_at AS previous_first_seen_at
  FROM ruled r
  LEFT JOIN recon.latest_verdicts l ON l.order_id = r.order_id
  LEFT JOIN recon.verdicts p ON p.run_id = l.run_id AND p.order_id = l.order_id
)
SELECT ${p.runId}::bigint, d.order_id, d.known, d.verdict,
  CASE WHEN d.is_exception THEN CASE WHEN d.was_exception THEN 'persisting' ELSE 'new' END
       WHEN d.was_exception THEN 'resolved' END,
  CASE WHEN d.is_exception THEN CASE WHEN d.was_exception THEN d.previous_first_seen_run_id ELSE ${p.runId}::bigint END END,
  CASE WHEN d.is_exception THEN CASE WHEN d.was_exception THEN d.previous_first_seen_at ELSE ${asOf} END END,
  d.expected_minor, d.settled, d.delta_minor,
  coalesce(d.order_currency, d.succeeded_currencies[1]),
  jsonb_build_object(
    'rule', d.verdict,
    'reason', ${reasonSql(tolerance, p.graceHours)},
    'transactions', d.transactions,
    'warnings', to_jsonb(array_remove(ARRAY[
      CASE WHEN d.abandoned_ids IS NOT NULL THEN format('abandoned at the redirect step (0002), no money moved: %s',
        array_to_string(d.abandoned_ids, ', ')) END,
      CASE WHEN d.schedule_positions IS NOT NULL THEN (
        SELECT 'instalment SCHEDULE position repeated: ' || string_agg(position::text, ', ' ORDER BY position)
        FROM (SELECT position FROM unnest(d.schedule_positions) AS position GROUP BY position HAVING count(*) > 1) repeated
      ) END,
      CASE WHEN d.schedule_positions IS NOT NULL THEN (
        SELECT 'instalment SCHEDULE position missing: ' || string_agg(position::text, ', ' ORDER BY position)
        FROM generate_series(1, d.schedule_positions[cardinality(d.schedule_positions)]) AS position
        WHERE position <> ALL (d.schedule_positions)
      ) END,
      CASE WHEN cardinality(d.succeeded_currencies) > 1 AND NOT d.known THEN format(
        'succeeded transactions in several currencies (%s): settled adds them up', array_to_string(d.succeeded_currencies, ', ')) END,
      CASE WHEN d.is_exception AND d.was_exception AND d.previous_status <> d.verdict THEN format(
        'was %s in the previous run', d.previous_status) END
    ], NULL)),
    'figures', jsonb_build_object(
      'paid', d.paid::text, 'refunded', d.refunded::text, 'authorized', d.authorized::text,
      'settled', d.settled::text, 'expected', d.expected_minor::text, 'delta', d.delta_minor::text,
      'tolerance', ${tolerance}::text),
    'conflicts', d.conflicts
  )
FROM decided d`;
}

/** One sentence per rule, saying why in the numbers an accountant can check. Amounts are minor units. */
function reasonSql(tolerance: RawBuilder<unknown>, graceHours: number): RawBuilder<unknown> {
  const money = (column: string) => sql.raw(`d.${column}::text || ' ' || coalesce(d.order_currency, d.succeeded_currencies[1], '')`);
  return sql`CASE d.verdict
    WHEN 'unknown_order' THEN format('%s succeeded transaction(s) carry this ORDERID but there is no such order', d.succeeded_count)
    WHEN 'currency_mismatch' THEN format('succeeded transaction(s) in %s, the order is in %s',
      array_to_string(d.other_currencies, ', '), d.order_currency)
    WHEN 'notification_conflict' THEN format('a notification and the export disagree on %s transaction(s): %s',
      jsonb_array_length(d.conflicts), (SELECT string_agg(c->>'transaction_id', ', ') FROM jsonb_array_elements(d.conflicts) c))
    WHEN 'duplicate_payment' THEN format('%s succeeded payments or captures where one was expected: %s',
      d.payment_count, array_to_string(d.payment_ids, ', '))
    WHEN 'over_refunded' THEN format('refunded %s is more than paid %s', ${money('refunded')}, ${money('paid')})
    WHEN 'status_mismatch' THEN CASE
      WHEN d.status = 'cancelled' THEN format('the order is cancelled but %s was settled', ${money('settled')})
      WHEN d.status = 'authorized' THEN format('the order is authorized but %s was paid or captured', ${money('paid')})
      ELSE format('the order is %s but the service only authorized %s, never captured', d.status, ${money('authorized')}) END
    WHEN 'amount_mismatch' THEN CASE
      WHEN d.status = 'authorized' THEN format('authorized %s, the order is for %s (delta %s)',
        ${money('authorized')}, ${money('amount_minor')}, d.delta_minor)
      ELSE format('settled %s (paid %s - refunded %s) differs from the expected %s by %s, beyond the tolerance of %s',
        ${money('settled')}, d.paid, d.refunded, ${money('expected_minor')}, d.delta_minor, ${tolerance}) END
    WHEN 'approval_expired' THEN format('the instalment authorization has waited for approval (0003) since %s, 6 days or more: expired',
      d.latest_approval_wait_at)
    WHEN 'capture_expired' THEN format('authorized on %s, 7 days or more ago, and never captured: the capture window is closed',
      d.first_authorized_at)
    WHEN 'capture_at_risk' THEN format('authorized on %s and not captured: capture before %s or lose it',
      d.first_authorized_at, d.first_authorized_at + interval '7 days')
    WHEN 'pending' THEN CASE
      WHEN d.approval_waiting AND d.succeeded_count = 0 THEN format('waiting for the approval (0003) given on %s, less than 6 days ago',
        d.latest_approval_wait_at)
      ELSE format('created %s, within the grace period of %s hours', d.created_at, ${graceHours}::integer) END
    WHEN 'missing_at_provider' THEN format('the order is %s but the service has no succeeded %s for it, %s transaction(s) seen',
      d.status, CASE WHEN d.status = 'authorized' THEN 'authorization' ELSE 'payment or capture' END, d.tx_count)
    ELSE format('settled %s equals the expected %s%s', ${money('settled')}, ${money('expected_minor')},
      CASE WHEN d.delta_minor <> 0 THEN format(' within the tolerance of %s', ${tolerance}) ELSE '' END)
  END`;
}
