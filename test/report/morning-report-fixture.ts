import type {
  AgeingCell,
  OpenException,
  ReceivedLine,
  RunReport,
  SettlementDay,
  StatusTotal,
} from '../../src/report/run-report.ts';

/**
 * A report built by hand for what an accountant reads first in the morning: the money of the last day and of the
 * run's days, the money at risk handled and not, the bridge by status with its money at risk. No database.
 */
export const GENERATED_AT = new Date('2026-11-20T07:00:00Z');

export function morningReport(overrides: Partial<RunReport> = {}): RunReport {
  return {
    run: {
      runId: '12',
      kind: 'nightly',
      description: 'nightly run of 2026-11-20: 70 orders',
      nightlyRunId: '4',
      nightlyDate: '2026-11-20',
      choice: 'latest_nightly',
      asOf: new Date('2026-11-20T06:00:00Z'),
      scope: { kind: 'orders', count: 70 },
      toleranceMinor: '0',
      graceHours: 24,
      startedAt: new Date('2026-11-20T06:00:01Z'),
      finishedAt: new Date('2026-11-20T06:00:03Z'),
      ordersInScope: 70,
      counts: { matched: 5, capture_expired: 63, missing_at_provider: 1, over_refunded: 1 },
      notFound: [],
      notFoundCount: 0,
      suspect: false,
      suspectReason: null,
      prunedAt: null,
    },
    timeZone: 'Europe/Paris',
    bridge: [
      { currency: 'EUR', orders: 69, unknownOrders: 0, expectedMinor: '60000', settledMinor: '50000' },
      { currency: 'KWD', orders: 1, unknownOrders: 0, expectedMinor: '0', settledMinor: '-12465' },
    ],
    statusTotals: [
      statusTotal('EUR', 'matched', 5, '50000', '50000', '0'),
      statusTotal('EUR', 'capture_expired', 63, '0', '0', '472500'),
      statusTotal('EUR', 'missing_at_provider', 1, '10000', '0', '10000'),
      statusTotal('KWD', 'over_refunded', 1, '0', '-12465', '12465'),
    ],
    accounts: [],
    // EUR received 470.43 of which 520.43 EUR paid for a USD order, in no bridge: 500.00 - 520.43 + ... = settled.
    receivedToBridge: [
      received('EUR', 'received', 3, 4, '102043', '750'),
      received('EUR', 'paid_for_another_currency', 1, 1, '-52043'),
      received('EUR', 'settled', 69, null, '50000'),
      received('KWD', 'received', 1, 1, '-12465', '0'),
      received('KWD', 'settled', 1, null, '-12465'),
      received('USD', 'settled', 1, null, '0'),
    ],
    verdictGroups: [
      { day: '2026-11-10', status: 'capture_expired', lifecycle: 'persisting', verdicts: 63 },
      { day: '2026-11-18', status: 'matched', lifecycle: null, verdicts: 5 },
      { day: '2026-11-19', status: 'missing_at_provider', lifecycle: 'new', verdicts: 1 },
      { day: '2026-11-19', status: 'over_refunded', lifecycle: 'new', verdicts: 1 },
    ],
    moneyMoved: {
      window: { from: '2026-11-10', to: '2026-11-19' },
      days: [
        settlementDay('2026-11-18', 'EUR', '30000', '0', '450'),
        settlementDay('2026-11-19', 'EUR', '20000', '5000', '300'),
        // A day of refunds alone: the net is negative, the gross nothing.
        settlementDay('2026-11-19', 'KWD', '0', '12345', '120'),
      ],
    },
    ageing: [
      ageing('capture_expired', false, 'EUR', 60, '450000', 2),
      ageing('capture_expired', true, 'EUR', 3, '22500', 0),
      ageing('missing_at_provider', false, 'EUR', 1, '10000', 0),
      ageing('over_refunded', false, 'KWD', 1, '12465', 0),
    ],
    verdictWarnings: {
      verdicts: 2,
      warnings: 3,
      listed: [
        {
          orderId: 'W-1',
          status: 'matched',
          currency: 'EUR',
          identifier: 'SHOP-INST',
          warning: 'payment T-W1 on account SHOP-INST, which does not serve wallet',
        },
        {
          orderId: 'W-2',
          status: 'pending',
          currency: 'EUR',
          identifier: null,
          warning: 'abandoned at the redirect step (0002), no money moved: T-W2',
        },
      ],
    },
    ...overrides,
  };
}

export function received(
  currency: string,
  line: ReceivedLine['line'],
  orders: number,
  transactions: number | null,
  amountMinor: string,
  feesMinor: string | null = null,
): ReceivedLine {
  return { currency, line, orders, transactions, amountMinor, feesMinor };
}

export function statusTotal(
  currency: string,
  status: StatusTotal['status'],
  verdicts: number,
  expectedMinor: string,
  settledMinor: string,
  atRiskMinor: string,
): StatusTotal {
  return {
    currency,
    status,
    verdicts,
    expectedMinor,
    settledMinor,
    differenceMinor: (BigInt(settledMinor) - BigInt(expectedMinor)).toString(),
    atRiskMinor,
    atRiskUnknown: 0,
  };
}

export function settlementDay(
  day: string,
  currency: string | null,
  paidMinor: string,
  refundedMinor: string,
  feesMinor: string,
): SettlementDay {
  return {
    day,
    currency,
    transactions: (paidMinor === '0' ? 0 : 1) + (refundedMinor === '0' ? 0 : 1),
    payments: paidMinor === '0' ? 0 : 1,
    refunds: refundedMinor === '0' ? 0 : 1,
    paidMinor,
    refundedMinor,
    feesMinor,
    netMinor: (BigInt(paidMinor) - BigInt(refundedMinor) - BigInt(feesMinor)).toString(),
  };
}

function ageing(
  status: AgeingCell['status'],
  acknowledged: boolean,
  currency: string,
  exceptions: number,
  atRiskMinor: string,
  atRiskUnknown: number,
): AgeingCell {
  return { status, acknowledged, currency, orderAgeBucket: '8-30 days', exceptions, atRiskMinor, atRiskUnknown };
}

export function openException(orderId: string, overrides: Partial<OpenException> = {}): OpenException {
  return {
    orderId,
    knownOrder: true,
    status: 'missing_at_provider',
    lifecycle: 'new',
    firstSeenRunId: '12',
    firstSeenAt: new Date('2026-11-20T06:00:00Z'),
    currency: 'EUR',
    expectedMinor: '10000',
    settledMinor: '0',
    deltaMinor: '-10000',
    atRiskMinor: '10000',
    orderAgeDays: 1,
    acknowledged: false,
    acknowledgedBy: null,
    acknowledgedLogin: null,
    acknowledgedAt: null,
    lastNote: null,
    lastNoteBy: null,
    lastNoteLogin: null,
    lastNoteAt: null,
    explanation: { rule: 'missing_at_provider', reason: 'no payment', transactions: [], warnings: [] },
    ...overrides,
  };
}

export async function* pages<T>(items: readonly T[], size = 2): AsyncGenerator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

export async function collect(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return text;
}
