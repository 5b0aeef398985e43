/**
 * The ONE table of the protocol's fields (payment-api-3.0.md: field dictionary, cart table, export
 * parameters, wallet notification fields). Every schema, validator and notification parser derives from it.
 * Values are always strings on the wire; a format says which strings are valid.
 */
export type FieldFormat =
  /** Free text; `max` undefined means no limit. `bytes` counts UTF-8 bytes instead of characters. */
  | { readonly kind: 'text'; readonly min: number; readonly max?: number; readonly bytes?: boolean }
  /** One of `values`; `anyCase`: in any letter case too (canonicalValue gives the value as listed). */
  | { readonly kind: 'enum'; readonly values: readonly string[]; readonly anyCase?: boolean }
  /** Non-negative integer written in digits, no sign, no leading zeros. */
  | { readonly kind: 'integer'; readonly min?: number; readonly max?: number }
  /** Exactly `length` digits (EXTERNALREFERENCE: left padded with 0), or 1..`length` digits when `upTo`. */
  | { readonly kind: 'digits'; readonly length: number; readonly upTo?: boolean }
  /** Non-negative decimal number with a dot separator (cart DISCOUNT and TAX, in percent). */
  | { readonly kind: 'decimal' }
  | { readonly kind: 'email'; readonly min: number; readonly max: number }
  | { readonly kind: 'ipv4' }
  /** A calendar date written YYYY-MM-DD. */
  | { readonly kind: 'date' }
  | { readonly kind: 'country' }
  | { readonly kind: 'currency' }
  | { readonly kind: 'hex'; readonly length: number }
  | { readonly kind: 'base64' }
  /** An http(s) URL of `min`-`max` characters. */
  | { readonly kind: 'url'; readonly min: number; readonly max: number }
  /** IANA time zone name (or UTC). */
  | { readonly kind: 'timezone'; readonly max: number }
  /** `;`-separated export column names, none empty; a name the service does not know is answered empty. */
  | { readonly kind: 'columns' };

const text = (min: number, max?: number): FieldFormat => ({ kind: 'text', min, ...(max === undefined ? {} : { max }) });
const fixed = (length: number): FieldFormat => text(length, length);
export type EnumFormat = Extract<FieldFormat, { kind: 'enum' }>;

const oneOf = (...values: string[]): EnumFormat => ({ kind: 'enum', values });
const oneOfAnyCase = (...values: string[]): EnumFormat => ({ kind: 'enum', values, anyCase: true });
const TITLES = oneOf('mr', 'miss', 'mrs');

export const OPERATION_TYPES = ['authorization', 'payment', 'capture', 'refund', 'getTransactions'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];

export const PAYMENT_OPTIONS = [
  'instalpay-3x',
  'instalpay-3xsansfrais',
  'instalpay-4x',
  'instalpay-4xsansfrais',
] as const;
export type PaymentOption = (typeof PAYMENT_OPTIONS)[number];

export const PROTOCOL_VERSION = '3.0';
export const COMPRESSIONS = ['zip', 'gzip', 'bzip'] as const;
export type Compression = (typeof COMPRESSIONS)[number];

/** The field dictionary, the getTransactions parameters and the fields that only notifications carry. */
export const FIELD_DICTIONARY = {
  IDENTIFIER: text(1, 32),
  OPERATIONTYPE: oneOf(...OPERATION_TYPES),
  ORDERID: text(1, 40),
  TRANSACTIONID: text(1, 32),
  AMOUNT: { kind: 'integer', min: 1 },
  DESCRIPTION: text(1, 510),
  CLIENTUSERAGENT: text(1, 255),
  CLIENTIP: { kind: 'ipv4' },
  CLIENTIDENT: text(1, 255),
  CLIENTEMAIL: { kind: 'email', min: 5, max: 255 },
  CLIENTREFERRER: text(1, 255),
  CLIENTADDRESS: text(1, 510),
  CLIENTDOB: { kind: 'date' },
  CARDFULLNAME: text(1, 255),
  BILLINGTITLE: TITLES,
  BILLINGFIRSTNAME: text(1, 15),
  BILLINGLASTNAME: text(1, 15),
  BILLINGADDRESS: text(1, 50),
  BILLINGPOSTALCODE: text(1, 9),
  BILLINGCITY: text(1, 255),
  BILLINGCOUNTRY: { kind: 'country' },
  BILLINGPHONE: text(1, 32),
  BILLINGMOBILEPHONE: text(1, 32),
  SHIPTOCOMPANYNAME: text(1, 50),
  SHIPTOTITLE: TITLES,
  SHIPTOFIRSTNAME: text(1, 15),
  SHIPTOLASTNAME: text(1, 30),
  SHIPTOADDRESS: text(1, 50),
  SHIPTOPOSTALCODE: text(1, 9),
  SHIPTOCITY: text(1, 255),
  SHIPTOCOUNTRY: { kind: 'country' },
  SHIPTOPHONE: text(1, 32),
  SHIPTOMOBILEPHONE: text(1, 32),
  PAYMENTOPTION: oneOf(...PAYMENT_OPTIONS),
  HASH: { kind: 'hex', length: 64 },
  VERSION: oneOf(PROTOCOL_VERSION),
  APIKEYID: fixed(36),
  EXTRADATA: text(1, 255),
  METADATA: text(1, 255),
  LANGUAGE: oneOf('fr', 'en', 'de', 'es', 'it', 'nl', 'zh', 'ru', 'pt', 'cs'),
  CURRENCY: { kind: 'currency' },
  EXECCODE: { kind: 'digits', length: 4 },
  MESSAGE: text(0),
  DESCRIPTOR: text(0),
  REDIRECTHTML: { kind: 'base64' },
  // "int(1-10)": read as an integer of 1 to 10 digits.
  EXTERNALENTITYID: { kind: 'digits', length: 10, upTo: true },
  EXTERNALREFERENCE: { kind: 'digits', length: 9 },
  // getTransactions (E1). Its options are taken in any letter case (merchants send COMPRESSION=GZIP); the
  // column names of COLUMNS too (field-format.ts). OPERATIONTYPE stays exact: it must equal the envelope's `method`,
  // which routes the request on both endpoints.
  COLUMNS: { kind: 'columns' },
  SCOPE: oneOfAnyCase('CLIENTSGROUP', 'CLIENT'),
  TIMEZONE: { kind: 'timezone', max: 128 },
  MAILTO: { kind: 'email', min: 5, max: 255 },
  // string(1-32): a longer callback address cannot be sent at all.
  CALLBACKURL: { kind: 'url', min: 1, max: 32 },
  COMPRESSION: oneOfAnyCase(...COMPRESSIONS),
  // wallet notifications
  PP_ADDRESS_STATUS: oneOf('none', 'confirmed', 'unconfirmed'),
  PP_PAYER_ID: fixed(13),
  PP_PAYER_STATUS: oneOf(
    'none',
    'canceled-reversal',
    'completed',
    'denied',
    'expired',
    'failed',
    'in-progress',
    'partially-refunded',
    'pending',
    'refunded',
    'reversed',
    'processed',
    'voided',
    'completed-funds-held',
  ),
  PP_PROTECTION_ELIGIBILITY: oneOf('eligible', 'partiallyeligible', 'ineligible'),
  PP_PROTECTION_ELIGIBILITY_TYPE: oneOf('itemnotreceivedeligible', 'unauthorizedpaymenteligible', 'ineligible'),
  PP_SHIP_TO_CITY: { kind: 'text', min: 1, max: 40, bytes: true },
  PP_SHIP_TO_COUNTRYCODE: fixed(2),
  PP_SHIP_TO_NAME: text(1, 32),
  PP_SHIP_TO_STREET: text(1, 100),
  PP_SHIP_TO_ZIP: text(1, 20),
  PP_TRANSACTION_ID: text(1, 20),
} as const satisfies Record<string, FieldFormat>;

export type FieldName = keyof typeof FIELD_DICTIONARY;

export const CART_CATEGORIES = [
  'computersandsoftware',
  'electronics',
  'appliances',
  'homeandgarden',
  'fashion',
  'healthandbeauty',
  'jewellery',
  'sport',
  'leisureandhobbies',
  'carsandmotorbikes',
  'furniture',
  'kidsandbaby',
  'videogamesandconsoles',
  'toysandgames',
  'pets',
  'foodanddrink',
  'giftandflowers',
  'entertainment',
  'travel',
  'auctionsandgroupbuying',
  'servicesforindividuals',
  'servicesforprofessionals',
] as const;

/** The cart item table (`CART[X][FIELD]`). */
export const CART_FIELDS = {
  MERCHANTITEMID: text(1),
  NAME: text(1),
  PRICE: { kind: 'integer' },
  QUANTITY: { kind: 'integer', min: 1 },
  TOTALAMOUNT: { kind: 'integer' },
  DISCOUNT: { kind: 'decimal' },
  TAX: { kind: 'decimal' },
  CATEGORY: oneOf(...CART_CATEGORIES),
  BRAND: text(1, 100),
  DELIVERYLABEL: text(1, 100),
  DELIVERYSPEED: oneOf('standard', 'express'),
  DELIVERYTYPE: oneOf('storepickup', 'networkpickup', 'travelpickup', 'carrier', 'edelivery', 'other'),
  DELIVERYEXPECTEDDATE: { kind: 'date' },
  DELIVERYEXPECTEDDELAY: { kind: 'integer', min: 1, max: 3 },
  // Any merchant id, or the special value OPERATOR when the marketplace itself sells the item.
  SUBMERCHANTEXTERNALID: text(1),
} as const satisfies Record<string, FieldFormat>;

export type CartFieldName = keyof typeof CART_FIELDS;

export function isFieldName(name: string): name is FieldName {
  return Object.hasOwn(FIELD_DICTIONARY, name);
}

export function isCartFieldName(name: string): name is CartFieldName {
  return Object.hasOwn(CART_FIELDS, name);
}
