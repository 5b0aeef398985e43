import { describe, expect, it } from 'vitest';
import { createSandboxStore, type SandboxTransaction } from '../src/store.ts';

function authorization(transactionId: string, orderId: string): SandboxTransaction {
  const at = new Date('2026-03-01T10:00:00Z');
  return {
    transactionId,
    orderId,
    identifier: 'ACME',
    method: 'wallet',
    operationType: 'authorization',
    amount: 1999n,
    currency: 'EUR',
    execCode: '0002',
    message: 'redirect',
    status: 'awaiting-cardholder',
    createdAt: at,
    updatedAt: at,
    request: { ORDERID: orderId },
  };
}

describe('sandbox store', () => {
  it('hands out distinct, repeatable transaction ids', () => {
    const a = createSandboxStore();
    const b = createSandboxStore();
    const ids = [a.newTransactionId(), a.newTransactionId()];
    expect(ids[0]).not.toBe(ids[1]);
    expect([b.newTransactionId(), b.newTransactionId()]).toEqual(ids);
    expect(ids[0]!.length).toBeLessThanOrEqual(32);
  });

  it('skips ids already added by hand', () => {
    const store = createSandboxStore();
    const probe = createSandboxStore().newTransactionId();
    store.add(authorization(probe, 'O1'));
    expect(store.newTransactionId()).not.toBe(probe);
  });

  it('finds by id and by order, in creation order', () => {
    const store = createSandboxStore();
    store.add(authorization('T1', 'O1'));
    store.add(authorization('T2', 'O2'));
    store.add(authorization('T3', 'O1'));
    expect(store.get('T2')?.orderId).toBe('O2');
    expect(store.get('nope')).toBeUndefined();
    expect(store.byOrderId('O1').map((t) => t.transactionId)).toEqual(['T1', 'T3']);
    expect(store.byOrderId('none')).toEqual([]);
    expect(store.all().map((t) => t.transactionId)).toEqual(['T1', 'T2', 'T3']);
  });

  it('replaces a record on update and leaves old snapshots untouched', () => {
    const store = createSandboxStore();
    const before = store.add(authorization('T1', 'O1'));
    const after = store.update('T1', { status: 'succeeded', execCode: '0000', capturedAmount: 500n });
    expect(before.status).toBe('awaiting-cardholder');
    expect(after).toMatchObject({ transactionId: 'T1', status: 'succeeded', execCode: '0000', capturedAmount: 500n });
    expect(store.get('T1')).toBe(after);
    expect(Object.isFrozen(after)).toBe(true);
    expect(store.byOrderId('O1')).toEqual([after]);
  });

  it('refuses duplicates, unknown ids and moving a transaction to another order', () => {
    const store = createSandboxStore();
    store.add(authorization('T1', 'O1'));
    expect(() => store.add(authorization('T1', 'O1'))).toThrow(/already exists/);
    expect(() => store.update('T9', { status: 'refused' })).toThrow(/no transaction T9/);
    expect(() => store.update('T1', { orderId: 'O2' })).toThrow(/cannot change/);
  });
});
