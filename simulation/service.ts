import { encodeRequest, signParams, type CartItem, type Params } from '@recon/protocol';
import type { CardholderOutcome, Sandbox, SandboxAccount, SandboxTransaction } from '@recon/sandbox';

/**
 * The payment service's side of the simulation: what shoppers and the merchant's checkout do at the sandbox, through
 * its real process endpoint (signed requests, the cardholder's step, the later answer to a pending approval), and
 * what the service itself does later (a result revised in a re-export). Every call is synchronous and in process, so
 * that the simulation's order of events is the seed's alone.
 */
export interface Service {
  readonly sandbox: Sandbox;
  /** A wallet payment or authorization, or an instalment authorization, taken to the cardholder's step. */
  start(order: ServiceOrder, account: SandboxAccount): string;
  /** The cardholder's answer, or the answer to a pending approval; false when the service refused it. */
  finish(transactionId: string, outcome: CardholderOutcome): boolean;
  capture(authorization: SandboxTransaction, amount: bigint, account: SandboxAccount): boolean;
  refund(paid: SandboxTransaction, amount: bigint, account: SandboxAccount): boolean;
  /** The service revises a result after the fact: the next export says so (the notification sent before does not). */
  revise(transactionId: string, execCode: string, message: string): void;
  transactions(): SandboxTransaction[];
}

export interface ServiceOrder {
  readonly orderId: string;
  readonly method: 'wallet' | 'instalment';
  readonly operation: 'payment' | 'authorization';
  readonly amount: bigint;
  readonly currency: string;
}

const CART: readonly CartItem[] = [
  { MERCHANTITEMID: 'SKU-1', NAME: 'Sofa', PRICE: '1', QUANTITY: '1', CATEGORY: 'furniture' },
];

export function createService(sandbox: Sandbox): Service {
  const call = (operation: string, account: SandboxAccount, params: Params) =>
    sandbox.process(
      encodeRequest(operation, signParams(account.secret, { OPERATIONTYPE: operation, VERSION: '3.0', ...params })),
    );
  const customer = (order: ServiceOrder): Params => ({
    IDENTIFIER: '',
    ORDERID: order.orderId,
    AMOUNT: order.amount.toString(),
    CURRENCY: order.currency,
    CLIENTIDENT: `shopper-${order.orderId}`,
    CLIENTEMAIL: 'shopper@example.com',
    CLIENTUSERAGENT: 'Mozilla/5.0',
    CLIENTIP: '203.0.113.7',
    DESCRIPTION: `order ${order.orderId}`,
  });
  return {
    sandbox,
    start(order, account) {
      const params: Params = { ...customer(order), IDENTIFIER: account.identifier };
      const instalment: Params =
        order.method === 'instalment'
          ? {
              PAYMENTOPTION: 'instalpay-3x',
              BILLINGFIRSTNAME: 'Jane',
              BILLINGLASTNAME: 'Doe',
              BILLINGCOUNTRY: 'FR',
              SHIPTOCITY: 'Lyon',
              CART: [{ ...CART[0]!, PRICE: order.amount.toString() }],
            }
          : {};
      const answer = call(order.operation, account, { ...params, ...instalment });
      if (answer.EXECCODE !== '0002' || !answer.TRANSACTIONID) {
        throw new Error(
          `the sandbox refused ${order.operation} ${order.orderId}: ${answer.EXECCODE} ${answer.MESSAGE}`,
        );
      }
      return answer.TRANSACTIONID;
    },
    finish: (transactionId, outcome) => sandbox.finishCardholderStep(transactionId, outcome).ok,
    capture(authorization, amount, account) {
      const answer = call('capture', account, {
        IDENTIFIER: account.identifier,
        TRANSACTIONID: authorization.transactionId,
        ORDERID: authorization.orderId,
        DESCRIPTION: 'capture',
        AMOUNT: amount.toString(),
      });
      return answer.EXECCODE === '0000';
    },
    refund(paid, amount, account) {
      const answer = call('refund', account, {
        IDENTIFIER: account.identifier,
        TRANSACTIONID: paid.transactionId,
        ORDERID: paid.orderId,
        DESCRIPTION: 'refund',
        AMOUNT: amount.toString(),
      });
      return answer.EXECCODE === '0000';
    },
    revise(transactionId, execCode, message) {
      sandbox.store.update(transactionId, {
        execCode,
        message,
        status: execCode === '0000' ? 'succeeded' : 'refused',
        updatedAt: sandbox.clock.now(),
      });
    },
    transactions: () => sandbox.store.all(),
  };
}
