import { sql, type RawBuilder } from 'kysely';
import { operationSql, orderFactsCtes, rangeFilter, scopeFilter, TX, type OrderIdRange } from './order-facts-sql.ts';
import type { ReconcileScope } from './reconcile-scope.ts';
import { accountSumsSql, accountTotalsSql } from './run-account-totals.ts';
import { VERDICT_COLUMNS } from './verdict-columns.ts';

export interface VerdictParameters {
  readonly runId: string;
  readonly scope: ReconcileScope;
  readonly asOf: Date;
  readonly toleranceMinor: bigint;
  readonly graceHours: number;
  /** Whether current verdicts may exist in scope: false for a first run, which only inserts. */
  readonly compare: boolean;
  /**
   * Whether the statement writes its part of the run's totals per account (recon.run_account_parts) from its own
   * pass: a run that judges every order of its scope. A run that judges only the changed ones sums the whole current
   * set when it finishes (run-account-totals.ts).
   */
  readonly accountParts: boolean;
  /**
   * Whether the statement keeps its changes apart (recon.run_verdict_changes) for the transaction that finishes the
   * run to apply (applyStagedChangesSql): a run with current verdicts, written slice by slice in transactions of
   * their own. Readers then never meet a version of an unfinished run in place of the one it replaces.
   */
  readonly staged: boolean;
}

/**
 * The verdicts written, grouped: per status, lifecycle, currency ('XXX' when none) and whether the order is known,
 * with how many transactions they considered and their expected and settled totals (text: minor units).
 */
export interface WrittenVerdictGroup {
  /** Null for the ORDERIDs no longer judged, whose verdicts left the current set. */
  readonly status: string | null;
  readonly lifecycle: 'new' | 'persisting' | 'resolved' | null;
  readonly currency: string;
  readonly known_order: boolean;
  readonly verdicts: number;
  readonly transactions: number;
  readonly expected_minor: string;
  readonly settled_minor: string;
  readonly delta_minor: string;
  /** Of the verdicts whose money at risk is known; at_risk_unknown counts the others. */
  readonly at_risk_minor: string;
  readonly at_risk_unknown: number;
  /** Verdicts written: new, different from the current one, or removed. */
  readonly changed: number;
}

/** Days of the service's rules (payment-api-3.0.md, Limits): approval wait, capture window, and its warning. */
const APPROVAL_WAIT_DAYS = 6;
const CAPTURE_WINDOW_DAYS = 7;
const CAPTURE_AT_RISK_DAYS = 5;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * A run's verdicts for one slice of the ORDERID space, in one statement: the facts of the scope
 * (order-facts-sql.ts), the rules, the lifecycle, the comparison with the current verdicts, the writes, and the
 * groups of the scope's verdicts, from which the caller makes the counts and the bridge. One statement, one pass:
 * a million orders are never read twice nor written to a temporary table on the way. A run that writes its totals per
 * account (accountPartsCte) reads the slice's succeeded transactions once more for them.
 *
 * The rules, in order, the first that holds giving the status (docs/reconcile.md, "The rules"). Ages are measured at as_of.
 * Boundaries: an age of exactly 6 days is an expired approval (the service treats the approval as expired once
 * 6 days have elapsed, and "younger than 6 days" is pending: the two rules partition time); "7 days old or more"
 * and "5 days old or more" are as written; an order exactly as old as the grace period is past it.
 *
 * Lifecycle against the order's current verdict: an exception after an exception is `persisting` and keeps
 * the run and instant it first appeared, even when its status changed (capture_at_risk growing into
 * capture_expired is the same problem getting older; a warning names the previous status); an exception after
 * no exception (or none at all) is `new`; no exception after an exception is `resolved`.
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
${p.accountParts ? sql`${accountPartsCte(runId, p.scope, range)},` : sql``}
facts AS (
  SELECT coalesce(s.order_id, x.order_id) AS order_id, s.order_id IS NOT NULL AS known,
    s.amount_minor, s.order_currency, s.status, s.refunded_minor, s.payment_method, s.created_at,
    coalesce(x.transaction_ids, '{}') AS transaction_ids, coalesce(x.bits, 0) AS bits,
    coalesce(x.payment_count, 0) AS payment_count, x.first_currency, x.last_currency, c.conflicts, m.misrouted,
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
  LEFT JOIN misrouted m ON m.order_id = s.order_id
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
), judged AS (
  -- Every ORDERID judged now, beside its current verdict of the scope and slice (what the new verdict is compared
  -- with, and the lifecycle's previous verdict); a current verdict without a new one is an ORDERID the scope no
  -- longer judges (an unknown ORDERID whose succeeded transactions are gone): it leaves the current set. A first
  -- run has nothing to compare with and joins nothing.
  ${p.compare ? beside(filter.of(sql.ref('c.order_id')), rangeFilter(sql.ref('c.order_id'), range)) : alone()}
), w AS (
  SELECT coalesce(y.order_id, y.c_order_id) AS order_id, y.known, y.verdict, y.lifecycle, y.first_seen_run_id,
    y.first_seen_at, y.expected, y.settled, y.delta, y.currency, y.transaction_ids, y.warnings, y.explanation,
    y.at_risk, y.recheck_at,
    CASE
      WHEN y.order_id IS NULL THEN 'removed'
      WHEN y.c_order_id IS NULL THEN 'new'
      -- Not the lifecycle: it moves on by itself (new becomes persisting, resolved becomes nothing) and is read
      -- relative to the run that asks (run-verdicts.ts); the first run and instant of an exception are kept.
      WHEN (y.c_known_order, y.c_status, y.c_first_seen_run_id, y.c_first_seen_at, y.c_expected,
            y.c_settled, y.c_delta, y.c_currency, y.c_warnings, y.c_explanation, y.c_at_risk)
           IS DISTINCT FROM (y.known, y.verdict, y.first_seen_run_id, y.first_seen_at, y.expected,
            y.settled, y.delta, y.currency, y.warnings, y.explanation, y.at_risk)
        -- The same ids in another order are the same verdict.
        OR cardinality(y.c_transaction_ids) <> cardinality(y.transaction_ids)
        OR NOT (y.c_transaction_ids @> y.transaction_ids) THEN 'changed'
      WHEN y.c_recheck_at IS DISTINCT FROM y.recheck_at THEN 'recheck'
      ELSE 'same'
    END AS change
  FROM (
    SELECT x.*,
      CASE WHEN x.is_exception THEN CASE WHEN x.was_exception THEN 'persisting' ELSE 'new' END
           WHEN x.was_exception THEN 'resolved' END AS lifecycle,
      CASE WHEN x.is_exception THEN CASE WHEN x.was_exception THEN x.c_first_seen_run_id ELSE ${runId} END END AS first_seen_run_id,
      CASE WHEN x.is_exception THEN CASE WHEN x.was_exception THEN x.c_first_seen_at ELSE ${asOf} END END AS first_seen_at,
      coalesce(x.order_currency, x.first_currency) AS currency,
      ${atRiskSql()} AS at_risk,
      CASE WHEN x.verdict <> 'matched' THEN jsonb_build_object(
        'rule', x.verdict,
        'reason', ${reasonSql(tolerance, p.graceHours)},
        'warnings', to_jsonb(coalesce(x.warnings, '{}'::text[])),
        -- Every figure is a string: jsonb_object takes them as two arrays, where jsonb_build_object looks up the type
        -- of each of its fourteen keys and values again for every verdict (1.2 us against 2.1 us).
        'figures', jsonb_object(ARRAY['paid', 'refunded', 'authorized', 'settled', 'expected', 'delta', 'tolerance'],
          ARRAY[x.paid::text, x.refunded::text, x.authorized::text, x.settled::text, x.expected::text, x.delta::text, ${tolerance}::text]),
        'conflicts', x.conflicts
      ) END AS explanation,
      -- The warning naming the previous status goes in the next run: it looks again. Otherwise the first instant
      -- at which time alone may change the verdict, or null.
      CASE WHEN x.is_exception AND x.previous_status <> x.verdict
        THEN '-infinity'::timestamptz
        ELSE ${recheckSql(p)} END AS recheck_at
    FROM (
      -- No OFFSET 0 here: these expressions are cheap, and copying every row once more cost more than computing them
      -- again where they are read twice.
      SELECT j.*,
        CASE WHEN j.verdict = 'amount_mismatch' AND j.status = 'authorized' THEN j.authorized - j.amount_minor
             ELSE j.settled - j.expected END AS delta,
        j.verdict NOT IN ('matched', 'pending') AS is_exception,
        j.previous_status IS NOT NULL AS was_exception,
        ${warningsSql(op)} AS warnings
      FROM judged j
    ) x
  ) y
)
${p.compare ? compareTail(runId, p.staged) : firstRunTail(runId)}`;
}

/**
 * This slice's part of the run's totals per processing account and currency: what each account settled through the
 * succeeded transactions of the slice's verdicts, an order counted once per account and currency it moved money
 * through. Every ORDERID of the slice with a succeeded transaction has a verdict, which considers all of its
 * transactions: those read again here, in the statement's snapshot, are exactly the verdicts'. Read from `sums`
 * instead, PostgreSQL kept every row of it for the second reader and could no longer merge it with the orders.
 */
function accountPartsCte(runId: RawBuilder<unknown>, scope: ReconcileScope, range: OrderIdRange): RawBuilder<unknown> {
  const perOrder = sql`SELECT ${accountSumsSql()}
    FROM recon.transactions t
    WHERE t.order_id IS NOT NULL AND t.exec_code = '0000' AND ${scopeFilter(scope).of(sql.ref('t.order_id'))}
      AND ${rangeFilter(sql.ref('t.order_id'), range)}
    GROUP BY t.order_id, t.identifier, t.currency`;
  return sql`account_parts AS (
  INSERT INTO recon.run_account_parts (run_id, identifier, currency, orders, transactions, paid_minor, refunded_minor,
    fees_minor)
  SELECT ${runId}, identifier, currency, orders, transactions, paid_minor, refunded_minor, fees_minor
  FROM (${accountTotalsSql(perOrder)}) totals
)`;
}

/** The new verdicts beside the current ones of the scope, `c_`-prefixed. */
function beside(inScope: RawBuilder<unknown>, inRange: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`SELECT r.*, c.order_id AS c_order_id, c.known_order AS c_known_order, c.status AS c_status,
    c.first_seen_run_id AS c_first_seen_run_id, c.first_seen_at AS c_first_seen_at, c.expected_minor AS c_expected,
    c.settled_minor AS c_settled, c.delta_minor AS c_delta, c.currency AS c_currency, c.transaction_ids AS c_transaction_ids,
    c.warnings AS c_warnings, c.explanation AS c_explanation, c.at_risk_minor AS c_at_risk, c.recheck_at AS c_recheck_at,
    CASE WHEN c.status NOT IN ('matched', 'pending') THEN c.status END AS previous_status
  FROM ruled r FULL JOIN (SELECT * FROM recon.verdicts c WHERE ${inScope} AND ${inRange}) c ON c.order_id = r.order_id`;
}

/** The new verdicts alone, with the columns `beside` adds, all null. */
function alone(): RawBuilder<unknown> {
  return sql`SELECT r.*, NULL::text AS c_order_id, NULL::boolean AS c_known_order, NULL::text AS c_status,
    NULL::bigint AS c_first_seen_run_id, NULL::timestamptz AS c_first_seen_at, NULL::bigint AS c_expected,
    NULL::bigint AS c_settled, NULL::bigint AS c_delta, NULL::char(3) AS c_currency, NULL::text[] AS c_transaction_ids,
    NULL::text[] AS c_warnings, NULL::jsonb AS c_explanation, NULL::bigint AS c_at_risk, NULL::timestamptz AS c_recheck_at,
    NULL::text AS previous_status
  FROM ruled r`;
}

const VERDICT_COLUMN_LIST = sql.join(VERDICT_COLUMNS.map((column) => sql.ref(column)));

/**
 * The new verdict of a row of w, in the order of VERDICT_COLUMN_LIST and recheck_at. A new version has not been
 * judged again by any run yet. A version whose only news is when to look again keeps what its own run gave it, the
 * lifecycle included (`kept`): computed now, against itself, it would say persisting for new, nothing for resolved,
 * and that run's report would change.
 */
function newVerdictValues(
  runId: RawBuilder<unknown>,
  kept: { lifecycle: RawBuilder<unknown>; rejudged: RawBuilder<unknown> } = {
    lifecycle: sql`w.lifecycle`,
    rejudged: sql`NULL::bigint`,
  },
): RawBuilder<unknown> {
  return sql`${runId}, w.order_id, w.known, w.verdict, ${kept.lifecycle}, w.first_seen_run_id, w.first_seen_at, w.expected,
    w.settled, w.delta, w.currency, w.transaction_ids, w.warnings, w.explanation, ${kept.rejudged}, w.at_risk, w.recheck_at`;
}

/**
 * Nothing current to compare with: every verdict is inserted, and the groups are read from what was written, so
 * that a million verdicts are never held apart on the way (the shape of the run before history existed).
 */
function firstRunTail(runId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`, written AS (
  INSERT INTO recon.verdicts (${VERDICT_COLUMN_LIST}, recheck_at)
  SELECT ${newVerdictValues(runId)} FROM w
  RETURNING status, lifecycle, currency, expected_minor, settled_minor, delta_minor, at_risk_minor,
    cardinality(transaction_ids) AS tx_count
)
-- Grouped by what each row holds as written: an ORDERID without an order is exactly an unknown_order verdict, so
-- known_order is told once per group, not hashed with every row.
SELECT status, lifecycle, coalesce(currency, 'XXX') AS currency, status <> 'unknown_order' AS known_order, count(*)::integer AS verdicts,
  sum(tx_count)::integer AS transactions, sum(expected_minor)::text AS expected_minor, sum(settled_minor)::text AS settled_minor,
  sum(delta_minor)::text AS delta_minor, coalesce(sum(at_risk_minor), 0)::text AS at_risk_minor,
  count(*) FILTER (WHERE at_risk_minor IS NULL)::integer AS at_risk_unknown, count(*)::integer AS changed
FROM written
GROUP BY status, lifecycle, currency`;
}

/**
 * Only what changed is written: a changed verdict replaces the current one, which moves to recon.verdict_history
 * with this run as its end, as does the verdict of an ORDERID no longer judged; a verdict whose only news is when
 * to look again keeps its run. Staged, the changes are kept apart until the run finishes (applyStagedChangesSql).
 * The groups cover every verdict of the scope, written or not; the ORDERIDs that left come as a group of status null.
 */
function compareTail(runId: RawBuilder<unknown>, staged: boolean): RawBuilder<unknown> {
  return sql`, ${staged ? stagedChangesCte(runId) : changesWrittenCtes(runId)}
SELECT w.verdict AS status, w.lifecycle, coalesce(w.currency, 'XXX') AS currency, w.verdict IS DISTINCT FROM 'unknown_order' AS known_order,
  count(*)::integer AS verdicts, coalesce(sum(cardinality(w.transaction_ids)), 0)::integer AS transactions,
  coalesce(sum(w.expected), 0)::text AS expected_minor, coalesce(sum(w.settled), 0)::text AS settled_minor,
  coalesce(sum(w.delta), 0)::text AS delta_minor, coalesce(sum(w.at_risk), 0)::text AS at_risk_minor,
  count(*) FILTER (WHERE w.at_risk IS NULL AND w.verdict IS NOT NULL)::integer AS at_risk_unknown,
  count(*) FILTER (WHERE w.change IN ('new', 'changed', 'removed'))::integer AS changed
FROM w
GROUP BY w.verdict, w.lifecycle, w.currency`;
}

/** The rows of `w` (the verdict statement's, or the staged ones) written to the current verdicts and their history. */
function changesWrittenCtes(runId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`archived AS (
  INSERT INTO recon.verdict_history (${VERDICT_COLUMN_LIST}, until_run_id)
  SELECT ${sql.join(VERDICT_COLUMNS.map((column) => sql.ref(`c.${column}`)))}, ${runId}
  FROM recon.verdicts c JOIN w ON w.order_id = c.order_id AND w.change IN ('changed', 'removed')
), inserted AS (
  INSERT INTO recon.verdicts (${VERDICT_COLUMN_LIST}, recheck_at)
  SELECT ${newVerdictValues(runId)} FROM w WHERE w.change = 'new'
), updated AS (
  UPDATE recon.verdicts v
  SET (${VERDICT_COLUMN_LIST}, recheck_at) = (${newVerdictValues(
    sql`CASE WHEN w.change = 'changed' THEN ${runId} ELSE v.run_id END`,
    {
      lifecycle: sql`CASE WHEN w.change = 'changed' THEN w.lifecycle ELSE v.lifecycle END`,
      rejudged: sql`CASE WHEN w.change = 'changed' THEN NULL ELSE v.rejudged_run_id END`,
    },
  )})
  FROM w WHERE w.change IN ('changed', 'recheck') AND v.order_id = w.order_id
), removed AS (
  DELETE FROM recon.verdicts v USING w WHERE w.change = 'removed' AND v.order_id = w.order_id
)`;
}

/** The columns of `w` a staged change keeps (recon.run_verdict_changes has them, named alike). */
const STAGED_COLUMNS = sql.join(
  [
    'change',
    'order_id',
    'known',
    'verdict',
    'lifecycle',
    'first_seen_run_id',
    'first_seen_at',
    'expected',
    'settled',
    'delta',
    'currency',
    'transaction_ids',
    'warnings',
    'explanation',
    'at_risk',
    'recheck_at',
  ].map((column) => sql.ref(column)),
);

function stagedChangesCte(runId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`staged AS (
  INSERT INTO recon.run_verdict_changes (run_id, ${STAGED_COLUMNS})
  SELECT ${runId}, ${STAGED_COLUMNS} FROM w WHERE w.change <> 'same'
)`;
}

/**
 * A staged run's changes, applied in the transaction that finishes it, as its slices would have written them, and
 * deleted: one statement, whose snapshot the history reads the replaced versions from.
 */
export function applyStagedChangesSql(runId: string): RawBuilder<{ applied: number }> {
  const run = sql`${runId}::bigint`;
  return sql<{ applied: number }>`WITH w AS (
  DELETE FROM recon.run_verdict_changes WHERE run_id = ${run} RETURNING ${STAGED_COLUMNS}
), ${changesWrittenCtes(run)}
SELECT count(*)::integer AS applied FROM w`;
}

/**
 * The first instant after as_of at which the passing of time alone may change the verdict, or null: the grace
 * period of an order awaiting its money, the 6 days of an approval wait, the 5 and 7 days of an uncaptured
 * authorization. Each rule's age is a fixed instant minus as_of, so the verdict stays the same until then.
 */
function recheckSql(p: VerdictParameters): RawBuilder<unknown> {
  const asOf = sql`${p.asOf.toISOString()}::timestamptz`;
  const after = (instant: RawBuilder<unknown>, hours: number, when: RawBuilder<unknown>) =>
    sql`CASE WHEN ${when} AND ${instant} + ${hours} * interval '1 hour' > ${asOf} THEN ${instant} + ${hours} * interval '1 hour' END`;
  const expectsPayment = sql`coalesce(x.status IN ('paid', 'partially_refunded', 'refunded'), false)`;
  const awaitsItsMoney = sql`((${expectsPayment} AND x.bits & ${TX.money} = 0)
    OR (x.status = 'authorized' AND x.bits & ${TX.authorization} = 0))`;
  const uncaptured = sql`x.status = 'authorized' AND x.bits & ${TX.capture} = 0`;
  return sql`least(
    ${after(sql`x.created_at`, p.graceHours, awaitsItsMoney)},
    ${after(sql`x.latest_approval_wait_at`, APPROVAL_WAIT_DAYS * 24, sql`x.bits & ${TX.succeeded} = 0`)},
    ${after(sql`x.first_authorized_at`, CAPTURE_AT_RISK_DAYS * 24, uncaptured)},
    ${after(sql`x.first_authorized_at`, CAPTURE_WINDOW_DAYS * 24, uncaptured)})`;
}

/**
 * The money a verdict puts at risk, written with it so that accountants sort and sum it without reading the
 * explanation back (the rule per status: the comment on reporting.reconciliation.at_risk_minor). Every figure is
 * known here: an unknown ORDERID has no amount, and its rule reads none.
 */
function atRiskSql(): RawBuilder<unknown> {
  return sql`CASE x.verdict
      WHEN 'matched' THEN 0
      WHEN 'pending' THEN 0
      WHEN 'capture_at_risk' THEN greatest(x.authorized - x.paid, 0)
      WHEN 'capture_expired' THEN greatest(x.authorized - x.paid, 0)
      WHEN 'approval_expired' THEN greatest(x.authorized - x.paid, x.expected - x.settled,
        CASE WHEN x.expected = 0 THEN x.amount_minor - x.paid END, 0)
      WHEN 'missing_at_provider' THEN CASE WHEN x.expected > 0 THEN x.expected ELSE x.amount_minor END
      WHEN 'over_refunded' THEN greatest(x.refunded - x.paid, 0)
      WHEN 'duplicate_payment' THEN greatest(x.settled - x.expected, 0)
      ELSE abs(x.delta)
    END`;
}

/** What does not change the status but deserves a look; null when nothing (most verdicts), else the list. */
function warningsSql(op: RawBuilder<string>): RawBuilder<unknown> {
  return sql`CASE WHEN j.abandoned_ids IS NULL AND NOT j.schedule_irregular AND (j.known OR j.first_currency = j.last_currency)
             AND j.misrouted IS NULL
             AND NOT ((j.verdict NOT IN ('matched', 'pending')) AND (j.previous_status IS NOT NULL) AND j.previous_status <> j.verdict) THEN NULL
      ELSE nullif(array_remove(ARRAY[
        -- One id, the usual case, needs no sort.
        CASE WHEN j.abandoned_ids IS NOT NULL THEN 'abandoned at the redirect step (0002), no money moved: '
          || CASE WHEN cardinality(j.abandoned_ids) = 1 THEN j.abandoned_ids[1]
                  ELSE (SELECT string_agg(id, ', ' ORDER BY id) FROM unnest(j.abandoned_ids) AS id) END END,
        CASE WHEN j.schedule_irregular THEN (
          SELECT 'instalment SCHEDULE position repeated: ' || string_agg(position::text, ', ' ORDER BY position)
          FROM (SELECT t.schedule_index AS position FROM recon.transactions t
                WHERE t.order_id = j.order_id AND t.exec_code = '0000' AND t.schedule_index IS NOT NULL
                  AND ${op} IN ('payment', 'capture')
                GROUP BY t.schedule_index HAVING count(*) > 1) repeated) END,
        CASE WHEN j.schedule_irregular THEN (
          SELECT 'instalment SCHEDULE position missing: ' || string_agg(position::text, ', ' ORDER BY position)
          FROM generate_series(1, (SELECT max(t.schedule_index) FROM recon.transactions t
                                   WHERE t.order_id = j.order_id AND t.exec_code = '0000' AND ${op} IN ('payment', 'capture'))) AS position
          WHERE NOT EXISTS (SELECT 1 FROM recon.transactions t
                            WHERE t.order_id = j.order_id AND t.exec_code = '0000' AND t.schedule_index = position
                              AND ${op} IN ('payment', 'capture'))) END,
        CASE WHEN NOT j.known AND j.first_currency <> j.last_currency THEN
          'succeeded transactions in several currencies: settled adds them up' END,
        CASE WHEN (j.verdict NOT IN ('matched', 'pending')) AND (j.previous_status IS NOT NULL) AND j.previous_status <> j.verdict THEN
          'was ' || j.previous_status || ' in the previous run' END
      ] || coalesce(j.misrouted, '{}'), NULL), '{}') END`;
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
    sql.raw(`recon.format_money(x.${column}, coalesce(x.order_currency, x.first_currency))`);
  const neededKind = sql`CASE WHEN x.status = 'authorized' THEN 'authorization' ELSE 'payment or capture' END`;
  return sql`CASE x.verdict
    WHEN 'unknown_order' THEN format('%s succeeded transaction(s) carry this ORDERID but there is no such order',
      (SELECT count(*) FROM recon.transactions t WHERE t.order_id = x.order_id AND t.exec_code = '0000'))
    WHEN 'currency_mismatch' THEN format('succeeded transaction(s) in %s, the order is in %s',
      (SELECT string_agg(DISTINCT t.currency, ', ') FROM recon.transactions t
       WHERE t.order_id = x.order_id AND t.exec_code = '0000' AND t.currency <> x.order_currency), x.order_currency)
    WHEN 'notification_conflict' THEN format('a notification and the export disagree on %s transaction(s): %s',
      jsonb_array_length(x.conflicts), (SELECT string_agg(c->>'transaction_id', ', ') FROM jsonb_array_elements(x.conflicts) c))
    WHEN 'duplicate_payment' THEN format('%s succeeded payments or captures where one was expected: %s', x.payment_count,
      (SELECT string_agg(t.transaction_id, ', ' ORDER BY t.occurred_at, t.transaction_id) FROM recon.transactions t
       WHERE t.order_id = x.order_id AND t.exec_code = '0000' AND ${operationSql(sql.ref('t.operation_type'))} IN ('payment', 'capture')))
    WHEN 'over_refunded' THEN format('refunded %s is more than paid %s', ${money('refunded')}, ${money('paid')})
    WHEN 'status_mismatch' THEN CASE
      WHEN x.status = 'cancelled' THEN format('the order is cancelled but %s was settled', ${money('settled')})
      WHEN x.status = 'authorized' THEN format('the order is authorized but %s was paid or captured', ${money('paid')})
      ELSE format('the order is %s but the service only authorized %s, never captured', x.status, ${money('authorized')}) END
    WHEN 'amount_mismatch' THEN CASE
      WHEN x.status = 'authorized' THEN format('authorized %s, the order is for %s (delta %s)',
        ${money('authorized')}, ${money('amount_minor')}, ${money('delta')})
      ELSE format('settled %s (paid %s - refunded %s) differs from the expected %s by %s, beyond the tolerance of %s',
        ${money('settled')}, ${money('paid')}, ${money('refunded')}, ${money('expected')}, ${money('delta')},
        recon.format_money(${tolerance}, coalesce(x.order_currency, x.first_currency))) END
    WHEN 'approval_expired' THEN format('the instalment authorization has waited for approval (0003) since %s, 6 days or more: expired',
      x.latest_approval_wait_at)
    WHEN 'capture_expired' THEN format('authorized on %s, 7 days or more ago, and never captured: the capture window is closed',
      x.first_authorized_at)
    WHEN 'capture_at_risk' THEN format('authorized on %s and not captured: capture before %s or lose it',
      x.first_authorized_at, x.first_authorized_at + interval '7 days')
    WHEN 'pending' THEN CASE
      WHEN x.waiting_for_approval THEN format('waiting for the approval (0003) given on %s, less than 6 days ago',
        x.latest_approval_wait_at)
      ELSE format('awaiting its %s: created %s, within the grace period of %s hours', ${neededKind},
        x.created_at, ${graceHours}::integer) END
    WHEN 'missing_at_provider' THEN format('the order is %s but the service has no succeeded %s for it, %s transaction(s) seen',
      x.status, ${neededKind}, cardinality(x.transaction_ids))
  END`;
}
