import type { Params } from '@recon/protocol';
import type { PaymentMethod, SandboxStore, SandboxTransaction } from './store.ts';

/**
 * The records the sandbox writes, in one place so that the process endpoint, the cardholder page and the
 * scenario seeder store the same codes and messages for the same state.
 */
export const AWAITING_CARDHOLDER = {
  status: 'awaiting-cardholder',
  execCode: '0002',
  message: 'Redirect the cardholder: display the decoded REDIRECTHTML',
} as const;

export const PENDING_APPROVAL = {
  status: 'pending-approval',
  execCode: '0003',
  message: 'Waiting for approval by the instalment provider',
} as const;

export const SUCCEEDED = { status: 'succeeded', execCode: '0000', message: 'Operation succeeded' } as const;

/** The refusal the cardholder page gives; the seeder also draws other 4xxx codes. */
export const REFUSED = {
  status: 'refused',
  execCode: '4001',
  message: 'Transaction refused by the payment method',
} as const;

/** A payment or authorization the cardholder validated. A payment is refundable at once; an authorization only through its capture. */
export function succeededStart(start: SandboxTransaction): Partial<SandboxTransaction> {
  return { ...SUCCEEDED, ...(start.operationType === 'payment' ? { restingAmount: start.amount } : {}) };
}

export interface StartRequest {
  readonly orderId: string;
  readonly identifier: string;
  readonly method: PaymentMethod;
  readonly operationType: 'payment' | 'authorization';
  readonly amount: bigint;
  readonly currency: string;
  readonly paymentOption: string | undefined;
  /** The request as received (HASH included). */
  readonly request: Params;
}

/** A payment or authorization just accepted (0002): the cardholder must finish it on the method's page. */
export function awaitingCardholderRecord(store: SandboxStore, start: StartRequest, at: Date): SandboxTransaction {
  const { paymentOption, ...fields } = start;
  return {
    ...fields,
    ...AWAITING_CARDHOLDER,
    transactionId: store.newTransactionId(),
    createdAt: at,
    updatedAt: at,
    ...(paymentOption ? { paymentOption } : {}),
  };
}

/** A capture or refund of `parent`, succeeded at `at`. */
export function followUpRecord(
  store: SandboxStore,
  parent: SandboxTransaction,
  operationType: 'capture' | 'refund',
  amount: bigint,
  request: Params,
  at: Date,
): SandboxTransaction {
  return {
    ...SUCCEEDED,
    transactionId: store.newTransactionId(),
    orderId: parent.orderId,
    identifier: parent.identifier,
    method: parent.method,
    operationType,
    amount,
    currency: parent.currency,
    createdAt: at,
    updatedAt: at,
    parentTransactionId: parent.transactionId,
    ...(parent.paymentOption ? { paymentOption: parent.paymentOption } : {}),
    request,
  };
}

/** An instalment capture is the first of the plan's instalments: `instalpay-4x…` pays in 4, the 3x options in 3. */
export function firstInstalment(paymentOption: string): { index: number; count: number } {
  return { index: 1, count: paymentOption.startsWith('instalpay-4x') ? 4 : 3 };
}
