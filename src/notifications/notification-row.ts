import { normalizeCurrency } from '../normalize/currency.ts';
import { normalizeExecCode } from '../normalize/exec-code.ts';
import { RuleViolation } from '../normalize/rule-violation.ts';

/**
 * The columns recon.notifications indexes out of a notification's fields. Pure: the raw fields are kept whole
 * beside these (params), so a value that does not read as its column expects becomes null here and loses nothing.
 */
export interface NotificationColumns {
  readonly transaction_id: string | null;
  readonly order_id: string | null;
  readonly operation_type: string | null;
  /** Four digits, like recon.transactions.exec_code, so the two compare as they are. */
  readonly exec_code: string | null;
  /** A notification's AMOUNT is an integer of minor units (the field dictionary), unlike an export's decimal. */
  readonly amount_minor: string | null;
  readonly currency: string | null;
}

const MINOR_UNITS = /^-?\d{1,18}$/;

export function notificationColumns(fields: Readonly<Record<string, string>>): NotificationColumns {
  const exec = fields['EXECCODE'] === undefined ? null : normalizeExecCode(fields['EXECCODE']);
  const currency = fields['CURRENCY'] ? normalizeCurrency(fields['CURRENCY']) : null;
  const amount = fields['AMOUNT']?.trim();
  return {
    transaction_id: nonEmpty(fields['TRANSACTIONID']),
    order_id: nonEmpty(fields['ORDERID']),
    operation_type: nonEmpty(fields['OPERATIONTYPE']),
    exec_code: exec instanceof RuleViolation ? null : exec,
    amount_minor: amount !== undefined && MINOR_UNITS.test(amount) ? BigInt(amount).toString() : null,
    currency: currency instanceof RuleViolation ? null : currency,
  };
}

/**
 * The fields as PostgreSQL text and jsonb can hold them: a NUL character, which neither accepts, becomes the six
 * characters `\u0000` (in names too). The notification's raw bytes are kept beside them, exactly as received.
 */
export function storableFields(fields: Readonly<Record<string, string>>): Record<string, string> {
  const storable: Record<string, string> = {};
  for (const [name, value] of Object.entries(fields)) storable[escapeNul(name)] = escapeNul(value);
  return storable;
}

function escapeNul(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\\u0000') : text;
}

function nonEmpty(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}
