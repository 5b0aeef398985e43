import { sql, type RawBuilder } from 'kysely';
import type { ReconcileScope } from './reconcile-scope.ts';

/**
 * A slice of the ORDERID space, [from, below) in the column's collation, a null bound being open: a run split
 * over several connections gives each one slice, and every ORDERID falls in exactly one.
 */
export interface OrderIdRange {
  readonly from: string | null;
  readonly below: string | null;
}

export const WHOLE_RANGE: OrderIdRange = { from: null, below: null };

/**
 * What each transaction contributes, as bits of one integer computed once per row: the aggregate then reads bits
 * instead of comparing strings again in every aggregate (docs/benchmarks.md).
 * S is the transactions with EXECCODE 0000.
 */
export const TX = {
  succeeded: 1,
  /** In S, a payment or a capture: the money the order expects. */
  money: 2,
  capture: 4,
  authorization: 8,
  /** EXECCODE 0002: abandoned at the redirect step. */
  abandoned: 16,
  /** An authorization waiting for the instalment approval (EXECCODE 0003). */
  approvalWait: 32,
  /** Money with an instalment SCHEDULE position. */
  scheduled: 64,
  refund: 128,
} as const;

/**
 * The operation type, lower-cased and trimmed as the service may write it either way; the spellings recon
 * expects are recognized without calling a function, the rest are folded.
 */
export function operationSql(column: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`CASE WHEN ${column} IN ('payment', 'capture', 'authorization', 'refund') THEN ${column} ELSE lower(btrim(${column})) END`;
}

/**
 * The TX bit of an operation type (0 for an unknown one), as operationSql reads it: a spelling recon expects is
 * told by one comparison per kind until it matches, where folding it first and classifying it then compared it
 * twice over.
 */
function operationBitSql(column: RawBuilder<unknown>): RawBuilder<number> {
  const kinds = sql`WHEN 'payment' THEN ${TX.money} WHEN 'capture' THEN ${TX.money | TX.capture}
    WHEN 'authorization' THEN ${TX.authorization} WHEN 'refund' THEN ${TX.refund}`;
  return sql<number>`CASE ${column} ${kinds} ELSE CASE lower(btrim(${column})) ${kinds} ELSE 0 END END`;
}

/**
 * The facts of every order in a run's scope and slice, as the CTEs `scoped` (the orders), `sums` (per ORDERID, one
 * pass over its transactions) and `conflicts`, for the verdict statement to join. Set-based: one aggregate over
 * the whole scope, never a query per order.
 *
 * - `sums` walks the transactions in ORDERID order (the ORDER BY lets the order_id index feed the aggregate
 *   without a sort) and keeps what every order needs: the transaction ids, the bits of TX seen, the money by kind
 *   and the currencies of S, and the facts some orders need (dates of authorizations, abandoned ids) as aggregates of
 *   columns null for every other transaction: a null is skipped without a call, where reading them again by index
 *   cost a lookup for each of a fifth of the orders. The SCHEDULE positions of instalments are read by the verdict
 *   statement for the orders that have some, as the bits tell: an aggregate for them cost every transaction more.
 * - The sums are of every transaction of the ORDERID, whatever its currency: the few orders with a succeeded
 *   transaction in another currency are currency_mismatch verdicts, whose money the verdict statement sums again in
 *   the order's currency alone, so that no amount leaks into another currency's bridge.
 * - Conflicts: a valid notification and the export row of the same transaction, both final (not 0002/0003),
 *   that disagree on EXECCODE or AMOUNT. A bad HASH is never evidence.
 * - Misrouted: the succeeded payments, captures and authorizations of an order on an account that does not serve
 *   the order's payment method (recon.accounts), one line each for the verdict's warnings. Read only when some
 *   account is limited to some methods: a merchant with one account pays nothing for it.
 */
export function orderFactsCtes(scope: ReconcileScope, range: OrderIdRange): RawBuilder<unknown> {
  const filter = scopeFilter(scope);
  const kind = operationBitSql(sql.ref('t.operation_type'));
  return sql`scoped AS (
  SELECT o.order_id, o.amount_minor, o.currency AS order_currency, o.status, o.refunded_minor, o.payment_method, o.created_at
  FROM recon.orders o
  WHERE ${filter.orders} AND ${rangeFilter(sql.ref('o.order_id'), range)}
), sums AS (
  SELECT order_id,
    array_agg(transaction_id) AS transaction_ids,
    bit_or(bits) AS bits,
    -- Plain aggregates over columns that are null where a transaction does not count: a null costs no call.
    -- sum_minor stays a bigint where sum would build a numeric per order (migration 0012).
    coalesce(recon.sum_minor(paid), 0) AS paid,
    coalesce(recon.sum_minor(refunded), 0) AS refunded,
    coalesce(recon.sum_minor(authorized), 0) AS authorized,
    count(paid)::integer AS payment_count,
    -- Byte order, not the database's collation: which code sorts first does not matter, only whether they differ.
    min(succeeded_currency COLLATE "C") AS first_currency,
    max(succeeded_currency COLLATE "C") AS last_currency,
    min(authorized_at) AS first_authorized_at,
    max(approval_wait_at) AS latest_approval_wait_at,
    -- In no particular order: the verdict statement sorts them for the warning.
    array_agg(transaction_id) FILTER (WHERE bits & ${TX.abandoned} <> 0) AS abandoned_ids
  FROM (
    SELECT order_id, transaction_id, bits,
      CASE WHEN bits & ${TX.authorization} <> 0 THEN occurred_at END AS authorized_at,
      CASE WHEN bits & ${TX.approvalWait} <> 0 THEN occurred_at END AS approval_wait_at,
      CASE WHEN bits & ${TX.money} <> 0 THEN amount_minor END AS paid,
      CASE WHEN bits & ${TX.refund} <> 0 THEN amount_minor END AS refunded,
      CASE WHEN bits & ${TX.authorization} <> 0 THEN amount_minor END AS authorized,
      CASE WHEN bits & ${TX.succeeded} <> 0 THEN currency END AS succeeded_currency
    FROM (
      SELECT t.order_id, t.transaction_id, t.amount_minor, t.currency, t.occurred_at,
        CASE t.exec_code
          WHEN '0000' THEN ${TX.succeeded} | ${kind}
            | CASE WHEN t.schedule_index IS NOT NULL AND ${kind} & ${TX.money} <> 0 THEN ${TX.scheduled} ELSE 0 END
          WHEN '0002' THEN ${TX.abandoned}
          WHEN '0003' THEN CASE WHEN ${kind} = ${TX.authorization} THEN ${TX.approvalWait} ELSE 0 END
          ELSE 0
        END AS bits
      FROM recon.transactions t
      WHERE t.order_id IS NOT NULL AND ${filter.of(sql.ref('t.order_id'))} AND ${rangeFilter(sql.ref('t.order_id'), range)}
      ORDER BY t.order_id
      -- OFFSET 0 keeps this a subquery of its own: the bits are computed once per transaction, not once per column
      -- that reads them.
      OFFSET 0
    ) tx
  ) counted
  GROUP BY order_id
), conflicts AS (
  SELECT t.order_id, jsonb_agg(DISTINCT jsonb_build_object(
      'transaction_id', t.transaction_id,
      'export_exec_code', t.exec_code,
      'notified_exec_code', n.exec_code,
      'export_amount_minor', t.amount_minor::text,
      'notified_amount_minor', n.amount_minor::text,
      'notification_id', n.notification_id::text
    )) AS conflicts
  FROM recon.notifications n
  JOIN recon.transactions t ON t.transaction_id = n.transaction_id
  WHERE n.hash_valid
    AND n.exec_code NOT IN ('0002', '0003') AND t.exec_code NOT IN ('0002', '0003')
    AND (n.exec_code <> t.exec_code OR n.amount_minor <> t.amount_minor)
    AND ${filter.of(sql.ref('t.order_id'))} AND ${rangeFilter(sql.ref('t.order_id'), range)}
  GROUP BY t.order_id
), misrouted AS (
  SELECT t.order_id, array_agg(format('%s %s on account %s, which does not serve %s', t.op, t.transaction_id,
      t.identifier, t.payment_method) ORDER BY t.transaction_id) AS misrouted
  FROM (
    SELECT t.order_id, t.transaction_id, t.identifier, o.payment_method, ${operationSql(sql.ref('t.operation_type'))} AS op
    FROM recon.transactions t
    JOIN recon.accounts a ON a.identifier = t.identifier
    JOIN recon.orders o ON o.order_id = t.order_id
    WHERE EXISTS (SELECT 1 FROM recon.accounts l WHERE l.payment_methods IS NOT NULL)
      AND t.exec_code = '0000' AND NOT (o.payment_method = ANY (a.payment_methods))
      AND ${filter.of(sql.ref('t.order_id'))} AND ${rangeFilter(sql.ref('t.order_id'), range)}
  ) t
  WHERE t.op IN ('payment', 'capture', 'authorization')
  GROUP BY t.order_id
)`;
}

/** The ORDERIDs of a slice; `true` for the whole space. */
export function rangeFilter(orderId: RawBuilder<unknown>, range: OrderIdRange): RawBuilder<unknown> {
  const from = range.from === null ? sql`true` : sql`${orderId} >= ${range.from}`;
  const below = range.below === null ? sql`true` : sql`${orderId} < ${range.below}`;
  return sql`${from} AND ${below}`;
}

/**
 * Which ORDERIDs a scope judges: its orders (`orders`, over recon.orders as `o`), and (except for a creation-date
 * scope, since an unknown ORDERID has no creation date) the ORDERIDs among its transactions that have a succeeded
 * one but no order. `of(column)` tells whether the ORDERID in that column is in scope.
 */
export function scopeFilter(scope: ReconcileScope): {
  orders: RawBuilder<unknown>;
  of: (orderId: RawBuilder<unknown>) => RawBuilder<unknown>;
  unknownOrders: boolean;
} {
  switch (scope.kind) {
    case 'all':
      return { orders: sql`true`, of: () => sql`true`, unknownOrders: true };
    case 'orders': {
      const ids = sql`${[...new Set(scope.orderIds)]}::text[]`;
      return {
        orders: sql`o.order_id = ANY (${ids})`,
        of: (orderId) => sql`${orderId} = ANY (${ids})`,
        unknownOrders: true,
      };
    }
    case 'created_since': {
      const since = sql`${scope.since.toISOString()}::timestamptz`;
      return {
        orders: sql`o.created_at >= ${since}`,
        of: (orderId) => sql`${orderId} IN (SELECT c.order_id FROM recon.orders c WHERE c.created_at >= ${since})`,
        unknownOrders: false,
      };
    }
  }
}
