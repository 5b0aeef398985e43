import { z } from 'zod';
import type { OperationType } from './field-dictionary.ts';
import { cartItemSchema, fieldSchema, idListSchema } from './field-schema.ts';
import { operationFields } from './operation-fields.ts';
import type { PaymentMethod } from './operation-fields.ts';

/**
 * The zod schema of one request's params (after decodeRequest), derived from operationFields and the field
 * dictionary. Strict: a parameter the operation does not accept is refused. Cross-field rules (method vs
 * OPERATIONTYPE, ORDERID or TRANSACTIONID, MAILTO vs CALLBACKURL) live in validateRequest.
 */
export function requestSchema(operation: OperationType, method: PaymentMethod): z.ZodType<Record<string, unknown>> {
  const key = `${operation} ${method}`;
  let schema = schemas.get(key);
  if (schema === undefined) {
    schema = buildRequestSchema(operation, method);
    schemas.set(key, schema);
  }
  return schema;
}

/**
 * Built once per operation and method: building one took most of a millisecond, as long as using it, and every
 * request is checked (recon's client before it sends, the sandbox as it receives).
 */
const schemas = new Map<string, z.ZodType<Record<string, unknown>>>();

function buildRequestSchema(operation: OperationType, method: PaymentMethod): z.ZodType<Record<string, unknown>> {
  const { accepted, required } = operationFields(operation, method);
  const shape: Record<string, z.ZodType> = {};
  for (const name of accepted) {
    const schema = valueSchema(operation, name);
    shape[name] = required.includes(name) ? schema : schema.optional();
  }
  return z.strictObject(shape);
}

function valueSchema(operation: OperationType, name: string): z.ZodType {
  if (name === 'CART') return z.array(cartItemSchema, { error: 'expected a list of cart items' });
  if (operation === 'getTransactions' && (name === 'ORDERID' || name === 'TRANSACTIONID')) return idListSchema(name);
  return fieldSchema(name);
}
