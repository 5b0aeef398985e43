import { z } from 'zod';
import { FIELD_DICTIONARY } from './field-dictionary.ts';
import type { FieldName, OperationType } from './field-dictionary.ts';
import { formatSchema } from './field-schema.ts';
import type { PaymentMethod } from './operation-fields.ts';
import { invalidParameter } from './protocol-error.ts';

/** The notification kinds of the spec's Events table, and exactly the fields each carries. */
export const NOTIFICATION_KINDS = [
  'instalment-authorization',
  'instalment-capture',
  'instalment-refund',
  'wallet-payment',
  'wallet-capture',
  'wallet-refund',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const COMMON_NOTIFICATION_FIELDS = [
  'IDENTIFIER',
  'OPERATIONTYPE',
  'TRANSACTIONID',
  'CLIENTIDENT',
  'CLIENTEMAIL',
  'ORDERID',
  'AMOUNT',
  'VERSION',
  'LANGUAGE',
  'CURRENCY',
  'EXECCODE',
  'MESSAGE',
  'DESCRIPTOR',
  'HASH',
] as const satisfies readonly FieldName[];

export const WALLET_NOTIFICATION_FIELDS = [
  'PP_ADDRESS_STATUS',
  'PP_PAYER_ID',
  'PP_PAYER_STATUS',
  'PP_PROTECTION_ELIGIBILITY',
  'PP_PROTECTION_ELIGIBILITY_TYPE',
  'PP_SHIP_TO_CITY',
  'PP_SHIP_TO_COUNTRYCODE',
  'PP_SHIP_TO_NAME',
  'PP_SHIP_TO_STREET',
  'PP_SHIP_TO_ZIP',
  'PP_TRANSACTION_ID',
] as const satisfies readonly FieldName[];

interface NotificationShape {
  readonly operationTypes: readonly OperationType[];
  readonly fields: readonly FieldName[];
}

/**
 * The wallet capture carries "the same parameters as for the hosted-form integration of this method",
 * which the spec does not list: read as the wallet payment's PP_* fields.
 */
export const NOTIFICATION_SHAPES: Readonly<Record<NotificationKind, NotificationShape>> = {
  'instalment-authorization': {
    operationTypes: ['authorization'],
    fields: [...COMMON_NOTIFICATION_FIELDS, 'EXTRADATA'],
  },
  'instalment-capture': { operationTypes: ['capture'], fields: [...COMMON_NOTIFICATION_FIELDS, 'EXTRADATA'] },
  'instalment-refund': {
    operationTypes: ['refund'],
    fields: [...COMMON_NOTIFICATION_FIELDS, 'EXTERNALENTITYID', 'EXTERNALREFERENCE', 'EXTRADATA'],
  },
  'wallet-payment': {
    operationTypes: ['payment', 'authorization'],
    fields: [...COMMON_NOTIFICATION_FIELDS, ...WALLET_NOTIFICATION_FIELDS],
  },
  'wallet-capture': {
    operationTypes: ['capture'],
    fields: [...COMMON_NOTIFICATION_FIELDS, ...WALLET_NOTIFICATION_FIELDS],
  },
  'wallet-refund': { operationTypes: ['refund'], fields: COMMON_NOTIFICATION_FIELDS },
};

/** Fields a notification always fills; the others are copied from the request or the buyer and may be empty. */
const NEVER_EMPTY: ReadonlySet<string> = new Set([
  'IDENTIFIER',
  'OPERATIONTYPE',
  'TRANSACTIONID',
  'ORDERID',
  'AMOUNT',
  'VERSION',
  'CURRENCY',
  'EXECCODE',
  'HASH',
  'EXTERNALENTITYID',
  'EXTERNALREFERENCE',
]);

function notificationSchema(kind: NotificationKind): z.ZodType<Record<string, string>> {
  const { operationTypes, fields } = NOTIFICATION_SHAPES[kind];
  const shape: Record<string, z.ZodType<string>> = {};
  for (const name of fields) {
    const schema = formatSchema(FIELD_DICTIONARY[name]);
    shape[name] = NEVER_EMPTY.has(name) ? schema : z.union([z.literal(''), schema]);
  }
  shape['OPERATIONTYPE'] = z.enum(operationTypes);
  return z.strictObject(shape);
}

export const notificationSchemas: Readonly<Record<NotificationKind, z.ZodType<Record<string, string>>>> =
  Object.fromEntries(NOTIFICATION_KINDS.map((kind) => [kind, notificationSchema(kind)])) as Record<
    NotificationKind,
    z.ZodType<Record<string, string>>
  >;

export function notificationKind(method: PaymentMethod, operationType: OperationType): NotificationKind {
  if (method === 'wallet') {
    if (operationType === 'capture') return 'wallet-capture';
    return operationType === 'refund' ? 'wallet-refund' : 'wallet-payment';
  }
  if (operationType === 'capture') return 'instalment-capture';
  return operationType === 'refund' ? 'instalment-refund' : 'instalment-authorization';
}

export interface ParsedNotification {
  readonly kind: NotificationKind;
  readonly fields: Readonly<Record<string, string>>;
}

/**
 * Tells the kind from the field set (each kind's set with its OPERATIONTYPE is unique) and validates it.
 * The HASH is not checked here: see verifyHash. Throws ProtocolError 1002 naming the first bad field.
 */
export function parseNotification(fields: Readonly<Record<string, string>>): ParsedNotification {
  const names = new Set(Object.keys(fields));
  const kind = NOTIFICATION_KINDS.find((candidate) => {
    const shape = NOTIFICATION_SHAPES[candidate];
    return (
      shape.fields.length === names.size &&
      shape.fields.every((name) => names.has(name)) &&
      shape.operationTypes.includes(fields['OPERATIONTYPE'] as OperationType)
    );
  });
  if (kind === undefined) {
    throw invalidParameter('OPERATIONTYPE', `no notification kind has the fields ${[...names].sort().join(', ')}`);
  }
  const parsed = notificationSchemas[kind].safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalidParameter(String(issue.path[0]), issue.message);
  }
  return { kind, fields: parsed.data };
}
