import { isMinorUnits, minorToDecimal } from './money-format.ts';
import { humanTimestampText } from './report-time.ts';

/**
 * A verdict's explanation as reconcile stores it (jsonb): the rule that decided, one sentence of reason, the
 * transactions considered, warnings that did not change the status, named figures, and for a
 * notification_conflict the export rows and notifications that disagree. Amounts are strings of
 * minor units. Decoding is lenient: a field of an unexpected type reads as absent, so that a report never fails
 * on one odd explanation; the json report passes the stored document through unchanged.
 */
export interface Explanation {
  readonly rule: string | null;
  readonly reason: string | null;
  readonly transactions: readonly ExplainedTransaction[];
  readonly warnings: readonly string[];
  /** Name -> minor units, in the verdict's currency. */
  readonly figures: readonly (readonly [string, string])[];
  readonly conflicts: readonly NotificationConflict[];
}

export interface NotificationConflict {
  readonly transactionId: string | null;
  readonly exportExecCode: string | null;
  readonly notifiedExecCode: string | null;
  readonly exportAmountMinor: string | null;
  readonly notifiedAmountMinor: string | null;
}

export interface ExplainedTransaction {
  readonly transactionId: string | null;
  readonly operationType: string | null;
  readonly execCode: string | null;
  readonly amountMinor: string | null;
  readonly currency: string | null;
  readonly occurredAt: string | null;
  readonly sourceFile: string | null;
  /** The zip entry the line is in, for a zip export. */
  readonly sourceEntry: string | null;
  readonly sourceLine: number | null;
}

export function decodeExplanation(value: unknown): Explanation {
  const object = asObject(value);
  return {
    rule: text(object.rule),
    reason: text(object.reason),
    transactions: Array.isArray(object.transactions) ? object.transactions.map(decodeTransaction) : [],
    warnings: Array.isArray(object.warnings) ? object.warnings.map(text).filter((warning) => warning !== null) : [],
    figures: Object.entries(asObject(object.figures)).flatMap(([name, amount]) => {
      const minor = minorUnits(amount);
      return minor === null ? [] : [[name, minor] as const];
    }),
    conflicts: Array.isArray(object.conflicts) ? object.conflicts.map(decodeConflict) : [],
  };
}

function decodeConflict(value: unknown): NotificationConflict {
  const object = asObject(value);
  return {
    transactionId: text(object.transaction_id),
    exportExecCode: text(object.export_exec_code),
    notifiedExecCode: text(object.notified_exec_code),
    exportAmountMinor: minorUnits(object.export_amount_minor),
    notifiedAmountMinor: minorUnits(object.notified_amount_minor),
  };
}

function decodeTransaction(value: unknown): ExplainedTransaction {
  const object = asObject(value);
  const line = object.source_line;
  return {
    transactionId: text(object.transaction_id),
    operationType: text(object.operation_type),
    execCode: text(object.exec_code),
    amountMinor: minorUnits(object.amount_minor),
    currency: text(object.currency),
    occurredAt: text(object.occurred_at),
    sourceFile: text(object.source_file),
    sourceEntry: text(object.source_entry),
    sourceLine:
      typeof line === 'number' && Number.isSafeInteger(line)
        ? line
        : typeof line === 'string' && /^\d+$/.test(line)
          ? Number(line)
          : null,
  };
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

/** A digit string, or a JSON integer small enough to be exact; anything else is not an amount. */
function minorUnits(value: unknown): string | null {
  if (typeof value === 'string') return isMinorUnits(value) ? value : null;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return null;
}

/** `T1 capture 0000 12.50 EUR 2026-11-01 10:00 UTC (export.csv:12)`: one line per transaction, for csv and terminals. */
export function describeTransaction(transaction: ExplainedTransaction): string {
  const amount =
    transaction.amountMinor === null
      ? null
      : `${minorToDecimal(transaction.amountMinor, transaction.currency)} ${transaction.currency ?? ''}`.trim();
  const source = transaction.sourceFile === null ? null : `(${describeSource(transaction)})`;
  return [
    transaction.transactionId ?? '?',
    transaction.operationType,
    transaction.execCode,
    amount,
    transaction.occurredAt === null ? null : humanTimestampText(transaction.occurredAt),
    source,
  ]
    .filter((part) => part !== null)
    .join(' ');
}

/** `export.zip!day.csv:12`: where the row was read, as an accountant would look it up. */
export function describeSource(transaction: ExplainedTransaction): string {
  const entry = transaction.sourceEntry === null ? '' : `!${transaction.sourceEntry}`;
  const line = transaction.sourceLine === null ? '' : `:${transaction.sourceLine}`;
  return `${transaction.sourceFile ?? '?'}${entry}${line}`;
}

/** `T1: export 0000 10.00, notification 0000 12.00`, in the verdict's currency. */
export function describeConflict(conflict: NotificationConflict, currency: string | null): string {
  const side = (execCode: string | null, minor: string | null) =>
    [execCode, minor === null ? null : minorToDecimal(minor, currency)].filter((part) => part !== null).join(' ');
  return (
    `${conflict.transactionId ?? '?'}: export ${side(conflict.exportExecCode, conflict.exportAmountMinor)}, ` +
    `notification ${side(conflict.notifiedExecCode, conflict.notifiedAmountMinor)}`
  );
}
