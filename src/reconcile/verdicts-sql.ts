import { sql, type RawBuilder } from 'kysely';
import { operationSql, orderFactsCtes, rangeFilter, scopeFilter, TX, type OrderIdRange } from './order-facts-sql.ts';
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
 * A run's verdicts for one slice of the ORDERID space, in one statement: the facts of the scope
 * (order-facts-sql.ts), the rules, the lifecycle, the INSERT into recon.verdicts, and the groups of what it wrote,
 * from which the caller makes the counts and the bridge. One statement, one pass: a million orders are never read
 * twice nor written to a temporary table on the way.
 *
 * The rules, in order, the first that holds giving the status (docs/reconcile.md, "The rules"). Ages are measured at as_of.
 * Boundaries: an age of exactly 6 days is an expired approval (the service treats the approval as expired once
 * 6 days have elapsed, and "younger than 6 days" is pending: the two rules partition time); "7 days old or more"
 * and "5 days old or more" are as written; an order exactly as old as the grace period is past it.
 *
 * Lifecycle against the order's latest earlier verdict: an exception after an exception is `persisting` and keeps
 * the run and instant it first appeared, even when its status changed (capture_at_risk growing into
 * capture_expired is the same problem getting older; a warning names the previous status); an exception after
 * no exception (or none at all) is `new`; no exception after an exception is `resolved`. Only an order whose
 * latest verdict was an exception matters, so only those are looked up (`previous`), through the exceptions'
 * own index: a tenth of the orders, not a lookup per order.
 */
export function writeVerdictsSql(p: VerdictParameters, range: OrderIdRange): RawBuilder<WrittenVerdictGroup> {
  const runId = sql`${p.runId}::bigint`;
  const asOf = sql`${p.asOf.toISOString()}::timestamptz`;
  const tolerance = sql`${p.toleranceMinor.toString()}::bigint`;
  // The cutoffs are computed here, once: in SQL, timestamptz - interval depends on the session's zone, so it is not
  // folded into a constant and PostgreSQL would compute it again for every row.
  const before = (ms: number) => sql`${new Date(p.asOf.getTime() - ms).toISOString()}::timestamptz`;
  const graceStart = before(p.graceHours * HOUR_MS);
  const daysBefore = (days: number) => before(days * DAY_MS);
  const filter = scopeFilter(p.scope);
  const unknownOrders = filter.unknownOrders ? sql`true` : sql`false`;
  const op = operationSql(sql.ref('t.operation_type'));
  /** The order's own transactions, for the facts few orders need: read only where the bits say they exist. */
  const transactionsOf = (condition: RawBuilder<unknown>) =>
    sql`FROM recon.transactions t WHERE t.order_id = x.order_id AND ${condition}`;
  const mismatch = sql`(x.first_currency <> s.order_currency OR x.last_currency <> s.order_currency)`;
  const expected = sql`CASE WHEN NOT f.known THEN 0 WHEN f.status = 'paid' THEN f.amount_minor
    WHEN f.status = 'partially_refunded' THEN f.amount_minor - f.refunded_minor ELSE 0 END`;
  const settled = sql`(f.paid - f.refunded)`;
  const expectsPayment = sql`coalesce(f.status IN ('paid', 'partially_refunded', 'refunded'), false)`;
  const succeeded = sql`(f.bits & ${TX.succeeded} <> 0)`;
  // S holds nothing of the kind the order's status needs (an abandoned 0002 is no money): pending while the order
  // is younger than the grace period, missing_at_provider after. An order whose money is in is judged by it, at once.
  const awaitsItsMoney = sql`((${expectsPayment} AND f.bits & ${TX.money} = 0)
    OR (f.status = 'authorized' AND f.bits & ${TX.authorization} = 0))`;
  // Read by the rules and by the pending verdict's reason: one condition, kept as a column of `ruled`.
  const waitingForApproval = sql`coalesce(f.latest_approval_wait_at > ${daysBefore(APPROVAL_WAIT_DAYS)} AND NOT ${succeeded}, false)`;
  // Every step ends with OFFSET 0, which keeps it a step of its own: otherwise PostgreSQL inlines each step into the
  // next, copying an expression like paid into every place that reads it and computing it again there.
  return sql<WrittenVerdictGroup>`WITH ${orderFactsCtes(p.scope, range)},
facts AS (
  SELECT coalesce(s.order_id, x.order_id) AS order_id, s.order_id IS NOT NULL AS known,
    s.amount_minor, s.order_currency, s.status, s.refunded_minor, s.payment_method, s.created_at,
    coalesce(x.transaction_ids, '{}') AS transaction_ids, coalesce(x.bits, 0) AS bits,
    coalesce(x.payment_count, 0) AS payment_count, x.first_currency, x.last_currency, c.conflicts,
    coalesce(${mismatch}, false) AS currency_mismatch,
    -- A currency_mismatch order's money is summed again in its own currency (rare: one subquery for each of them).
    CASE WHEN ${mismatch} THEN ${inOrderCurrency(sql`op IN ('payment', 'capture')`)} ELSE coalesce(x.paid, 0) END AS paid,
    CASE WHEN ${mismatch} THEN ${inOrderCurrency(sql`op = 'refund'`)} ELSE coalesce(x.refunded, 0) END AS refunded,
    CASE WHEN ${mismatch} THEN ${inOrderCurrency(sql`op = 'authorization'`)} ELSE coalesce(x.authorized, 0) END AS authorized,
    CASE WHEN s.status = 'authorized' THEN x.first_authorized_at END AS first_authorized_at,
    x.latest_approval_wait_at, x.abandoned_ids,
    -- Instalment SCHEDULE positions of the money must be 1..n, each once: n = the highest position and the positions
    -- as bits are exactly bits 1..n. Only the irregular ones get the precise warning.
    coalesce(x.bits & ${TX.scheduled} <> 0 AND NOT (
      SELECT coalesce(max(t.schedule_index) <= 62 AND count(*) = max(t.schedule_index)
        AND bit_or(CASE WHEN t.schedule_index BETWEEN 1 AND 62 THEN 1::bigint << t.schedule_index END)
          = (1::bigint << (max(t.schedule_index) + 1)) - 2, false)
      ${transactionsOf(sql`t.exec_code = '0000' AND t.schedule_index IS NOT NULL AND ${op} IN ('payment', 'capture')`)}), false) AS schedule_irregular
  FROM scoped s
  FULL JOIN sums x ON x.order_id = s.order_id
  LEFT JOIN conflicts c ON c.order_id = x.order_id
  WHERE s.order_id IS NOT NULL OR (${unknownOrders} AND x.bits & ${TX.succeeded} <> 0)
  OFFSET 0
), ruled AS (
  SELECT f.*, ${expected} AS expected, ${settled} AS settled, ${waitingForApproval} AS waiting_for_approval,
    CASE
      WHEN NOT f.known THEN 'unknown_order'
      WHEN f.currency_mismatch THEN 'currency_mismatch'
      WHEN f.conflicts IS NOT NULL THEN 'notification_conflict'
      WHEN f.payment_count > 1 THEN 'duplicate_payment'
      WHEN f.refunded > f.paid THEN 'over_refunded'
      WHEN (f.status = 'cancelled' AND ${settled} > 0)
        OR (f.status = 'authorized' AND f.paid > 0)
        OR (${expectsPayment} AND f.paid = 0 AND f.authorized > 0) THEN 'status_mismatch'
      WHEN (${expectsPayment} AND f.paid > 0 AND abs(${settled} - ${expected}) > ${tolerance})
        OR (f.status = 'authorized' AND f.authorized > 0 AND f.authorized <> f.amount_minor) THEN 'amount_mismatch'
      WHEN f.payment_method = 'instalment' AND f.latest_approval_wait_at <= ${daysBefore(APPROVAL_WAIT_DAYS)}
        AND NOT ${succeeded} THEN 'approval_expired'
      WHEN f.status = 'authorized' AND f.bits & ${TX.capture} = 0
        AND f.first_authorized_at <= ${daysBefore(CAPTURE_WINDOW_DAYS)} THEN 'capture_expired'
      WHEN f.status = 'authorized' AND f.bits & ${TX.capture} = 0
        AND f.first_authorized_at <= ${daysBefore(CAPTURE_AT_RISK_DAYS)} THEN 'capture_at_risk'
      WHEN (f.created_at > ${graceStart} AND ${awaitsItsMoney}) OR ${waitingForApproval} THEN 'pending'
      WHEN ${awaitsItsMoney} THEN 'missing_at_provider'
      ELSE 'matched'
    END AS verdict
  FROM facts f
  OFFSET 0
), previous AS (
  -- The orders whose latest earlier verdict was an exception: the latest exception of each, unless a later
  -- verdict (matched, pending or resolved) closed it.
  SELECT e.order_id, e.status, e.first_seen_run_id, e.first_seen_at
  FROM (
    SELECT DISTINCT ON (v.order_id) v.order_id, v.run_id, v.status, v.first_seen_run_id, v.first_seen_at
    FROM recon.verdicts v
    WHERE v.status NOT IN ('matched', 'pending') AND v.run_id < ${runId}
      AND ${filter.of(sql.ref('v.order_id'))} AND ${rangeFilter(sql.ref('v.order_id'), range)}
    ORDER BY v.order_id, v.run_id DESC
  ) e
  WHERE NOT EXISTS (SELECT 1 FROM recon.verdicts later
                    WHERE later.order_id = e.order_id AND later.run_id > e.run_id AND later.run_id < ${runId})
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
      'warnings', to_jsonb(coalesce(w.warnings, '{}'::text[])),
      -- Every figure is a string: jsonb_object takes them as two arrays, where jsonb_build_object looks up the type
      -- of each of its fourteen keys and values again for every verdict (1.2 us against 2.1 us).
      'figures', jsonb_object(ARRAY['paid', 'refunded', 'authorized', 'settled', 'expected', 'delta', 'tolerance'],
        ARRAY[w.paid::text, w.refunded::text, w.authorized::text, w.settled::text, w.expected::text, w.delta::text, ${tolerance}::text]),
      'conflicts', w.conflicts
    ) END
  FROM (
    -- No OFFSET 0 here: these expressions are cheap, and copying every row once more cost more than computing them
    -- again where they are read twice.
    SELECT x.*,
      CASE WHEN x.verdict = 'amount_mismatch' AND x.status = 'authorized' THEN x.authorized - x.amount_minor
           ELSE x.settled - x.expected END AS delta,
      x.verdict NOT IN ('matched', 'pending') AS is_exception,
      x.previous_status IS NOT NULL AS was_exception,
      CASE WHEN x.abandoned_ids IS NULL AND NOT x.schedule_irregular AND (x.known OR x.first_currency = x.last_currency)
             AND NOT ((x.verdict NOT IN ('matched', 'pending')) AND (x.previous_status IS NOT NULL) AND x.previous_status <> x.verdict) THEN NULL
      ELSE nullif(array_remove(ARRAY[
        -- One id, the usual case, needs no sort.
        CASE WHEN x.abandoned_ids IS NOT NULL THEN 'abandoned at the redirect step (0002), no money moved: '
          || CASE WHEN cardinality(x.abandoned_ids) = 1 THEN x.abandoned_ids[1]
                  ELSE (SELECT string_agg(id, ', ' ORDER BY id) FROM unnest(x.abandoned_ids) AS id) END END,
        CASE WHEN x.schedule_irregular THEN (
          SELECT 'instalment SCHEDULE position repeated: ' || string_agg(position::text, ', ' ORDER BY position)
          FROM (SELECT t.schedule_index AS position FROM recon.transactions t
                WHERE t.order_id = x.order_id AND t.exec_code = '0000' AND t.schedule_index IS NOT NULL
                  AND ${op} IN ('payment', 'capture')
                GROUP BY t.schedule_index HAVING count(*) > 1) repeated) END,
        CASE WHEN x.schedule_irregular THEN (
          SELECT 'instalment SCHEDULE position missing: ' || string_agg(position::text, ', ' ORDER BY position)
          FROM generate_series(1, (SELECT max(t.schedule_index) FROM recon.transactions t
                                   WHERE t.order_id = x.order_id AND t.exec_code = '0000' AND ${op} IN ('payment', 'capture'))) AS position
          WHERE NOT EXISTS (SELECT 1 FROM recon.transactions t
                            WHERE t.order_id = x.order_id AND t.exec_code = '0000' AND t.schedule_index = position
                              AND ${op} IN ('payment', 'capture'))) END,
        CASE WHEN NOT x.known AND x.first_currency <> x.last_currency THEN
          'succeeded transactions in several currencies: settled adds them up' END,
        CASE WHEN (x.verdict NOT IN ('matched', 'pending')) AND (x.previous_status IS NOT NULL) AND x.previous_status <> x.verdict THEN
          'was ' || x.previous_status || ' in the previous run' END
      ], NULL), '{}') END AS warnings
    FROM (
      SELECT r.*, p.status AS previous_status, p.first_seen_run_id AS previous_first_seen_run_id, p.first_seen_at AS previous_first_seen_at
      FROM ruled r LEFT JOIN previous p ON p.order_id = r.order_id
    ) x
  ) w
  RETURNING status, lifecycle, currency, expected_minor, settled_minor, cardinality(transaction_ids) AS tx_count
)
-- Grouped by what each row holds as written: an ORDERID without an order is exactly an unknown_order verdict, so
-- known_order is told once per group, not hashed with every row.
SELECT status, lifecycle, coalesce(currency, 'XXX') AS currency, status <> 'unknown_order' AS known_order, count(*)::integer AS verdicts,
  sum(tx_count)::integer AS transactions, sum(expected_minor)::text AS expected_minor, sum(settled_minor)::text AS settled_minor
FROM written
GROUP BY status, lifecycle, currency`;
}

/** The sum of a currency_mismatch order's succeeded transactions of one kind, in the order's currency alone. */
function inOrderCurrency(kind: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(SELECT coalesce(sum(t.amount_minor), 0)::bigint FROM (
      SELECT t.amount_minor, ${operationSql(sql.ref('t.operation_type'))} AS op FROM recon.transactions t
      WHERE t.order_id = x.order_id AND t.exec_code = '0000' AND (t.currency IS NULL OR t.currency = s.order_currency)
    ) t WHERE ${kind})`;
}

/** One sentence per rule, saying why in the numbers an accountant can check, in the currency's own units. */
function reasonSql(tolerance: RawBuilder<unknown>, graceHours: number): RawBuilder<unknown> {
  const money = (column: string) =>
    sql.raw(`recon.format_money(w.${column}, coalesce(w.order_currency, w.first_currency))`);
  const neededKind = sql`CASE WHEN w.status = 'authorized' THEN 'authorization' ELSE 'payment or capture' END`;
  return sql`CASE w.verdict
    WHEN 'unknown_order' THEN format('%s succeeded transaction(s) carry this ORDERID but there is no such order',
      (SELECT count(*) FROM recon.transactions t WHERE t.order_id = w.order_id AND t.exec_code = '0000'))
    WHEN 'currency_mismatch' THEN format('succeeded transaction(s) in %s, the order is in %s',
      (SELECT string_agg(DISTINCT t.currency, ', ') FROM recon.transactions t
       WHERE t.order_id = w.order_id AND t.exec_code = '0000' AND t.currency <> w.order_currency), w.order_currency)
    WHEN 'notification_conflict' THEN format('a notification and the export disagree on %s transaction(s): %s',
      jsonb_array_length(w.conflicts), (SELECT string_agg(c->>'transaction_id', ', ') FROM jsonb_array_elements(w.conflicts) c))
    WHEN 'duplicate_payment' THEN format('%s succeeded payments or captures where one was expected: %s', w.payment_count,
      (SELECT string_agg(t.transaction_id, ', ' ORDER BY t.occurred_at, t.transaction_id) FROM recon.transactions t
       WHERE t.order_id = w.order_id AND t.exec_code = '0000' AND ${operationSql(sql.ref('t.operation_type'))} IN ('payment', 'capture')))
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
      WHEN w.waiting_for_approval THEN format('waiting for the approval (0003) given on %s, less than 6 days ago',
        w.latest_approval_wait_at)
      ELSE format('awaiting its %s: created %s, within the grace period of %s hours', ${neededKind},
        w.created_at, ${graceHours}::integer) END
    WHEN 'missing_at_provider' THEN format('the order is %s but the service has no succeeded %s for it, %s transaction(s) seen',
      w.status, ${neededKind}, cardinality(w.transaction_ids))
  END`;
}
