import { VERDICT_STATUSES, type Lifecycle, type RunScopeJson, type VerdictStatus } from '../db/schema.ts';

/**
 * What `recon report` shows of one reconciliation run. Everything here is bounded by the number of
 * currencies, statuses and days, never by the number of verdicts: the open exceptions are read apart, in pages.
 * Amounts are digit strings of minor units.
 */
export interface RunReport {
  readonly run: RunFacts;
  readonly bridge: readonly CurrencyBridge[];
  /** Verdicts per day of order creation (UTC), status and lifecycle, counted from the verdicts themselves. */
  readonly verdictGroups: readonly VerdictGroup[];
}

export interface RunFacts {
  readonly runId: string;
  readonly asOf: Date;
  readonly scope: RunScopeJson;
  readonly toleranceMinor: string;
  readonly graceHours: number;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  readonly ordersInScope: number | null;
  /** As stored by the run: one key per status that occurred. */
  readonly counts: Partial<Record<VerdictStatus, number>>;
  readonly notFound: readonly string[];
  readonly suspect: boolean;
  readonly suspectReason: string | null;
}

export interface CurrencyBridge {
  readonly currency: string;
  readonly orders: number;
  readonly unknownOrders: number;
  readonly expectedMinor: string;
  readonly settledMinor: string;
}

export interface VerdictGroup {
  /**
   * `YYYY-MM-DD` (UTC) of the order's creation; for an unknown order, of its earliest transaction in the
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
  /** The stored jsonb, as reconcile wrote it (see decodeExplanation). */
  readonly explanation: unknown;
}

export const NOT_EXCEPTIONS = ['matched', 'pending'] as const satisfies readonly VerdictStatus[];

export function isException(status: VerdictStatus): boolean {
  return !(NOT_EXCEPTIONS as readonly VerdictStatus[]).includes(status);
}

/** The order people read statuses in: matched, pending, then the exceptions in the order of the rules. */
export const STATUS_DISPLAY_ORDER: readonly VerdictStatus[] = [...NOT_EXCEPTIONS, ...VERDICT_STATUSES.filter(isException)];

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
 * a run that never finished, stored counts that disagree with the verdicts.
 */
export function reportWarnings(report: RunReport): string[] {
  const { run } = report;
  const totals = verdictTotals(report.verdictGroups);
  const warnings: string[] = [];
  if (run.suspect) {
    warnings.push(`SUSPECT RUN: ${run.suspectReason ?? 'orders in scope expect money but no transaction at all was found: this run proves nothing'}`);
  }
  if (run.finishedAt === null) warnings.push(`run ${run.runId} never finished: its verdicts may be incomplete`);
  const stored = Object.values(run.counts).reduce((sum, count) => sum + (count ?? 0), 0);
  if (stored !== totals.verdicts || (run.ordersInScope !== null && run.ordersInScope !== totals.verdicts)) {
    warnings.push(
      `the run's stored counts (${stored} by status, ${run.ordersInScope ?? 'no'} orders in scope)`
        + ` disagree with its ${totals.verdicts} verdicts`,
    );
  }
  return warnings;
}

/** The scope in words: `all orders`, `orders created since ...`, `3 orders: A, B, C`. */
export function describeScope(scope: RunScopeJson, maxIds = 10): string {
  switch (scope.kind) {
    case 'all':
      return 'all orders and unknown ORDERIDs';
    case 'created_since':
      return `orders created since ${scope.since}`;
    case 'orders': {
      const ids = scope.order_ids;
      const shown = ids.slice(0, maxIds).join(', ');
      const more = ids.length > maxIds ? ` and ${ids.length - maxIds} more` : '';
      return `${ids.length} order${ids.length === 1 ? '' : 's'}: ${shown}${more}`;
    }
    default:
      // A scope kind added after this code was written still prints, as stored.
      return JSON.stringify(scope);
  }
}

export interface DayVerdicts {
  /** `YYYY-MM-DD`, UTC. */
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
