import type { OperationType } from './field-dictionary.ts';
import type { Params } from './form-encoding.ts';

export type PaymentMethod = 'instalment' | 'wallet';

/**
 * Which parameters each operation accepts (payment-api-3.0.md E1-E5) and which it requires. The spec marks
 * required fields only for capture and refund (AMOUNT and EXTRADATA optional); for payment and
 * authorization the fields of the wallet's reference request are required, plus PAYMENTOPTION for the
 * instalment method. getTransactions needs ORDERID or TRANSACTIONID, checked apart.
 */
export interface OperationFields {
  readonly accepted: readonly string[];
  readonly required: readonly string[];
}

const SIGNED = ['IDENTIFIER', 'OPERATIONTYPE', 'VERSION', 'HASH'];
const PAYMENT_REQUIRED = [
  ...SIGNED,
  'ORDERID',
  'AMOUNT',
  'CLIENTIDENT',
  'CLIENTEMAIL',
  'CLIENTUSERAGENT',
  'CLIENTIP',
  'DESCRIPTION',
];
/**
 * Not in E2/E3's lists, but dictionary fields every notification of these operations echoes: merchants send
 * them, and refusing a harmless CURRENCY=EUR would fail integrations the service itself is not known to fail.
 * Their values are still checked (ISO 4217, the LANGUAGE enum), and the instalment method takes EUR only.
 */
const ECHOED_IN_NOTIFICATIONS = ['CURRENCY', 'LANGUAGE'];
const BILLING = [
  'BILLINGTITLE',
  'BILLINGFIRSTNAME',
  'BILLINGLASTNAME',
  'BILLINGADDRESS',
  'BILLINGPOSTALCODE',
  'BILLINGCITY',
  'BILLINGCOUNTRY',
  'BILLINGPHONE',
  'BILLINGMOBILEPHONE',
];
const SHIPTO = [
  'SHIPTOCOMPANYNAME',
  'SHIPTOTITLE',
  'SHIPTOFIRSTNAME',
  'SHIPTOLASTNAME',
  'SHIPTOADDRESS',
  'SHIPTOPOSTALCODE',
  'SHIPTOCITY',
  'SHIPTOCOUNTRY',
  'SHIPTOPHONE',
  'SHIPTOMOBILEPHONE',
];

const INSTALMENT: OperationFields = {
  accepted: [
    ...PAYMENT_REQUIRED,
    'PAYMENTOPTION',
    ...BILLING,
    ...SHIPTO,
    'CART',
    'APIKEYID',
    'EXTRADATA',
    'METADATA',
    ...ECHOED_IN_NOTIFICATIONS,
  ],
  required: [...PAYMENT_REQUIRED, 'PAYMENTOPTION'],
};

const WALLET: OperationFields = {
  accepted: [
    ...PAYMENT_REQUIRED,
    'APIKEYID',
    'BILLINGADDRESS',
    'BILLINGCOUNTRY',
    'BILLINGFIRSTNAME',
    'BILLINGLASTNAME',
    'BILLINGPHONE',
    'BILLINGPOSTALCODE',
    'CART',
    'CLIENTREFERRER',
    'EXTRADATA',
    'SHIPTOADDRESS',
    'SHIPTOCOUNTRY',
    'SHIPTOFIRSTNAME',
    'SHIPTOLASTNAME',
    'SHIPTOPHONE',
    'SHIPTOPOSTALCODE',
    'CARDFULLNAME',
    'CLIENTADDRESS',
    'CLIENTDOB',
    'METADATA',
    ...ECHOED_IN_NOTIFICATIONS,
  ],
  required: PAYMENT_REQUIRED,
};

const CAPTURE_OR_REFUND: OperationFields = {
  accepted: [...SIGNED, 'TRANSACTIONID', 'ORDERID', 'DESCRIPTION', 'AMOUNT', 'EXTRADATA'],
  required: [...SIGNED, 'TRANSACTIONID', 'ORDERID', 'DESCRIPTION'],
};

const GET_TRANSACTIONS: OperationFields = {
  accepted: [
    ...SIGNED,
    'ORDERID',
    'TRANSACTIONID',
    'COLUMNS',
    'SCOPE',
    'TIMEZONE',
    'MAILTO',
    'CALLBACKURL',
    'COMPRESSION',
  ],
  required: SIGNED,
};

export function operationFields(operation: OperationType, method: PaymentMethod): OperationFields {
  switch (operation) {
    case 'payment':
    case 'authorization':
      return method === 'instalment' ? INSTALMENT : WALLET;
    case 'capture':
    case 'refund':
      return CAPTURE_OR_REFUND;
    case 'getTransactions':
      return GET_TRANSACTIONS;
  }
}

/** A payment or authorization request names its method only through PAYMENTOPTION, which only the instalment method takes. */
export function inferPaymentMethod(params: Params): PaymentMethod {
  return params['PAYMENTOPTION'] === undefined ? 'wallet' : 'instalment';
}
