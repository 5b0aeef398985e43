import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { referenceParams, startHarness, walletParams, type Harness } from './support/sandbox-harness.ts';

/** Every row of the spec's wallet state table, and its limits, driven over HTTP. */
describe('sandbox wallet method: state table', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => h.close());

  it.each(['payment', 'authorization'] as const)(
    '(none) + %s: awaiting cardholder, 0002 with TRANSACTIONID and REDIRECTHTML',
    async (method) => {
      const answer = await h.process(method, walletParams());
      expect(answer).toMatchObject({ OPERATIONTYPE: method, EXECCODE: '0002' });
      expect(h.pageUrl(answer)).toBe(`${h.baseUrl}/sandbox/cardholder/${answer['TRANSACTIONID']}`);
      expect(h.sandbox.store.get(answer['TRANSACTIONID']!)).toMatchObject({
        method: 'wallet',
        operationType: method,
        status: 'awaiting-cardholder',
        amount: 4990n,
        currency: 'EUR',
      });
    },
  );

  it.each([
    ['validated', 'succeeded', /^0000$/],
    ['refused', 'refused', /^4\d{3}$/],
  ])('awaiting cardholder + %s: the result the notification carries', async (outcome, status, execCode) => {
    const id = await h.settle('payment', walletParams(), outcome);
    expect(h.sandbox.store.get(id)).toMatchObject({ status, execCode: expect.stringMatching(execCode) });
  });

  it('has no waiting for approval: pending is refused on the page (409) and changes nothing', async () => {
    const answer = await h.process('payment', walletParams());
    const page = await h.cardholder(answer['TRANSACTIONID']!, 'pending');
    expect(page.status).toBe(409);
    expect(h.sandbox.store.get(answer['TRANSACTIONID']!)?.status).toBe('awaiting-cardholder');
  });

  it('authorization succeeded + capture within 7 days: captured, once', async () => {
    const id = await h.settle('authorization', walletParams(), 'validated');
    h.sandbox.clock.advanceDays(7);
    const answer = await h.process('capture', referenceParams(h, id));
    expect(answer).toMatchObject({ OPERATIONTYPE: 'capture', EXECCODE: '0000' });
    expect(h.sandbox.store.get(answer['TRANSACTIONID']!)).toMatchObject({
      operationType: 'capture',
      method: 'wallet',
      amount: 4990n,
      restingAmount: 4990n,
      parentTransactionId: id,
    });
    expect(h.sandbox.store.get(answer['TRANSACTIONID']!)?.schedule).toBeUndefined();
    expect(await h.process('capture', referenceParams(h, id))).toMatchObject({ EXECCODE: '2005' });
  });

  it('capture limits: above the authorization 2007, after 7 days 2009, of a payment 2005, of a refused authorization 2003', async () => {
    const id = await h.settle('authorization', walletParams(), 'validated');
    expect(await h.process('capture', referenceParams(h, id, { AMOUNT: '4991' }))).toMatchObject({ EXECCODE: '2007' });
    const paymentId = await h.settle('payment', walletParams(), 'validated');
    expect(await h.process('capture', referenceParams(h, paymentId))).toMatchObject({ EXECCODE: '2005' });
    const refusedId = await h.settle('authorization', walletParams(), 'refused');
    expect(await h.process('capture', referenceParams(h, refusedId))).toMatchObject({ EXECCODE: '2003' });
    h.sandbox.clock.advance(7 * 86_400_000 + 1);
    expect(await h.process('capture', referenceParams(h, id))).toMatchObject({ EXECCODE: '2009' });
  });

  it('payment succeeded + refund of the payment: refunded, resting amount lowered', async () => {
    const id = await h.settle('payment', walletParams(), 'validated');
    expect(h.sandbox.store.get(id)?.restingAmount).toBe(4990n);
    const partial = await h.process('refund', referenceParams(h, id, { AMOUNT: '990' }));
    expect(partial).toMatchObject({ OPERATIONTYPE: 'refund', EXECCODE: '0000' });
    expect(h.sandbox.store.get(id)?.restingAmount).toBe(4000n);
    expect(await h.process('refund', referenceParams(h, id, { AMOUNT: '4001' }))).toMatchObject({ EXECCODE: '2008' });
    const rest = await h.process('refund', referenceParams(h, id));
    expect(h.sandbox.store.get(rest['TRANSACTIONID']!)).toMatchObject({ amount: 4000n, parentTransactionId: id });
    expect(await h.process('refund', referenceParams(h, id))).toMatchObject({ EXECCODE: '2004' });
  });

  it('captured + refund of the capture: refunded, resting amount of the capture lowered', async () => {
    const id = await h.settle('authorization', walletParams(), 'validated');
    const captureId = (await h.process('capture', referenceParams(h, id, { AMOUNT: '3000' })))['TRANSACTIONID']!;
    expect(await h.process('refund', referenceParams(h, captureId, { AMOUNT: '3001' }))).toMatchObject({
      EXECCODE: '2008',
    });
    expect(await h.process('refund', referenceParams(h, captureId, { AMOUNT: '1000' }))).toMatchObject({
      EXECCODE: '0000',
    });
    expect(h.sandbox.store.get(captureId)?.restingAmount).toBe(2000n);
  });

  it('not refundable (2004): an authorization, a refused payment, a payment still awaiting the cardholder', async () => {
    const authorizationId = await h.settle('authorization', walletParams(), 'validated');
    expect(await h.process('refund', referenceParams(h, authorizationId))).toMatchObject({ EXECCODE: '2004' });
    const refusedId = await h.settle('payment', walletParams(), 'refused');
    expect(await h.process('refund', referenceParams(h, refusedId))).toMatchObject({ EXECCODE: '2004' });
    const awaitingId = (await h.process('payment', walletParams()))['TRANSACTIONID']!;
    expect(await h.process('refund', referenceParams(h, awaitingId))).toMatchObject({ EXECCODE: '2004' });
  });
});
