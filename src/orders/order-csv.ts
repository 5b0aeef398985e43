import { ReconError } from '../errors.ts';
import { cleanHeaderName } from '../normalize/export-columns.ts';
import {
  createOrderNormalizer,
  type OrderFieldNames,
  type OrderNormalizeResult,
  type RawOrder,
} from './order-normalizer.ts';

/** The columns of an orders csv, by the field of RawOrder each fills. */
const ORDER_CSV_COLUMNS: { readonly [field in keyof RawOrder]: string } = {
  orderId: 'order_id',
  amount: 'amount',
  currency: 'currency',
  status: 'status',
  refunded: 'refunded_amount',
  paymentMethod: 'payment_method',
  createdAt: 'created_at',
};

const OPTIONAL_FIELDS: ReadonlySet<keyof RawOrder> = new Set(['refunded']);
const MAX_SHOWN_HEADER = 120;

/** Where each field sits in an orders csv's records (-1: an optional column the file does not have). */
export interface OrderCsvPlan {
  readonly width: number;
  readonly positions: { readonly [field in keyof RawOrder]: number };
  /** Each field's column as the header writes it, for reasons. */
  readonly names: OrderFieldNames;
}

/**
 * Reads an orders csv's header: names match case-insensitively, ignoring surrounding spaces and a byte order mark;
 * columns come in any order; other columns are ignored (a shop's export carries many recon has no use for).
 * A header that cannot be read safely fails the file (ReconError CSV_HEADER naming `label`): a required column
 * missing, or one of recon's columns twice (which value would count?).
 */
export function planOrderHeader(header: string[], label: string): OrderCsvPlan {
  const cleaned = header.map(cleanHeaderName);
  const lower = cleaned.map((name) => name.toLowerCase());
  const fields = Object.keys(ORDER_CSV_COLUMNS) as (keyof RawOrder)[];
  const positions = {} as Record<keyof RawOrder, number>;
  const names = {} as Record<keyof RawOrder, string>;
  const missing: string[] = [];
  for (const field of fields) {
    const column = ORDER_CSV_COLUMNS[field];
    const position = lower.indexOf(column);
    const again = position === -1 ? -1 : lower.indexOf(column, position + 1);
    if (again !== -1) {
      throw new ReconError(
        'CSV_HEADER',
        `${label}: column ${JSON.stringify(column)} appears twice in the header (columns ${position + 1} and ${again + 1})`,
      );
    }
    if (position === -1 && !OPTIONAL_FIELDS.has(field)) missing.push(column);
    positions[field] = position;
    names[field] = position === -1 ? column : cleaned[position]!;
  }
  if (missing.length > 0) {
    const found = cleaned.join(', ');
    const shown = found.length > MAX_SHOWN_HEADER ? `${found.slice(0, MAX_SHOWN_HEADER)}...` : found;
    const what = missing.length === 1 ? `column ${missing[0]}` : `columns ${missing.join(', ')}`;
    throw new ReconError('CSV_HEADER', `${label}: the header has no ${what} (found: ${JSON.stringify(shown)})`);
  }
  return { width: header.length, positions, names };
}

/**
 * The normalizer of one orders csv's records: a record with another number of values than the header is
 * rejected as a whole (its values cannot be told apart), the others go through the order rules.
 */
export function createCsvOrderNormalizer(plan: OrderCsvPlan): (values: readonly string[]) => OrderNormalizeResult {
  const normalize = createOrderNormalizer(plan.names, 'major');
  const { width, positions } = plan;
  const at = (values: readonly string[], position: number): string | null => (position < 0 ? null : values[position]!);
  return (values) => {
    if (values.length !== width) return { ok: false, reason: `expected ${width} columns, found ${values.length}` };
    return normalize({
      orderId: at(values, positions.orderId),
      amount: at(values, positions.amount),
      currency: at(values, positions.currency),
      status: at(values, positions.status),
      refunded: at(values, positions.refunded),
      paymentMethod: at(values, positions.paymentMethod),
      createdAt: at(values, positions.createdAt),
    });
  };
}
