import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRequest, signParams } from '@recon/protocol';
import {
  IDENTIFIER,
  instalmentParams,
  referenceParams,
  SECRET,
  startHarness,
  walletParams,
  type Harness,
} from './support/sandbox-harness.ts';

describe('sandbox process endpoint: request errors', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it.each([
    ['IDENTIFIER', 'payment'],
    ['HASH', 'payment'],
    ['ORDERID', 'payment'],
    ['AMOUNT', 'authorization'],
    ['CLIENTEMAIL', 'payment'],
    ['VERSION', 'payment'],
  ])('answers 1001 naming a missing %s', async (field, method) => {
    const params = walletParams({ [field]: undefined });
    const answer =
      field === 'HASH'
        ? await h.processRaw(encodeRequest(method, { OPERATIONTYPE: method, ...params }))
        : await h.process(method, params);
    expect(answer).toMatchObject({ OPERATIONTYPE: method, EXECCODE: '1001' });
    expect(answer['MESSAGE']).toContain(field);
  });

  it('answers 1001 for a capture without TRANSACTIONID', async () => {
    const answer = await h.process('capture', referenceParams(h, 'X', { TRANSACTIONID: undefined }));
    expect(answer).toMatchObject({ EXECCODE: '1001' });
    expect(answer['MESSAGE']).toContain('TRANSACTIONID');
  });

  it.each([
    ['CLIENTEMAIL', 'not-an-email'],
    ['CLIENTIP', '300.1.2.3'],
    ['AMOUNT', '12.50'],
    ['ORDERID', 'x'.repeat(41)],
  ])('answers 1002 naming an invalid %s', async (field, value) => {
    const answer = await h.process('payment', walletParams({ [field]: value }));
    expect(answer).toMatchObject({ EXECCODE: '1002' });
    expect(answer['MESSAGE']).toContain(field);
  });

  it('answers 1002 naming a cart field out of range and a parameter the operation does not take', async () => {
    const cart = [{ NAME: 'Lamp', PRICE: '125000', QUANTITY: '1', DELIVERYEXPECTEDDELAY: '4' }];
    const badCart = await h.process('authorization', instalmentParams({ CART: cart }));
    expect(badCart).toMatchObject({ EXECCODE: '1002' });
    expect(badCart['MESSAGE']).toContain('CART[0][DELIVERYEXPECTEDDELAY]');
    const stranger = await h.process('payment', walletParams({ PAYMENTMETHOD: 'card' }));
    expect(stranger).toMatchObject({ EXECCODE: '1002' });
    expect(stranger['MESSAGE']).toContain('PAYMENTMETHOD');
  });

  it('answers 1002 when method and OPERATIONTYPE differ, and for an operation the endpoint does not serve', async () => {
    const signed = signParams(SECRET, { ...walletParams(), OPERATIONTYPE: 'authorization' });
    const differs = await h.processRaw(encodeRequest('payment', signed));
    expect(differs).toMatchObject({ EXECCODE: '1002' });
    expect(differs['MESSAGE']).toContain('OPERATIONTYPE');
    const exportOnProcess = await h.process('getTransactions', { IDENTIFIER, ORDERID: 'A', VERSION: '3.0' });
    expect(exportOnProcess).toMatchObject({ EXECCODE: '1002' });
    expect(exportOnProcess['MESSAGE']).toContain('export endpoint');
  });

  it('answers 1001 for a body without method and 1002 for a malformed key', async () => {
    expect(await h.processRaw('params[IDENTIFIER]=x')).toMatchObject({ EXECCODE: '1001' });
    expect(await h.processRaw('method=payment&IDENTIFIER=x')).toMatchObject({ EXECCODE: '1002' });
  });

  it('answers 1003 for a HASH made with another secret or over other values', async () => {
    const wrongSecret = await h.process('payment', walletParams(), { secret: 'not-the-secret' });
    expect(wrongSecret).toMatchObject({ EXECCODE: '1003' });
    expect(wrongSecret['MESSAGE']).toContain('HASH');
    const signed = signParams(SECRET, { OPERATIONTYPE: 'payment', ...walletParams() });
    const tampered = await h.processRaw(encodeRequest('payment', { ...signed, AMOUNT: '1' }));
    expect(tampered).toMatchObject({ EXECCODE: '1003' });
    expect(h.sandbox.store.all()).toEqual([]);
  });

  it('answers 1004 for a VERSION other than 3.0', async () => {
    const answer = await h.process('payment', walletParams({ VERSION: '2.0' }));
    expect(answer).toMatchObject({ EXECCODE: '1004' });
    expect(answer['MESSAGE']).toContain('2.0');
  });

  it('answers an account error (3001) for an IDENTIFIER other than the sandbox account', async () => {
    const answer = await h.process('payment', walletParams({ IDENTIFIER: 'SOMEONE-ELSE' }));
    expect(answer).toMatchObject({ EXECCODE: '3001' });
    expect(answer['MESSAGE']).toContain('SOMEONE-ELSE');
  });

  it.each(['capture', 'refund'])('answers 2002 for a %s of an unknown TRANSACTIONID', async (method) => {
    const answer = await h.process(method, referenceParams(h, 'SBX404404404'));
    expect(answer).toMatchObject({ OPERATIONTYPE: method, EXECCODE: '2002' });
    expect(answer['MESSAGE']).toContain('SBX404404404');
  });

  it('answers 1002 naming ORDERID when the referenced transaction belongs to another order', async () => {
    const id = await h.settle('authorization', walletParams(), 'validated');
    const answer = await h.process('capture', referenceParams(h, id, { ORDERID: 'SOME-OTHER-ORDER' }));
    expect(answer).toMatchObject({ EXECCODE: '1002' });
    expect(answer['MESSAGE']).toContain('ORDERID');
    expect(h.sandbox.store.get(id)?.capturedAmount).toBeUndefined();
  });

  it('answers HTTP errors for wrong methods, unknown routes and oversized bodies', async () => {
    expect((await fetch(`${h.baseUrl}/front/service/rest/process`)).status).toBe(405);
    expect((await fetch(`${h.baseUrl}/front/service/rest/nothing`, { method: 'POST' })).status).toBe(404);
    const huge = await fetch(`${h.baseUrl}/front/service/rest/process`, {
      method: 'POST',
      body: 'x'.repeat(2 * 1024 * 1024),
    });
    expect(huge.status).toBe(413);
  });
});

describe("sandbox process endpoint: the instalment method's limits", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('takes authorization only: a payment is refused naming OPERATIONTYPE', async () => {
    const answer = await h.process('payment', instalmentParams());
    expect(answer).toMatchObject({ OPERATIONTYPE: 'payment', EXECCODE: '1002' });
    expect(answer['MESSAGE']).toContain('OPERATIONTYPE');
  });

  it.each(['', 'instalpay-10x'])('needs a known PAYMENTOPTION (got %j)', async (option) => {
    const answer = await h.process('authorization', instalmentParams({ PAYMENTOPTION: option }));
    expect(answer['EXECCODE']).toMatch(/^100[12]$/);
    expect(answer['MESSAGE']).toContain('PAYMENTOPTION');
  });

  it.each([
    ['14999', '1002'],
    ['15000', '0002'],
    ['200000', '0002'],
    ['200001', '1002'],
  ])('an order of %s cents answers %s', async (amount, execCode) => {
    const answer = await h.process('authorization', instalmentParams({ AMOUNT: amount }));
    expect(answer['EXECCODE']).toBe(execCode);
    if (execCode === '1002') expect(answer['MESSAGE']).toContain('AMOUNT');
  });

  it('accepts only EUR orders: CURRENCY absent or EUR is taken, another currency refused', async () => {
    const answer = await h.process('authorization', instalmentParams({ CURRENCY: 'USD' }));
    expect(answer).toMatchObject({ EXECCODE: '1002' });
    expect(answer['MESSAGE']).toContain('CURRENCY');
    for (const params of [instalmentParams(), instalmentParams({ CURRENCY: 'EUR', LANGUAGE: 'fr' })]) {
      const accepted = await h.process('authorization', params);
      expect(accepted['EXECCODE']).toBe('0002');
      expect(h.sandbox.store.get(accepted['TRANSACTIONID']!)?.currency).toBe('EUR');
    }
  });

  it('takes a wallet payment in the CURRENCY sent, and refuses one that is not ISO 4217', async () => {
    const accepted = await h.process('payment', walletParams({ CURRENCY: 'USD' }));
    expect(accepted['EXECCODE']).toBe('0002');
    expect(h.sandbox.store.get(accepted['TRANSACTIONID']!)?.currency).toBe('USD');
    const refused = await h.process('payment', walletParams({ CURRENCY: 'XYZ' }));
    expect(refused).toMatchObject({ EXECCODE: '1002' });
    expect(refused['MESSAGE']).toContain('CURRENCY');
  });
});
