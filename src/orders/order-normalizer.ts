import { normalizeAmount } from '../normalize/amount.ts';
import { normalizeCurrency } from '../normalize/currency.ts';
import { isBlank } from '../normalize/empty-value.ts';
import { normalizeIsoInstant } from '../normalize/iso-instant.ts';
import { normalizeMinorUnits } from '../normalize/minor-units.ts';
import { quoteValue, RuleViolation } from '../normalize/rule-violation.ts';
import { ORDER_STATUSES, PAYMENT_METHODS, type OrderRow } from './order-row.ts';

/**
 * One order as its source wrote it: text, or null where the source has no value (an SQL NULL, an absent
 * optional column). Both sources of orders (csv files and the merchant's database) come through here.
 */
export interface RawOrder {
  readonly orderId: string | null;
  readonly amount: string | null;
  readonly currency: string | null;
  readonly status: string | null;
  readonly refunded: string | null;
  readonly paymentMethod: string | null;
  readonly createdAt: string | null;
}

/** How a reason names each field: the csv header as written, or the query's column name. */
export type OrderFieldNames = { readonly [field in keyof RawOrder]: string };

/**
 * `major`: decimals in major units with a dot, read with the currency's ISO 4217 minor unit (csv files).
 * `minor`: whole numbers of minor units (the merchant's database).
 */
export type AmountUnit = 'major' | 'minor';

export type OrderNormalizeResult = { ok: true; row: OrderRow } | { ok: false; reason: string };

/** ORDERID's limit in the service's field dictionary, and recon.orders' CHECK. */
const MAX_ORDER_ID_CHARACTERS = 40;

/**
 * The order rules, one reason per rejected order naming the field (the first that fails):
 * - order_id is required and kept as written (it must equal the service's ORDERID), 1 to 40 characters.
 * - currency: an ISO 4217 code (normalizeCurrency); the amounts are read with its minor unit.
 * - amount and refunded: exact minor units (bigint, never a float), 0 or more; refunded empty or absent is 0 and
 *   may not exceed amount (more refunded than paid is a bad row, not an order).
 * - status and payment_method: one of recon's values, case-insensitive, surrounding spaces ignored.
 * - created_at: ISO 8601 with an offset (normalizeIsoInstant).
 */
export function createOrderNormalizer(
  names: OrderFieldNames,
  unit: AmountUnit,
): (raw: RawOrder) => OrderNormalizeResult {
  const readAmount = (text: string, currency: string) =>
    unit === 'major' ? normalizeAmount(text, currency) : normalizeMinorUnits(text);

  return function normalizeOrder(raw: RawOrder): OrderNormalizeResult {
    const orderId = raw.orderId;
    if (orderId === null || isBlank(orderId)) return missing(names.orderId);
    if (orderId.length > MAX_ORDER_ID_CHARACTERS && [...orderId].length > MAX_ORDER_ID_CHARACTERS) {
      return reject(names.orderId, `${quoteValue(orderId)} is longer than ${MAX_ORDER_ID_CHARACTERS} characters`);
    }

    if (raw.currency === null || isBlank(raw.currency)) return missing(names.currency);
    const currency = normalizeCurrency(raw.currency);
    if (currency instanceof RuleViolation) return violated(names.currency, currency);

    if (raw.amount === null || isBlank(raw.amount)) return missing(names.amount);
    const amount = readAmount(raw.amount, currency);
    if (amount instanceof RuleViolation) return violated(names.amount, amount);
    if (amount < 0n) return reject(names.amount, `${quoteValue(raw.amount)} is negative`);

    let refunded = 0n;
    if (raw.refunded !== null && !isBlank(raw.refunded)) {
      const result = readAmount(raw.refunded, currency);
      if (result instanceof RuleViolation) return violated(names.refunded, result);
      if (result < 0n) return reject(names.refunded, `${quoteValue(raw.refunded)} is negative`);
      if (result > amount) {
        return reject(
          names.refunded,
          `${quoteValue(raw.refunded)} is more than the ${names.amount} ${quoteValue(raw.amount)}`,
        );
      }
      refunded = result;
    }

    const status = oneOf(raw.status, ORDER_STATUSES);
    if (status instanceof RuleViolation) return violated(names.status, status);
    const paymentMethod = oneOf(raw.paymentMethod, PAYMENT_METHODS);
    if (paymentMethod instanceof RuleViolation) return violated(names.paymentMethod, paymentMethod);

    if (raw.createdAt === null || isBlank(raw.createdAt)) return missing(names.createdAt);
    const createdAt = normalizeIsoInstant(raw.createdAt);
    if (createdAt instanceof RuleViolation) return violated(names.createdAt, createdAt);

    return {
      ok: true,
      row: {
        order_id: orderId,
        amount_minor: amount,
        currency,
        status,
        refunded_minor: refunded,
        payment_method: paymentMethod,
        created_at: createdAt,
      },
    };
  };
}

function oneOf<T extends string>(raw: string | null, allowed: readonly T[]): T | RuleViolation {
  const value = (raw ?? '').trim().toLowerCase();
  if ((allowed as readonly string[]).includes(value)) return value as T;
  if (value === '') return new RuleViolation(`empty, but every order needs one of ${allowed.join(', ')}`);
  return new RuleViolation(`${quoteValue(raw!)} is not one of ${allowed.join(', ')}`);
}

function missing(field: string): OrderNormalizeResult {
  return reject(field, 'empty, but every order needs one');
}

function reject(field: string, reason: string): OrderNormalizeResult {
  return { ok: false, reason: `${field}: ${reason}` };
}

function violated(field: string, violation: RuleViolation): OrderNormalizeResult {
  return reject(field, violation.reason);
}
