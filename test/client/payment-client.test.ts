import { afterEach, describe, expect, it } from 'vitest';
import { verifyHash } from '@recon/protocol';
import { ServiceError } from '../../src/client/service-error.ts';
import {
  answer,
  captured,
  captureRequest,
  clientFor,
  redirected,
  rejectionOf,
  SECRET,
  walletPayment,
} from './client-fixtures.ts';
import { answering, startServer } from './loopback-servers.ts';
import type { LoopbackServer } from './loopback-servers.ts';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('payment client requests', () => {
  it('sends a signed wallet payment to the process endpoint and returns the validated answer', async () => {
    server = await startServer(answering(redirected));
    const result = await clientFor(`${server.baseUrl}/`).payment({
      ...walletPayment,
      CART: [{ NAME: 'book', PRICE: '6495' }],
    });
    expect(result).toMatchObject({ EXECCODE: '0002', TRANSACTIONID: 'A123', REDIRECTHTML: redirected.REDIRECTHTML });
    const [request] = server.received;
    expect(request).toMatchObject({
      path: '/front/service/rest/process',
      contentType: 'application/x-www-form-urlencoded',
      method: 'payment',
    });
    expect(request!.params).toMatchObject({
      IDENTIFIER: 'merchant-1',
      OPERATIONTYPE: 'payment',
      VERSION: '3.0',
      AMOUNT: '12990',
      CART: [{ NAME: 'book', PRICE: '6495' }],
    });
    expect(verifyHash(SECRET, request!.params)).toBe(true);
  });

  it('sends both authorization methods; the instalment one with PAYMENTOPTION', async () => {
    server = await startServer(answering({ ...redirected, OPERATIONTYPE: 'authorization' }));
    const client = clientFor(server.baseUrl);
    await client.authorization({
      method: 'instalment',
      ...walletPayment,
      PAYMENTOPTION: 'instalpay-4x',
      BILLINGCITY: 'Lyon',
    });
    await client.authorization({ method: 'wallet', ...walletPayment, CLIENTDOB: '1990-05-17' });
    expect(server.received.map((r) => [r.method, r.params['PAYMENTOPTION'], r.params['method']])).toEqual([
      ['authorization', 'instalpay-4x', undefined],
      ['authorization', undefined, undefined],
    ]);
  });

  it('sends capture and refund with an optional AMOUNT', async () => {
    server = await startServer((_, request) => ({ json: { ...captured, OPERATIONTYPE: request.method } }));
    const client = clientFor(server.baseUrl);
    await client.capture(captureRequest);
    await client.refund({ ...captureRequest, AMOUNT: 500n });
    expect(server.received.map((r) => [r.method, r.params['AMOUNT']])).toEqual([
      ['capture', undefined],
      ['refund', '500'],
    ]);
  });

  it.each([
    ['an invalid e-mail', { CLIENTEMAIL: 'jane' }, 'CLIENTEMAIL'],
    ['a cart delay of 4 days', { CART: [{ DELIVERYEXPECTEDDELAY: '4' }] }, 'CART[0][DELIVERYEXPECTEDDELAY]'],
    ['an ORDERID of 41 characters', { ORDERID: 'x'.repeat(41) }, 'ORDERID'],
    ['a negative amount', { AMOUNT: -1n }, 'AMOUNT'],
  ])('refuses %s before sending anything, naming the field', async (_, change, field) => {
    server = await startServer(answering(redirected));
    const error = await rejectionOf(clientFor(server.baseUrl).payment({ ...walletPayment, ...change }));
    expect(error).toMatchObject({ code: 'PROTOCOL_INVALID_FIELD', field });
    expect(error.message).toContain(field);
    expect(server.received).toHaveLength(0);
  });

  it('refuses an instalment authorization without PAYMENTOPTION before sending', async () => {
    server = await startServer(answering(redirected));
    const request = { method: 'instalment', ...walletPayment } as unknown as Parameters<
      ReturnType<typeof clientFor>['authorization']
    >[0];
    const error = await rejectionOf(clientFor(server.baseUrl).authorization(request));
    expect(error).toMatchObject({ code: 'PROTOCOL_INVALID_FIELD', execCode: '1001', field: 'PAYMENTOPTION' });
    expect(server.received).toHaveLength(0);
  });

  it('turns an error EXECCODE into a ServiceError carrying the code', async () => {
    server = await startServer(answering(answer('capture', '2005')));
    const error = await rejectionOf(clientFor(server.baseUrl).capture(captureRequest));
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: 'SERVICE_ERROR', execCode: '2005' });
    expect(error.message).toBe('capture answered EXECCODE 2005 (authorization not capturable): answer 2005');
  });

  it.each([
    ['a 0002 without REDIRECTHTML', { ...redirected, REDIRECTHTML: undefined }, 'REDIRECTHTML'],
    ['an EXECCODE of 3 digits', { ...redirected, EXECCODE: '002' }, 'EXECCODE'],
    ['no MESSAGE', { ...captured, MESSAGE: undefined }, 'MESSAGE'],
  ])('refuses an answer with %s as PROTOCOL_RESPONSE, naming the field', async (_, json, field) => {
    server = await startServer(answering(json));
    const error = await rejectionOf(clientFor(server.baseUrl).payment(walletPayment));
    expect(error).toMatchObject({ code: 'PROTOCOL_RESPONSE' });
    expect(error.message).toContain(field);
    expect(server.received).toHaveLength(1);
  });
});

describe('getTransactions', () => {
  const rows = [
    { ORDERID: 'o1', AMOUNT: '129.90', EXECCODE: '0' },
    { ORDERID: 'o2', AMOUNT: '1.00', EXECCODE: '4001' },
  ];

  it('answers DATA rows synchronously, ids and columns ;-joined, on the export endpoint', async () => {
    server = await startServer(answering({ ...answer('getTransactions', '0000'), DATA: rows }));
    const result = await clientFor(server.baseUrl).getTransactions({
      ORDERID: ['o1', 'o2'],
      COLUMNS: ['ORDERID', 'AMOUNT', 'EXECCODE'],
      TIMEZONE: 'Europe/Paris',
    });
    expect(result).toEqual(rows);
    expect(server.received[0]).toMatchObject({
      path: '/front/service/rest/export',
      method: 'getTransactions',
      params: { ORDERID: 'o1;o2', COLUMNS: 'ORDERID;AMOUNT;EXECCODE', TIMEZONE: 'Europe/Paris' },
    });
  });

  it('asks for an asynchronous delivery by URL or e-mail with a compression', async () => {
    server = await startServer(answering(answer('getTransactions', '0000')));
    const client = clientFor(server.baseUrl);
    const receipt = await client.getTransactions({
      TRANSACTIONID: ['A1'],
      CALLBACKURL: 'http://127.0.0.1:9/cb',
      COMPRESSION: 'gzip',
    });
    expect(receipt).toMatchObject({ EXECCODE: '0000' });
    await client.getTransactions({ ORDERID: ['o1'], MAILTO: 'books@example.com', COMPRESSION: 'bzip' });
    expect(server.received.map((r) => r.params)).toMatchObject([
      { TRANSACTIONID: 'A1', CALLBACKURL: 'http://127.0.0.1:9/cb', COMPRESSION: 'gzip' },
      { ORDERID: 'o1', MAILTO: 'books@example.com', COMPRESSION: 'bzip' },
    ]);
  });

  it('refuses a CALLBACKURL longer than 32 characters before sending', async () => {
    server = await startServer(answering(answer('getTransactions', '0000')));
    const callback = `${server.baseUrl}/callbacks/exports`;
    expect(callback.length).toBeGreaterThan(32);
    const error = await rejectionOf(
      clientFor(server.baseUrl).getTransactions({ ORDERID: ['o1'], CALLBACKURL: callback, COMPRESSION: 'zip' }),
    );
    expect(error).toMatchObject({ code: 'PROTOCOL_INVALID_FIELD', field: 'CALLBACKURL' });
    expect(server.received).toHaveLength(0);
  });

  it('refuses a synchronous answer without DATA', async () => {
    server = await startServer(answering(answer('getTransactions', '0000')));
    const error = await rejectionOf(clientFor(server.baseUrl).getTransactions({ ORDERID: ['o1'] }));
    expect(error).toMatchObject({ code: 'PROTOCOL_RESPONSE' });
  });
});
