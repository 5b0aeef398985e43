import { createPaymentClient } from '../../src/client/payment-client.ts';
import type { PaymentClient, PaymentClientOptions } from '../../src/client/payment-client.ts';
import type { CaptureOrRefundRequest, WalletPaymentRequest } from '../../src/client/request-types.ts';

export const SECRET = 'account-key';

export function clientFor(baseUrl: string, overrides: Partial<PaymentClientOptions> = {}): PaymentClient {
  return createPaymentClient({
    baseUrl,
    identifier: 'merchant-1',
    secret: SECRET,
    timeoutMs: 2_000,
    retry: { attempts: 3, baseDelayMs: 5 },
    ...overrides,
  });
}

export const walletPayment: WalletPaymentRequest = {
  ORDERID: 'order-1',
  AMOUNT: 12_990n,
  CLIENTIDENT: 'client-1',
  CLIENTEMAIL: 'jane@example.com',
  CLIENTUSERAGENT: 'Mozilla/5.0',
  CLIENTIP: '192.0.2.10',
  DESCRIPTION: 'two books',
};

export const captureRequest: CaptureOrRefundRequest = {
  TRANSACTIONID: 'A123',
  ORDERID: 'order-1',
  DESCRIPTION: 'shipped',
};

export const redirected = {
  OPERATIONTYPE: 'payment',
  EXECCODE: '0002',
  MESSAGE: 'redirect the cardholder',
  DESCRIPTOR: 'SHOP',
  TRANSACTIONID: 'A123',
  REDIRECTHTML: Buffer.from('<form action="http://127.0.0.1/pay"></form>').toString('base64'),
};

export const captured = { OPERATIONTYPE: 'capture', EXECCODE: '0000', MESSAGE: 'ok', TRANSACTIONID: 'A124' };

export function answer(operation: string, execCode: string) {
  return { OPERATIONTYPE: operation, EXECCODE: execCode, MESSAGE: `answer ${execCode}` };
}

/** The rejection of a promise, for asserting on its fields. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}
