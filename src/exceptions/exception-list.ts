import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { ExceptionsView, Schema, VerdictStatus } from '../db/schema.ts';

export interface ExceptionListFilter {
  readonly status?: VerdictStatus | undefined;
  /** true: acknowledged only; false: not acknowledged only (new, reopened, lapsed); absent: both. */
  readonly acknowledged?: boolean | undefined;
  /** At most this many, oldest first (reporting.exceptions' order). */
  readonly limit: number;
}

/** An open exception as `recon exceptions list` shows it. Amounts: digit strings of minor units, and decimals. */
export interface ExceptionListItem {
  readonly orderId: string;
  readonly status: VerdictStatus;
  readonly currency: string | null;
  readonly firstSeen: Date | null;
  readonly orderAgeDays: number | null;
  readonly expectedMinor: string;
  readonly settledMinor: string;
  readonly atRiskMinor: string | null;
  readonly expected: string;
  readonly settled: string;
  readonly atRisk: string | null;
  readonly reason: string | null;
  readonly acknowledged: boolean;
  readonly acknowledgedBy: string | null;
  readonly acknowledgedAt: Date | null;
  readonly lastNote: string | null;
  readonly lastNoteBy: string | null;
  readonly lastNoteAt: Date | null;
  /** The logins that acknowledged and noted, whatever names they gave. */
  readonly acknowledgedLogin: string | null;
  readonly lastNoteLogin: string | null;
}

export interface ExceptionList {
  readonly items: readonly ExceptionListItem[];
  /** Every exception the filter matches, shown or not. */
  readonly total: number;
}

const COLUMNS = [
  'order_id',
  'status',
  'currency',
  'first_seen',
  'order_age_days',
  'expected_minor',
  'settled_minor',
  'at_risk_minor',
  'expected',
  'settled',
  'at_risk',
  'reason',
  'acknowledged',
  'acknowledged_by',
  'acknowledged_at',
  'last_note',
  'last_note_by',
  'last_note_at',
  'acknowledged_login',
  'last_note_login',
] as const;
type ExceptionRow = Pick<Selectable<ExceptionsView>, (typeof COLUMNS)[number]>;

/** The open exceptions from reporting.exceptions, the one place that says whether an acknowledgement holds. */
export async function listExceptions(db: Kysely<Schema>, filter: ExceptionListFilter): Promise<ExceptionList> {
  const filtered = <O>(query: SelectQueryBuilder<Schema, 'reporting.exceptions', O>) => {
    let narrowed = query;
    if (filter.status !== undefined) narrowed = narrowed.where('status', '=', filter.status);
    if (filter.acknowledged !== undefined) narrowed = narrowed.where('acknowledged', '=', filter.acknowledged);
    return narrowed;
  };
  const rows = await filtered(db.selectFrom('reporting.exceptions').select(COLUMNS))
    .orderBy('first_seen')
    .orderBy('order_id')
    .limit(filter.limit)
    .execute();
  const { total } = await filtered(
    db.selectFrom('reporting.exceptions').select((eb) => eb.fn.countAll<string>().as('total')),
  ).executeTakeFirstOrThrow();
  return { items: rows.map(rowToItem), total: Number(total) };
}

function rowToItem(row: ExceptionRow): ExceptionListItem {
  return {
    orderId: row.order_id,
    status: row.status,
    currency: row.currency,
    firstSeen: row.first_seen,
    orderAgeDays: row.order_age_days,
    expectedMinor: row.expected_minor,
    settledMinor: row.settled_minor,
    atRiskMinor: row.at_risk_minor,
    expected: row.expected,
    settled: row.settled,
    atRisk: row.at_risk,
    reason: row.reason,
    acknowledged: row.acknowledged,
    acknowledgedBy: row.acknowledged_by,
    acknowledgedAt: row.acknowledged_at,
    lastNote: row.last_note,
    lastNoteBy: row.last_note_by,
    lastNoteAt: row.last_note_at,
    acknowledgedLogin: row.acknowledged_login,
    lastNoteLogin: row.last_note_login,
  };
}
