import { VERDICT_STATUSES, type Lifecycle, type RunKind, type RunScopeJson, type VerdictStatus } from '../db/schema.ts';

/**
 * What `recon report` shows of one reconciliation run. Everything here is bounded by the number of
 * currencies, statuses and days, never by the number of verdicts: the open exceptions are read apart, in pages.
 * Amounts are digit strings of minor units.
 */
export interface RunReport {
  readonly run: RunFacts;
  /** The IANA zone whose dates are the report's days (RECON_REPORT_TIMEZONE). */
  readonly timeZone: string;
  readonly bridge: readonly CurrencyBridge[];
  /** The bridge by currency and status (reporting.run_status_totals): each currency's rows add up to its bridge. */
  readonly statusTotals: readonly StatusTotal[];
  /** What each processing account settled for the run's orders, per currency (reporting.run_account_totals). */
  readonly accounts: readonly AccountTotal[];
  /** From the money received to the bridge's settled, per currency (reporting.received_to_bridge), by step. */
  readonly receivedToBridge: readonly ReceivedLine[];
  /** Verdicts per day of order creation (in timeZone), status and lifecycle, counted from the verdicts themselves. */
  readonly verdictGroups: readonly VerdictGroup[];
  readonly moneyMoved: MoneyMoved;
  /** The run's open exceptions by status, currency and age of their order at the run's as_of. */
  readonly ageing: readonly AgeingCell[];
  /** The warnings on the run's verdicts, whatever their status: counted, and the first of them listed. */
  readonly verdictWarnings: VerdictWarnings;
}

/** Warnings change no status: a matched order paid on the wrong account is in no list of exceptions, but in this. */
export interface VerdictWarnings {
  /** Verdicts with at least one warning. */
  readonly verdicts: number;
  /** Warnings in all. */
  readonly warnings: number;
  /** The first of them by order id (at most as many as the report was asked to list). */
  readonly listed: readonly VerdictWarning[];
}

export interface VerdictWarning {
  readonly orderId: string;
  readonly status: VerdictStatus;
  readonly currency: string | null;
  /** The account the warning names (a payment on an account that does not serve the order's method), else null. */
  readonly identifier: string | null;
  readonly warning: string;
}

export interface RunFacts {
  readonly runId: string;
  readonly kind: RunKind;
  /** The scope in words, as the run stored it ('nightly run of 2026-11-26: 19,999 orders'). */
  readonly description: string;
  readonly nightlyRunId: string | null;
  /** YYYY-MM-DD of the nightly run, for a nightly run's reconciliation. */
  readonly nightlyDate: string | null;
  /** How the report came to show this run: named with --run, or the default (see findRun). */
  readonly choice: RunChoice;
  readonly asOf: Date;
  readonly scope: RunScopeJson;
  readonly toleranceMinor: string;
  readonly graceHours: number;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  readonly ordersInScope: number | null;
  /** As stored by the run: one key per status that occurred. */
  readonly counts: Partial<Record<VerdictStatus, number>>;
  /** The first of the ORDERIDs named that are neither an order nor an ORDERID with transactions. */
  readonly notFound: readonly string[];
  readonly notFoundCount: number;
  readonly suspect: boolean;
  readonly suspectReason: string | null;
  /** When retention removed the run's bridge and the versions only it needed (recon prune); null while whole. */
  readonly prunedAt: Date | null;
}

/** `named`: --run; otherwise the latest finished nightly run or, before the first, the latest run over all orders. */
export type RunChoice = 'named' | 'latest_nightly' | 'latest_over_all_orders';

export interface CurrencyBridge {
  readonly currency: string;
  readonly orders: number;
  readonly unknownOrders: number;
  readonly expectedMinor: string;
  readonly settledMinor: string;
}

/** One status's share of a currency's bridge. */
export interface StatusTotal {
  /** XXX for verdicts without a currency, as in the bridge. */
  readonly currency: string;
  readonly status: VerdictStatus;
  readonly verdicts: number;
  readonly expectedMinor: string;
  readonly settledMinor: string;
  /** settled - expected of these verdicts: the statuses' differences add up to the bridge's. */
  readonly differenceMinor: string;
  /**
   * The money these verdicts put at risk, as the run wrote it (reporting.run_status_totals.at_risk_minor): what a
   * difference of 0.00 may hide, such as the authorized money of capture_expired orders never captured.
   */
  readonly atRiskMinor: string;
  /** How many of them have no known money at risk (their figures were missing). */
  readonly atRiskUnknown: number;
}

/** What one processing account settled for the run's orders in one currency: its succeeded transactions. */
export interface AccountTotal {
  /** The account's IDENTIFIER; null for transactions that name no account. */
  readonly identifier: string | null;
  /** The account's group as recon is configured now (RECON_ACCOUNTS); null when none. */
  readonly accountGroup: string | null;
  /** Null for transactions without a CURRENCY (their amounts were read with two decimals). */
  readonly currency: string | null;
  readonly orders: number;
  readonly transactions: number;
  /** Payments and captures. */
  readonly paidMinor: string;
  readonly refundedMinor: string;
  /** paid - refunded. */
  readonly settledMinor: string;
}

/** The lines of reporting.received_to_bridge, in their order: each currency's add up to its bridge's settled. */
export const RECEIVED_LINES = [
  'received',
  'paid_for_another_currency',
  'unknown_to_another_currency',
  'unknown_from_another_currency',
  'without_currency',
  'not_explained',
  'settled',
] as const;
export type ReceivedLineKind = (typeof RECEIVED_LINES)[number];

export interface ReceivedLine {
  /** XXX for the bridge of verdicts without a currency. */
  readonly currency: string;
  readonly line: ReceivedLineKind;
  readonly orders: number | null;
  readonly transactions: number | null;
  /** Signed as it adds up to settled. */
  readonly amountMinor: string;
  /** The fees of the money received, on the received line; null on the others. */
  readonly feesMinor: string | null;
}

/** How a report names an account: its IDENTIFIER, or that the transactions named none. */
export function accountName(account: Pick<AccountTotal, 'identifier'>): string {
  return account.identifier ?? '(no account)';
}

/**
 * Whether the people's formats (table, html) show the money per account: only when it says more than the bridge,
 * that is when the run's transactions went through more than one account or through a named one. A merchant with a
 * single account whose exports name none would read the bridge's settled twice.
 */
export function showsAccounts(accounts: readonly AccountTotal[]): boolean {
  return new Set(accounts.map((account) => account.identifier)).size > 1 || accounts.some((a) => a.identifier !== null);
}

/**
 * The money the service moved on the run's days (reporting.settlement_daily): every succeeded transaction of those
 * days, whatever order it belongs to, as recon holds them when the report is made.
 */
export interface MoneyMoved {
  /**
   * The run's days, `YYYY-MM-DD` in the report's zone, from its first order's creation to its last day with an order
   * created or money moved, at most the day of its as_of (see runDays); null when the run has no dated verdict.
   */
  readonly window: { readonly from: string; readonly to: string } | null;
  /** One row per day and currency that moved money, in day then currency order. */
  readonly days: readonly SettlementDay[];
}

export interface SettlementDay {
  readonly day: string;
  /** Null for transactions without a CURRENCY (their amounts were read with two decimals). */
  readonly currency: string | null;
  readonly transactions: number;
  readonly payments: number;
  readonly refunds: number;
  /** Payments and captures. */
  readonly paidMinor: string;
  readonly refundedMinor: string;
  /** The service's fees, BILLINGFEES INCL. VAT. */
  readonly feesMinor: string;
  /** paid - refunded - fees. */
  readonly netMinor: string;
}

/**
 * Ages of an exception's order, in whole days at the run's as_of; `no order` for an unknown ORDERID. Words, as in
 * reporting.exception_ageing: a spreadsheet turns a bare `4-7` or `8-30` into a date.
 */
export const AGE_BUCKETS = ['0-3 days', '4-7 days', '8-30 days', 'over 30 days', 'no order'] as const;
export type AgeBucket = (typeof AGE_BUCKETS)[number];

export interface AgeingCell {
  readonly status: VerdictStatus;
  /** Acknowledged as the run finished (see acknowledgement-sql.ts): such exceptions are counted apart. */
  readonly acknowledged: boolean;
  readonly currency: string | null;
  /** The age of the order, not how long the exception has been open. */
  readonly orderAgeBucket: AgeBucket;
  readonly exceptions: number;
  /** The money they put at risk (reporting.reconciliation.at_risk_minor), those whose figures are missing left out. */
  readonly atRiskMinor: string;
  /** How many of them have no known money at risk. */
  readonly atRiskUnknown: number;
}

export interface VerdictGroup {
  /**
   * `YYYY-MM-DD` (in the report's zone) of the order's creation; for an unknown order, of its earliest transaction in the
   * explanation; null when neither is known (such verdicts count in the totals, not in the chart).
   */
  readonly day: string | null;
  readonly status: VerdictStatus;
  readonly lifecycle: Lifecycle | null;
  readonly verdicts: number;
}

/** One open exception: a verdict of the run whose status is neither matched nor pending. */
export interface OpenException {
  readonly orderId: string;
  readonly knownOrder: boolean;
  readonly status: VerdictStatus;
  readonly lifecycle: Lifecycle | null;
  readonly firstSeenRunId: string | null;
  readonly firstSeenAt: Date | null;
  readonly currency: string | null;
  readonly expectedMinor: string;
  readonly settledMinor: string;
  readonly deltaMinor: string;
  /** The money it puts at risk (reporting.reconciliation.at_risk_minor); null when its figures are missing. */
  readonly atRiskMinor: string | null;
  /** Whole days from the order's creation to the run's as_of; null for an unknown ORDERID. */
  readonly orderAgeDays: number | null;
  /** Marked as handled by an accountant, and still so when the run finished; by whom and when. */
  readonly acknowledged: boolean;
  /** The name given (anybody may type any), and the database login that acted. */
  readonly acknowledgedBy: string | null;
  readonly acknowledgedLogin: string | null;
  readonly acknowledgedAt: Date | null;
  /** The latest note on the order before the run finished, even of an acknowledgement that lapsed. */
  readonly lastNote: string | null;
  readonly lastNoteBy: string | null;
  readonly lastNoteLogin: string | null;
  readonly lastNoteAt: Date | null;
  /** The stored jsonb, as reconcile wrote it (see decodeExplanation). */
  readonly explanation: unknown;
}

export const NOT_EXCEPTIONS = ['matched', 'pending'] as const satisfies readonly VerdictStatus[];

export function isException(status: VerdictStatus): boolean {
  return !(NOT_EXCEPTIONS as readonly VerdictStatus[]).includes(status);
}

/** The order people read statuses in: matched, pending, then the exceptions in the order of the rules. */
export const STATUS_DISPLAY_ORDER: readonly VerdictStatus[] = [
  ...NOT_EXCEPTIONS,
  ...VERDICT_STATUSES.filter(isException),
];

export interface VerdictTotals {
  readonly verdicts: number;
  readonly matched: number;
  readonly pending: number;
  readonly exceptions: number;
  readonly unknownOrders: number;
  readonly byStatus: ReadonlyMap<VerdictStatus, number>;
  readonly byLifecycle: Readonly<Record<Lifecycle, number>>;
  /** Verdicts left out of the chart: no creation day and no dated transaction. */
  readonly undated: number;
}

export function verdictTotals(groups: readonly VerdictGroup[]): VerdictTotals {
  const byStatus = new Map<VerdictStatus, number>();
  const byLifecycle: Record<Lifecycle, number> = { new: 0, persisting: 0, resolved: 0 };
  let verdicts = 0;
  let undated = 0;
  for (const group of groups) {
    verdicts += group.verdicts;
    byStatus.set(group.status, (byStatus.get(group.status) ?? 0) + group.verdicts);
    if (group.lifecycle) byLifecycle[group.lifecycle] += group.verdicts;
    if (group.day === null) undated += group.verdicts;
  }
  const count = (status: VerdictStatus) => byStatus.get(status) ?? 0;
  return {
    verdicts,
    matched: count('matched'),
    pending: count('pending'),
    exceptions: verdicts - count('matched') - count('pending'),
    unknownOrders: count('unknown_order'),
    byStatus,
    byLifecycle,
    undated,
  };
}

/**
 * What a reader must see before any figure: a suspect run (an empty source must never read as reconciled),
 * a run that never finished, a run whose history retention pruned, stored counts that disagree with the verdicts.
 */
export function reportWarnings(report: RunReport): string[] {
  const { run } = report;
  const totals = verdictTotals(report.verdictGroups);
  const warnings: string[] = [];
  if (run.suspect) {
    warnings.push(
      `SUSPECT RUN: ${run.suspectReason ?? 'orders in scope expect money but no transaction at all was found: this run proves nothing'}`,
    );
  }
  if (run.finishedAt === null) warnings.push(`run ${run.runId} never finished: its verdicts may be incomplete`);
  if (run.prunedAt !== null) {
    warnings.push(
      `run ${run.runId}'s history was pruned on ${run.prunedAt.toISOString().slice(0, 10)} (RECON_RUN_RETENTION_DAYS): ` +
        'its bridge and the verdicts no current run needs are gone',
    );
    return warnings;
  }
  const stored = Object.values(run.counts).reduce((sum, count) => sum + (count ?? 0), 0);
  if (stored !== totals.verdicts || (run.ordersInScope !== null && run.ordersInScope !== totals.verdicts)) {
    warnings.push(
      `the run's stored counts (${stored} by status, ${run.ordersInScope ?? 'no'} orders in scope)` +
        ` disagree with its ${totals.verdicts} verdicts`,
    );
  }
  return warnings;
}

/** What the run was, in a few words: 'nightly run of 2026-11-26: 2,000 orders', 'backfill of 2 orders', ... */
export function runTitle(run: Pick<RunFacts, 'kind' | 'description'>): string {
  return run.kind === 'backfill' ? `backfill of ${run.description}` : run.description;
}

/** Why this run is the one shown, when it was not named: the header says which default it is. */
export function runChoiceNote(choice: RunChoice): string | null {
  switch (choice) {
    case 'named':
      return null;
    case 'latest_nightly':
      return 'the latest nightly run';
    case 'latest_over_all_orders':
      return 'the latest run over all orders: no nightly run has finished yet';
  }
}

/** `a, b, c and 97 more` of the not-found ORDERIDs, at most `shown` of them. */
export function describeNotFound(
  run: Pick<RunFacts, 'notFound' | 'notFoundCount'>,
  shown: number,
  format: (id: string) => string = (id) => id,
): string {
  const listed = run.notFound.slice(0, shown);
  const more = run.notFoundCount - listed.length;
  return `${listed.map(format).join(', ')}${more > 0 ? ` and ${more.toLocaleString('en-US')} more` : ''}`;
}

export interface DayVerdicts {
  /** `YYYY-MM-DD`, in the report's zone. */
  readonly day: string;
  readonly matched: number;
  readonly pending: number;
  readonly exceptions: number;
  readonly byStatus: ReadonlyMap<VerdictStatus, number>;
}

/** The dated verdicts per day, in day order; days without verdicts are absent. */
export function verdictsPerDay(groups: readonly VerdictGroup[]): DayVerdicts[] {
  const days = new Map<string, Map<VerdictStatus, number>>();
  for (const group of groups) {
    if (group.day === null) continue;
    const byStatus = days.get(group.day) ?? new Map<VerdictStatus, number>();
    byStatus.set(group.status, (byStatus.get(group.status) ?? 0) + group.verdicts);
    days.set(group.day, byStatus);
  }
  return [...days.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([day, byStatus]) => {
      const matched = byStatus.get('matched') ?? 0;
      const pending = byStatus.get('pending') ?? 0;
      const all = [...byStatus.values()].reduce((sum, count) => sum + count, 0);
      return { day, matched, pending, exceptions: all - matched - pending, byStatus };
    });
}
