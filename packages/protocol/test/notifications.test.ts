import { describe, expect, it } from 'vitest';
import {
  decodeNotification,
  encodeNotification,
  NOTIFICATION_KINDS,
  NOTIFICATION_SHAPES,
  notificationKind,
  parseNotification,
  ProtocolError,
  verifyHash,
  type NotificationKind,
} from '@recon/protocol';

const common = {
  IDENTIFIER: 'merchant',
  TRANSACTIONID: 'A1',
  CLIENTIDENT: '',
  CLIENTEMAIL: 'jane@example.com',
  ORDERID: 'o1',
  AMOUNT: '15000',
  VERSION: '3.0',
  LANGUAGE: 'fr',
  CURRENCY: 'EUR',
  EXECCODE: '0000',
  MESSAGE: 'ok',
  DESCRIPTOR: '',
};
const wallet = {
  PP_ADDRESS_STATUS: 'confirmed',
  PP_PAYER_ID: 'ABCDEFGHIJKLM',
  PP_PAYER_STATUS: 'completed',
  PP_PROTECTION_ELIGIBILITY: 'eligible',
  PP_PROTECTION_ELIGIBILITY_TYPE: 'ineligible',
  PP_SHIP_TO_CITY: 'Lyon',
  PP_SHIP_TO_COUNTRYCODE: 'FR',
  PP_SHIP_TO_NAME: 'Jane',
  PP_SHIP_TO_STREET: '1 rue X',
  PP_SHIP_TO_ZIP: '69001',
  PP_TRANSACTION_ID: '9XY',
};
const examples: Record<NotificationKind, Record<string, string>> = {
  'instalment-authorization': { ...common, OPERATIONTYPE: 'authorization', EXTRADATA: '' },
  'instalment-capture': { ...common, OPERATIONTYPE: 'capture', EXTRADATA: 'x' },
  'instalment-refund': {
    ...common,
    OPERATIONTYPE: 'refund',
    EXTERNALENTITYID: '42',
    EXTERNALREFERENCE: '000012345',
    EXTRADATA: '',
  },
  'wallet-payment': { ...common, OPERATIONTYPE: 'payment', ...wallet },
  'wallet-capture': { ...common, OPERATIONTYPE: 'capture', ...wallet },
  'wallet-refund': { ...common, OPERATIONTYPE: 'refund' },
};

describe('notifications', () => {
  it.each(NOTIFICATION_KINDS)('%s: signed, encoded, decoded, verified and recognised', (kind) => {
    const body = encodeNotification(examples[kind], 'secret');
    const fields = decodeNotification(body);
    expect(verifyHash('secret', fields)).toBe(true);
    expect(verifyHash('other', fields)).toBe(false);
    const parsed = parseNotification(fields);
    expect(parsed.kind).toBe(kind);
    expect(Object.keys(parsed.fields).sort()).toEqual([...NOTIFICATION_SHAPES[kind].fields].sort());
  });

  it('decodes a GET query as URLSearchParams too', () => {
    const query = new URL(`http://merchant.example/notify?${encodeNotification(examples['wallet-refund'], 's')}`);
    expect(decodeNotification(query.searchParams)).toMatchObject({ TRANSACTIONID: 'A1' });
  });

  it('refuses a repeated field', () => {
    expect(() => decodeNotification('A=1&A=2')).toThrow(ProtocolError);
  });

  it('refuses a field set that matches no kind, a missing or an extra field', () => {
    const signed = decodeNotification(encodeNotification(examples['instalment-capture'], 's'));
    const { EXTRADATA: _, ...missing } = signed;
    expect(() => parseNotification(missing)).toThrow(/no notification kind/);
    expect(() => parseNotification({ ...signed, OPERATIONTYPE: 'payment' })).toThrow(/no notification kind/);
    expect(() => parseNotification({ ...signed, PP_PAYER_ID: 'x' })).toThrow(/no notification kind/);
  });

  it('refuses a bad value, naming the field', () => {
    const signed = decodeNotification(encodeNotification(examples['instalment-refund'], 's'));
    expect(() => parseNotification({ ...signed, EXTERNALREFERENCE: '12345' })).toThrow(
      'invalid parameter EXTERNALREFERENCE: expected exactly 9 digits',
    );
    expect(() => parseNotification({ ...signed, AMOUNT: '' })).toThrow(/AMOUNT/);
  });

  it('maps method and operation to a kind', () => {
    expect(notificationKind('instalment', 'authorization')).toBe('instalment-authorization');
    expect(notificationKind('instalment', 'refund')).toBe('instalment-refund');
    expect(notificationKind('wallet', 'payment')).toBe('wallet-payment');
    expect(notificationKind('wallet', 'authorization')).toBe('wallet-payment');
    expect(notificationKind('wallet', 'capture')).toBe('wallet-capture');
  });
});
