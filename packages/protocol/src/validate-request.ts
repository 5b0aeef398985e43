import type { z } from 'zod';
import { PROTOCOL_VERSION } from './field-dictionary.ts';
import type { OperationType } from './field-dictionary.ts';
import type { Params } from './form-encoding.ts';
import { inferPaymentMethod } from './operation-fields.ts';
import type { PaymentMethod } from './operation-fields.ts';
import { ProtocolError, invalidParameter, missingParameter } from './protocol-error.ts';
import { requestSchema } from './request-schemas.ts';

/**
 * Checks a request's params against the dictionary, for the client before sending and for the sandbox on
 * receipt. Throws ProtocolError naming the field: 1001 missing, 1002 invalid, 1004 VERSION other than 3.0.
 * `method` is the payment method of a payment or authorization; undefined infers it from PAYMENTOPTION.
 */
export function validateRequest(operation: OperationType, method: PaymentMethod | undefined, params: Params): Params {
  const version = params['VERSION'];
  if (typeof version === 'string' && version !== PROTOCOL_VERSION) {
    throw new ProtocolError(
      '1004',
      `unsupported protocol version ${JSON.stringify(version)}: only ${PROTOCOL_VERSION}`,
      {
        field: 'VERSION',
      },
    );
  }
  const paymentMethod = method ?? inferPaymentMethod(params);
  const parsed = requestSchema(operation, paymentMethod).safeParse(params);
  if (!parsed.success) throw toProtocolError(operation, params, parsed.error.issues[0]!);
  const operationType = params['OPERATIONTYPE'];
  if (operationType !== operation) {
    throw invalidParameter('OPERATIONTYPE', `expected ${operation}, got ${JSON.stringify(operationType)}`);
  }
  if (paymentMethod === 'instalment' && operation === 'payment') {
    throw invalidParameter('OPERATIONTYPE', 'the instalment method takes authorization only');
  }
  if (operation === 'getTransactions') checkExportSelection(params);
  return params;
}

function checkExportSelection(params: Params): void {
  const hasOrder = params['ORDERID'] !== undefined;
  const hasTransaction = params['TRANSACTIONID'] !== undefined;
  if (!hasOrder && !hasTransaction) {
    throw new ProtocolError('1001', 'missing parameter ORDERID or TRANSACTIONID', { field: 'ORDERID' });
  }
  if (hasOrder && hasTransaction) throw invalidParameter('TRANSACTIONID', 'give ORDERID or TRANSACTIONID, not both');
  if (params['MAILTO'] !== undefined && params['CALLBACKURL'] !== undefined) {
    throw invalidParameter('CALLBACKURL', 'MAILTO and CALLBACKURL are mutually exclusive');
  }
}

function toProtocolError(operation: OperationType, params: Params, issue: z.core.$ZodIssue): ProtocolError {
  if (issue.code === 'unrecognized_keys') {
    return invalidParameter(fieldLabel([...issue.path, issue.keys[0]!]), `not accepted by ${operation}`);
  }
  const field = fieldLabel(issue.path);
  if (valueAt(params, issue.path) === undefined) return missingParameter(field);
  return invalidParameter(field, issue.message);
}

/** `['CART', 0, 'PRICE']` → `CART[0][PRICE]`, the name the field has on the wire. */
function fieldLabel(path: readonly PropertyKey[]): string {
  const [name, ...rest] = path.map(String);
  return `${name ?? ''}${rest.map((part) => `[${part}]`).join('')}`;
}

function valueAt(params: Params, path: readonly PropertyKey[]): unknown {
  let value: unknown = params;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
