import type { Params, PaymentMethod } from '@recon/protocol';

export type { PaymentMethod };

/**
 * The sandbox's transactions, in memory. Money is bigint minor units. Records are frozen snapshots:
 * `update` replaces a record, so a caller holding an old snapshot never sees it change under its feet.
 */
export type SandboxOperationType = 'payment' | 'authorization' | 'capture' | 'refund';
export type SandboxStatus = 'awaiting-cardholder' | 'succeeded' | 'pending-approval' | 'refused' | 'expired';

export interface SandboxTransaction {
  readonly transactionId: string;
  readonly orderId: string;
  readonly identifier: string;
  readonly method: PaymentMethod;
  readonly operationType: SandboxOperationType;
  readonly amount: bigint;
  readonly currency: string;
  readonly execCode: string;
  readonly message: string;
  readonly status: SandboxStatus;
  readonly createdAt: Date;
  /**
   * When the status last changed. The time rules read it: a pending approval expires 6 days after it, and an
   * authorization can be captured for 7 days after it turned succeeded (its status does not change afterwards).
   */
  readonly updatedAt: Date;
  /** Capture: the authorization captured. Refund: the payment or capture refunded. */
  readonly parentTransactionId?: string;
  /** Authorization: the amount captured so far (absent until captured). */
  readonly capturedAmount?: bigint;
  /** Payment or capture: what can still be refunded. */
  readonly restingAmount?: bigint;
  readonly paymentOption?: string;
  /** Instalment captures: position in the instalment plan, exported as SCHEDULE `[index-count]`. */
  readonly schedule?: { readonly index: number; readonly count: number };
  /** The request as received (HASH included). */
  readonly request: Params;
}

export type SandboxTransactionPatch = Partial<Omit<SandboxTransaction, 'transactionId'>>;

export interface SandboxStore {
  /** A fresh TRANSACTIONID (string(1-32)), deterministic per store so seeded scenarios repeat exactly. */
  newTransactionId(): string;
  add(transaction: SandboxTransaction): SandboxTransaction;
  get(transactionId: string): SandboxTransaction | undefined;
  update(transactionId: string, patch: SandboxTransactionPatch): SandboxTransaction;
  /** The order's transactions in creation order. */
  byOrderId(orderId: string): SandboxTransaction[];
  /** Every transaction in creation order. */
  all(): SandboxTransaction[];
}

export function createSandboxStore(): SandboxStore {
  const byId = new Map<string, SandboxTransaction>();
  const idsByOrder = new Map<string, string[]>();
  let sequence = 0;

  return {
    newTransactionId() {
      let id: string;
      do id = `SBX${String(++sequence).padStart(9, '0')}`;
      while (byId.has(id));
      return id;
    },
    add(transaction) {
      if (byId.has(transaction.transactionId)) {
        throw new Error(`sandbox store: transaction ${transaction.transactionId} already exists`);
      }
      const record = Object.freeze({ ...transaction });
      byId.set(record.transactionId, record);
      const orderIds = idsByOrder.get(record.orderId) ?? [];
      orderIds.push(record.transactionId);
      idsByOrder.set(record.orderId, orderIds);
      return record;
    },
    get: (transactionId) => byId.get(transactionId),
    update(transactionId, patch) {
      const current = byId.get(transactionId);
      if (!current) throw new Error(`sandbox store: no transaction ${transactionId}`);
      if (patch.orderId !== undefined && patch.orderId !== current.orderId) {
        throw new Error(`sandbox store: the order of transaction ${transactionId} cannot change`);
      }
      const record = Object.freeze({ ...current, ...patch, transactionId });
      byId.set(transactionId, record);
      return record;
    },
    byOrderId: (orderId) => (idsByOrder.get(orderId) ?? []).map((id) => byId.get(id)!),
    all: () => [...byId.values()],
  };
}
