import { z } from 'zod';
import { CART_FIELDS, FIELD_DICTIONARY, isCartFieldName, isFieldName } from './field-dictionary.ts';
import type { FieldFormat } from './field-dictionary.ts';
import { describeFormat, matchesFormat } from './field-format.ts';
import { splitIds } from './form-encoding.ts';

export function formatSchema(format: FieldFormat): z.ZodType<string> {
  const expected = `expected ${describeFormat(format)}`;
  return z.string({ error: expected }).refine((value) => matchesFormat(format, value), { error: expected });
}

/** The schema of one dictionary field; throws for a name outside the dictionary (a programming error). */
export function fieldSchema(name: string): z.ZodType<string> {
  if (!isFieldName(name)) throw new TypeError(`${name} is not in the field dictionary`);
  return formatSchema(FIELD_DICTIONARY[name]);
}

export function cartFieldSchema(name: string): z.ZodType<string> {
  if (!isCartFieldName(name)) throw new TypeError(`${name} is not in the cart table`);
  return formatSchema(CART_FIELDS[name]);
}

/** getTransactions selects several orders or transactions with one `;`-joined value; each id keeps its format. */
export function idListSchema(name: 'ORDERID' | 'TRANSACTIONID'): z.ZodType<string> {
  const format = FIELD_DICTIONARY[name];
  const expected = `expected ids of ${describeFormat(format)} separated by ;`;
  return z
    .string({ error: expected })
    .refine((value) => splitIds(value).every((id) => matchesFormat(format, id)), { error: expected });
}

/** Every cart field is optional; a field outside the cart table is refused. */
export const cartItemSchema = z.strictObject(
  Object.fromEntries(Object.keys(CART_FIELDS).map((name) => [name, cartFieldSchema(name).optional()])),
);
