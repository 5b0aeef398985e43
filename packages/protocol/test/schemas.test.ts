import { describe, expect, it } from 'vitest';
import {
  CART_FIELDS,
  cartFieldSchema,
  FIELD_DICTIONARY,
  fieldSchema,
  getTransactionsResponseSchema,
  processResponseSchema,
} from '@recon/protocol';

describe('fieldSchema', () => {
  it('exists for every dictionary and cart field', () => {
    for (const name of Object.keys(FIELD_DICTIONARY)) expect(fieldSchema(name)).toBeDefined();
    for (const name of Object.keys(CART_FIELDS)) expect(cartFieldSchema(name)).toBeDefined();
    expect(() => fieldSchema('NOPE')).toThrow(TypeError);
  });

  it.each([
    ['AMOUNT', '1', true],
    ['AMOUNT', '01', false],
    ['AMOUNT', '1e3', false],
    ['AMOUNT', '123456789012345678901', true],
    ['CURRENCY', 'EUR', true],
    ['CURRENCY', 'eur', false],
    ['CURRENCY', 'EURO', false],
    ['CLIENTDOB', '2000-02-29', true],
    ['CLIENTDOB', '1900-02-29', false],
    ['CLIENTDOB', '2000-2-1', false],
    ['EXTERNALENTITYID', '1234567890', true],
    ['EXTERNALENTITYID', '12345678901', false],
    ['PP_SHIP_TO_CITY', 'é'.repeat(20), true],
    ['PP_SHIP_TO_CITY', 'é'.repeat(21), false],
    ['REDIRECTHTML', Buffer.from('<form></form>').toString('base64'), true],
    ['REDIRECTHTML', '<form>', false],
    ['LANGUAGE', 'cs', true],
    ['LANGUAGE', 'pl', false],
    ['EXECCODE', '0000', true],
    ['EXECCODE', '0', false],
    ['IDENTIFIER', 'x'.repeat(32), true],
    ['IDENTIFIER', 'x'.repeat(33), false],
    ['IDENTIFIER', '', false],
  ])('%s %j valid: %s', (name, value, valid) => {
    expect(fieldSchema(name).safeParse(value).success).toBe(valid);
  });

  it.each([
    ['DELIVERYEXPECTEDDELAY', '1', true],
    ['DELIVERYEXPECTEDDELAY', '3', true],
    ['DELIVERYEXPECTEDDELAY', '0', false],
    ['DELIVERYEXPECTEDDELAY', '4', false],
    ['DISCOUNT', '12.5', true],
    ['DISCOUNT', '12,5', false],
    ['SUBMERCHANTEXTERNALID', 'OPERATOR', true],
    ['CATEGORY', 'pets', true],
    ['CATEGORY', 'Pets', false],
  ])('cart %s %j valid: %s', (name, value, valid) => {
    expect(cartFieldSchema(name).safeParse(value).success).toBe(valid);
  });
});

describe('response schemas', () => {
  it('needs TRANSACTIONID and REDIRECTHTML with 0002, neither with an error code', () => {
    const redirect = { OPERATIONTYPE: 'payment', EXECCODE: '0002', MESSAGE: 'redirect', TRANSACTIONID: 'A1' };
    expect(processResponseSchema.safeParse(redirect).success).toBe(false);
    expect(processResponseSchema.safeParse({ ...redirect, REDIRECTHTML: 'PGZvcm0+' }).success).toBe(true);
    const error = { OPERATIONTYPE: 'capture', EXECCODE: '2005', MESSAGE: 'not capturable' };
    expect(processResponseSchema.safeParse(error).success).toBe(true);
  });

  it('accepts DATA rows of strings only', () => {
    const ok = { OPERATIONTYPE: 'getTransactions', EXECCODE: '0000', MESSAGE: '', DATA: [{ AMOUNT: '1.00' }] };
    expect(getTransactionsResponseSchema.safeParse(ok).success).toBe(true);
    expect(getTransactionsResponseSchema.safeParse({ ...ok, DATA: [{ AMOUNT: 1 }] }).success).toBe(false);
  });
});
