import { createSandboxClock } from '../../src/clock.ts';
import type { SandboxClock } from '../../src/clock.ts';
import { createSandboxStore } from '../../src/store.ts';
import type { SandboxStore, SandboxTransaction } from '../../src/store.ts';

export const IDENTIFIER = 'merchant-42';
export const SECRET = 'export-secret';

export interface ExportTestStore {
  readonly store: SandboxStore;
  readonly clock: SandboxClock;
  readonly ids: {
    readonly instalmentAuthorization: string;
    readonly instalmentCapture: string;
    readonly instalmentRefund: string;
    readonly walletPayment: string;
    readonly walletRefused: string;
    readonly pendingApproval: string;
  };
}

/**
 * A small known population: order CMD-1 (instalment 3x: authorization, capture, partial refund), order CMD-2
 * (wallet payment with a quoted address), order CMD-3 (refused wallet payment), order CMD-4 (pending approval).
 */
export function createExportTestStore(): ExportTestStore {
  const clock = createSandboxClock({ start: new Date('2026-06-10T12:00:00Z'), ticking: false });
  const store = createSandboxStore();
  const add = (fields: Partial<SandboxTransaction> & Pick<SandboxTransaction, 'orderId' | 'createdAt'>) =>
    store.add({
      transactionId: store.newTransactionId(),
      identifier: IDENTIFIER,
      method: 'instalment',
      operationType: 'authorization',
      amount: 0n,
      currency: 'EUR',
      execCode: '0000',
      message: 'Operation succeeded',
      status: 'succeeded',
      updatedAt: fields.createdAt,
      request: {},
      ...fields,
    }).transactionId;

  const instalmentAuthorization = add({
    orderId: 'CMD-1',
    amount: 45_990n,
    paymentOption: 'instalpay-3x',
    createdAt: new Date('2026-06-01T08:15:30Z'),
    request: {
      PAYMENTOPTION: 'instalpay-3x',
      CLIENTEMAIL: 'ada@example.org',
      BILLINGFIRSTNAME: 'Ada',
      BILLINGLASTNAME: 'Lovelace',
      BILLINGCOUNTRY: 'BE',
      EXTRADATA: 'cart=42;channel=web',
    },
  });
  const instalmentCapture = add({
    orderId: 'CMD-1',
    operationType: 'capture',
    amount: 45_990n,
    restingAmount: 35_990n,
    parentTransactionId: instalmentAuthorization,
    schedule: { index: 1, count: 3 },
    createdAt: new Date('2026-06-02T22:30:00Z'),
  });
  const instalmentRefund = add({
    orderId: 'CMD-1',
    operationType: 'refund',
    amount: 10_000n,
    parentTransactionId: instalmentCapture,
    createdAt: new Date('2026-06-03T09:00:00Z'),
  });
  const walletPayment = add({
    orderId: 'CMD-2',
    method: 'wallet',
    operationType: 'payment',
    amount: 1_999n,
    restingAmount: 1_999n,
    createdAt: new Date('2026-06-04T10:00:00Z'),
    request: {
      CLIENTEMAIL: 'bob@example.org',
      CLIENTADDRESS: '12 rue "du Port"; Nantes',
      CARDFULLNAME: 'Bob Martin',
    },
  });
  const walletRefused = add({
    orderId: 'CMD-3',
    method: 'wallet',
    operationType: 'payment',
    amount: 5_000n,
    execCode: '4001',
    message: 'Transaction refused by the payment method',
    status: 'refused',
    createdAt: new Date('2026-06-05T10:00:00Z'),
  });
  const pendingApproval = add({
    orderId: 'CMD-4',
    amount: 20_000n,
    paymentOption: 'instalpay-4x',
    execCode: '0003',
    message: 'Waiting for approval by the instalment provider',
    status: 'pending-approval',
    createdAt: new Date('2026-06-06T10:00:00Z'),
  });
  return {
    store,
    clock,
    ids: {
      instalmentAuthorization,
      instalmentCapture,
      instalmentRefund,
      walletPayment,
      walletRefused,
      pendingApproval,
    },
  };
}
