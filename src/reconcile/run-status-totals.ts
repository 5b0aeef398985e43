import type { VerdictStatus } from '../db/schema.ts';
import type { WrittenVerdictGroup } from './verdicts-sql.ts';

/** One line of a run's bridge broken down by status, as recon.run_status_totals keeps it. */
export interface RunStatusTotal {
  readonly currency: string;
  readonly status: VerdictStatus;
  readonly verdicts: number;
  readonly orders: number;
  readonly unknownOrders: number;
  /** Minor units, as decimal strings (bigint on the way, never a float). */
  readonly expectedMinor: string;
  readonly settledMinor: string;
  readonly deltaMinor: string;
  readonly atRiskMinor: string;
  readonly atRiskUnknown: number;
}

/**
 * The run's verdicts per currency and status, from the groups its statement returned (per status, lifecycle and
 * currency): the parts of the bridge, which add up to it.
 */
export function statusTotalsOf(groups: readonly WrittenVerdictGroup[]): RunStatusTotal[] {
  const byKey = new Map<
    string,
    {
      currency: string;
      status: VerdictStatus;
      verdicts: number;
      orders: number;
      unknownOrders: number;
      expected: bigint;
      settled: bigint;
      delta: bigint;
      atRisk: bigint;
      atRiskUnknown: number;
    }
  >();
  for (const group of groups) {
    if (group.status === null) continue;
    const key = `${group.currency}\u0000${group.status}`;
    const total = byKey.get(key) ?? {
      currency: group.currency,
      status: group.status as VerdictStatus,
      verdicts: 0,
      orders: 0,
      unknownOrders: 0,
      expected: 0n,
      settled: 0n,
      delta: 0n,
      atRisk: 0n,
      atRiskUnknown: 0,
    };
    total.verdicts += group.verdicts;
    if (group.known_order) total.orders += group.verdicts;
    else total.unknownOrders += group.verdicts;
    total.expected += BigInt(group.expected_minor);
    total.settled += BigInt(group.settled_minor);
    total.delta += BigInt(group.delta_minor);
    total.atRisk += BigInt(group.at_risk_minor);
    total.atRiskUnknown += group.at_risk_unknown;
    byKey.set(key, total);
  }
  return [...byKey.values()].map((total) => ({
    currency: total.currency,
    status: total.status,
    verdicts: total.verdicts,
    orders: total.orders,
    unknownOrders: total.unknownOrders,
    expectedMinor: total.expected.toString(),
    settledMinor: total.settled.toString(),
    deltaMinor: total.delta.toString(),
    atRiskMinor: total.atRisk.toString(),
    atRiskUnknown: total.atRiskUnknown,
  }));
}
