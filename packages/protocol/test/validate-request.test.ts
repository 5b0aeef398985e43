import { describe, expect, it } from 'vitest';
import {
  ProtocolError,
  signParams,
  validateRequest,
  type OperationType,
  type Params,
  type PaymentMethod,
} from '@recon/protocol';

const signed = { IDENTIFIER: 'merchant', VERSION: '3.0' };
const wallet = signParams('k', {
  ...signed,
  OPERATIONTYPE: 'payment',
  ORDERID: 'order-1',
  AMOUNT: '1500',
  CLIENTIDENT: 'client-1',
  CLIENTEMAIL: 'jane@example.com',
  CLIENTUSERAGENT: 'Mozilla/5.0',
  CLIENTIP: '192.0.2.10',
  DESCRIPTION: 'books',
});
const instalment = { ...wallet, OPERATIONTYPE: 'authorization', PAYMENTOPTION: 'instalpay-3x' };
const capture = signParams('k', {
  ...signed,
  OPERATIONTYPE: 'capture',
  TRANSACTIONID: 'A1',
  ORDERID: 'order-1',
  DESCRIPTION: 'ship',
});
const exportByOrder = signParams('k', { ...signed, OPERATIONTYPE: 'getTransactions', ORDERID: 'o1;o2' });

function rejection(operation: OperationType, method: PaymentMethod | undefined, params: Params) {
  try {
    validateRequest(operation, method, params);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return { execCode: error.execCode, field: error.field, message: error.message };
  }
  throw new Error('accepted');
}

describe('validateRequest', () => {
  it('accepts complete requests of every operation', () => {
    expect(validateRequest('payment', 'wallet', wallet)).toBe(wallet);
    expect(validateRequest('authorization', 'instalment', instalment)).toBe(instalment);
    expect(validateRequest('capture', undefined, capture)).toBe(capture);
    expect(validateRequest('refund', undefined, { ...capture, OPERATIONTYPE: 'refund', AMOUNT: '10' })).toBeTruthy();
    expect(validateRequest('getTransactions', undefined, exportByOrder)).toBe(exportByOrder);
  });

  it('names a missing field with 1001', () => {
    expect(rejection('payment', 'wallet', { ...wallet, CLIENTIP: undefined })).toEqual({
      execCode: '1001',
      field: 'CLIENTIP',
      message: 'missing parameter CLIENTIP',
    });
    expect(rejection('authorization', 'instalment', { ...instalment, PAYMENTOPTION: undefined })).toMatchObject({
      execCode: '1001',
      field: 'PAYMENTOPTION',
    });
    expect(rejection('capture', undefined, { ...capture, HASH: undefined })).toMatchObject({ field: 'HASH' });
  });

  it.each([
    ['AMOUNT', '12.50', 'expected an integer'],
    ['AMOUNT', '0', 'expected an integer'],
    ['AMOUNT', '-5', 'expected an integer'],
    ['CLIENTEMAIL', 'not-an-email', 'e-mail'],
    ['CLIENTIP', '192.0.2', 'IPv4'],
    ['CLIENTDOB', '1990-02-30', 'YYYY-MM-DD'],
    ['BILLINGCOUNTRY', 'FRA', 'ISO 3166-1'],
    ['BILLINGCOUNTRY', 'UK', 'ISO 3166-1'],
    ['ORDERID', 'x'.repeat(41), '1-40 characters'],
    ['DESCRIPTION', '', '1-510 characters'],
    ['APIKEYID', 'short', 'exactly 36'],
    ['HASH', 'z'.repeat(64), 'hexadecimal'],
  ])('names an invalid %s (%j) with 1002 and says why', (field, value, why) => {
    const result = rejection('payment', 'wallet', { ...wallet, [field]: value });
    expect(result).toMatchObject({ execCode: '1002', field });
    expect(result.message).toContain(`invalid parameter ${field}: `);
    expect(result.message).toContain(why);
  });

  it('names the cart field with its index', () => {
    const cart = [
      { NAME: 'ok', DELIVERYEXPECTEDDELAY: '3' },
      { NAME: 'late', DELIVERYEXPECTEDDELAY: '4' },
    ];
    expect(rejection('payment', 'wallet', { ...wallet, CART: cart })).toMatchObject({
      execCode: '1002',
      field: 'CART[1][DELIVERYEXPECTEDDELAY]',
    });
    expect(rejection('payment', 'wallet', { ...wallet, CART: [{ CATEGORY: 'books' }] })).toMatchObject({
      field: 'CART[0][CATEGORY]',
    });
    expect(rejection('payment', 'wallet', { ...wallet, CART: [{ COLOUR: 'red' }] })).toMatchObject({
      field: 'CART[0][COLOUR]',
    });
  });

  it('refuses a parameter the operation does not accept', () => {
    expect(rejection('capture', undefined, { ...capture, CLIENTIP: '192.0.2.1' })).toMatchObject({
      execCode: '1002',
      field: 'CLIENTIP',
      message: 'invalid parameter CLIENTIP: not accepted by capture',
    });
    expect(rejection('payment', 'wallet', { ...wallet, PAYMENTOPTION: 'instalpay-3x' })).toMatchObject({
      field: 'PAYMENTOPTION',
    });
  });

  it('answers 1004 for a VERSION other than 3.0', () => {
    expect(rejection('capture', undefined, { ...capture, VERSION: '2.0' })).toMatchObject({
      execCode: '1004',
      field: 'VERSION',
    });
  });

  it('refuses an OPERATIONTYPE that is not the operation, and instalment payments', () => {
    expect(rejection('refund', undefined, capture)).toMatchObject({ execCode: '1002', field: 'OPERATIONTYPE' });
    expect(rejection('payment', 'instalment', { ...instalment, OPERATIONTYPE: 'payment' })).toMatchObject({
      execCode: '1002',
      field: 'OPERATIONTYPE',
    });
  });

  it('infers the instalment method from PAYMENTOPTION when no method is given', () => {
    expect(validateRequest('authorization', undefined, instalment)).toBe(instalment);
    expect(rejection('authorization', undefined, { ...instalment, PAYMENTOPTION: 'instalpay-5x' })).toMatchObject({
      field: 'PAYMENTOPTION',
    });
  });

  describe('getTransactions', () => {
    it('needs ORDERID or TRANSACTIONID, not both', () => {
      expect(rejection('getTransactions', undefined, { ...exportByOrder, ORDERID: undefined })).toMatchObject({
        execCode: '1001',
        field: 'ORDERID',
      });
      expect(rejection('getTransactions', undefined, { ...exportByOrder, TRANSACTIONID: 'T1' })).toMatchObject({
        execCode: '1002',
      });
    });

    it('checks each ;-joined id', () => {
      expect(
        rejection('getTransactions', undefined, { ...exportByOrder, ORDERID: `ok;${'x'.repeat(41)}` }),
      ).toMatchObject({ execCode: '1002', field: 'ORDERID' });
      expect(rejection('getTransactions', undefined, { ...exportByOrder, ORDERID: 'a;;b' })).toMatchObject({
        field: 'ORDERID',
      });
    });

    it('refuses an empty column name, a bad time zone, MAILTO with CALLBACKURL, a long CALLBACKURL', () => {
      const cases: [Params, string][] = [
        [{ COLUMNS: 'ORDERID;;AMOUNT' }, 'COLUMNS'],
        [{ COLUMNS: 'ORDERID;' }, 'COLUMNS'],
        [{ COLUMNS: '' }, 'COLUMNS'],
        [{ TIMEZONE: 'Mars/Olympus' }, 'TIMEZONE'],
        [{ MAILTO: 'a@example.com', CALLBACKURL: 'http://x.example/cb' }, 'CALLBACKURL'],
        [{ CALLBACKURL: 'http://127.0.0.1:65535/callback/xyz' }, 'CALLBACKURL'],
        [{ COMPRESSION: 'bzip2' }, 'COMPRESSION'],
        [{ SCOPE: 'ALL' }, 'SCOPE'],
      ];
      for (const [extra, field] of cases) {
        expect(rejection('getTransactions', undefined, { ...exportByOrder, ...extra })).toMatchObject({
          execCode: '1002',
          field,
        });
      }
    });

    it('accepts columns in any order, unknown ones too (answered empty), a time zone, an asynchronous delivery', () => {
      const request = {
        ...exportByOrder,
        COLUMNS: 'AMOUNT;ORDERID;BILLINGFEES INCL. VAT;NATURE;EXTRADATA;COLOUR',
        TIMEZONE: 'Europe/Paris',
        SCOPE: 'CLIENT',
        CALLBACKURL: 'http://127.0.0.1:8/cb',
        COMPRESSION: 'gzip',
      };
      expect(validateRequest('getTransactions', undefined, request)).toBe(request);
    });

    it('takes COMPRESSION, SCOPE, the column names and the time zone in any letter case, and OPERATIONTYPE only as is', () => {
      for (const extra of [
        { COMPRESSION: 'GZIP', SCOPE: 'client' },
        { COMPRESSION: 'Zip', SCOPE: 'ClientsGroup' },
        { COMPRESSION: 'bZiP', COLUMNS: 'amount;OrderId;billingfees incl. vat', TIMEZONE: 'europe/paris' },
      ]) {
        const request = { ...exportByOrder, ...extra };
        expect(validateRequest('getTransactions', undefined, request)).toBe(request);
      }
      expect(rejection('getTransactions', undefined, { ...exportByOrder, COMPRESSION: 'GZ' })).toEqual({
        execCode: '1002',
        field: 'COMPRESSION',
        message: 'invalid parameter COMPRESSION: expected one of zip, gzip, bzip (any letter case)',
      });
      expect(
        rejection('getTransactions', undefined, { ...exportByOrder, OPERATIONTYPE: 'GETTRANSACTIONS' }),
      ).toMatchObject({
        execCode: '1002',
        field: 'OPERATIONTYPE',
      });
    });
  });

  it("keeps the process endpoint's enumerated fields exact: a PAYMENTOPTION in capitals is refused", () => {
    expect(rejection('authorization', undefined, { ...instalment, PAYMENTOPTION: 'INSTALPAY-3X' })).toMatchObject({
      execCode: '1002',
      field: 'PAYMENTOPTION',
    });
  });
});
