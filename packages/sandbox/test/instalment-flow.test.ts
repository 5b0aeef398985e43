import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { instalmentParams, referenceParams, startHarness, type Harness } from './support/sandbox-harness.ts';

const DAY_MS = 86_400_000;

/** Every row of the spec's instalment state table, and its limits, driven over HTTP. */
describe('sandbox instalment method: state table', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => h.close());

  it('(none) + authorization: awaiting cardholder, 0002 with TRANSACTIONID and a REDIRECTHTML to the absolute page URL', async () => {
    const answer = await h.process('authorization', instalmentParams());
    expect(answer).toMatchObject({ OPERATIONTYPE: 'authorization', EXECCODE: '0002', DESCRIPTOR: expect.any(String) });
    const id = answer['TRANSACTIONID']!;
    expect(h.pageUrl(answer)).toBe(`${h.baseUrl}/sandbox/cardholder/${id}`);
    expect(h.sandbox.store.get(id)).toMatchObject({
      method: 'instalment',
      operationType: 'authorization',
      status: 'awaiting-cardholder',
      execCode: '0002',
      amount: 125000n,
      currency: 'EUR',
      paymentOption: 'instalpay-3x',
    });
  });

  it('awaiting cardholder + validated: authorization succeeded (0000), capturable', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'validated');
    expect(h.sandbox.store.get(id)).toMatchObject({ status: 'succeeded', execCode: '0000' });
    const captured = await h.process('capture', referenceParams(h, id));
    expect(captured).toMatchObject({ OPERATIONTYPE: 'capture', EXECCODE: '0000', TRANSACTIONID: expect.any(String) });
  });

  it('awaiting cardholder + pending: waiting for approval (0003)', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'pending');
    expect(h.sandbox.store.get(id)).toMatchObject({ status: 'pending-approval', execCode: '0003' });
  });

  it('awaiting cardholder + refused: a 4xxx refusal', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'refused');
    expect(h.sandbox.store.get(id)).toMatchObject({ status: 'refused', execCode: expect.stringMatching(/^4\d{3}$/) });
  });

  it.each([
    ['validated', 'succeeded', '0000'],
    ['refused', 'refused', '4001'],
  ])('waiting for approval + update %s within 6 days: %s', async (outcome, status, execCode) => {
    const id = await h.settle('authorization', instalmentParams(), 'pending');
    h.sandbox.clock.advanceDays(6);
    const page = await h.cardholder(id, outcome);
    expect(page.status).toBe(200);
    expect(h.sandbox.store.get(id)).toMatchObject({ status, execCode });
  });

  it('waiting for approval + no update for 6 days: expired, treated as failed; a later update is refused', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'pending');
    h.sandbox.clock.advance(6 * DAY_MS + 1);
    const late = await h.cardholder(id, 'validated');
    expect(late.status).toBe(409);
    expect(late.html).toContain('expired');
    expect(h.sandbox.store.get(id)).toMatchObject({ status: 'expired' });
    const capture = await h.process('capture', referenceParams(h, id));
    expect(capture).toMatchObject({ EXECCODE: '2003' });
    expect(capture['MESSAGE']).toContain('expired');
  });

  it('an approval validated on day 5 can be captured for 7 days from then', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'pending');
    h.sandbox.clock.advanceDays(5);
    await h.cardholder(id, 'validated');
    h.sandbox.clock.advanceDays(7);
    expect(await h.process('capture', referenceParams(h, id))).toMatchObject({ EXECCODE: '0000' });
  });

  it('authorization succeeded + capture: captured in full by default, first of 3 instalments, not capturable again', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'validated');
    const answer = await h.process('capture', referenceParams(h, id));
    const capture = h.sandbox.store.get(answer['TRANSACTIONID']!);
    expect(capture).toMatchObject({
      operationType: 'capture',
      method: 'instalment',
      status: 'succeeded',
      execCode: '0000',
      amount: 125000n,
      restingAmount: 125000n,
      parentTransactionId: id,
      schedule: { index: 1, count: 3 },
    });
    expect(h.sandbox.store.get(id)?.capturedAmount).toBe(125000n);
    const again = await h.process('capture', referenceParams(h, id, { AMOUNT: '100' }));
    expect(again).toMatchObject({ EXECCODE: '2005' });
  });

  it('a 4x option captures as the first of 4 instalments', async () => {
    const id = await h.settle(
      'authorization',
      instalmentParams({ PAYMENTOPTION: 'instalpay-4xsansfrais' }),
      'validated',
    );
    const answer = await h.process('capture', referenceParams(h, id));
    expect(h.sandbox.store.get(answer['TRANSACTIONID']!)?.schedule).toEqual({ index: 1, count: 4 });
  });

  it('capture AMOUNT: at most the authorized amount (2007); less is a partial capture', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'validated');
    const above = await h.process('capture', referenceParams(h, id, { AMOUNT: '125001' }));
    expect(above).toMatchObject({ EXECCODE: '2007' });
    expect(above['MESSAGE']).toContain('AMOUNT');
    const partial = await h.process('capture', referenceParams(h, id, { AMOUNT: '100000' }));
    expect(partial).toMatchObject({ EXECCODE: '0000' });
    expect(h.sandbox.store.get(partial['TRANSACTIONID']!)?.amount).toBe(100000n);
  });

  it('capture window: exactly 7 days after the authorization is in time, a moment later is 2009', async () => {
    const inTime = await h.settle('authorization', instalmentParams(), 'validated');
    const late = await h.settle('authorization', instalmentParams(), 'validated');
    h.sandbox.clock.advanceDays(7);
    expect(await h.process('capture', referenceParams(h, inTime))).toMatchObject({ EXECCODE: '0000' });
    h.sandbox.clock.advance(1);
    const answer = await h.process('capture', referenceParams(h, late));
    expect(answer).toMatchObject({ EXECCODE: '2009' });
    expect(h.sandbox.store.get(late)?.capturedAmount).toBeUndefined();
  });

  it.each(['awaiting', 'pending', 'refused'] as const)(
    'capture of an authorization that did not succeed (%s): 2003',
    async (state) => {
      let id: string;
      if (state === 'awaiting') id = (await h.process('authorization', instalmentParams()))['TRANSACTIONID']!;
      else id = await h.settle('authorization', instalmentParams(), state);
      expect(await h.process('capture', referenceParams(h, id))).toMatchObject({ EXECCODE: '2003' });
    },
  );

  it('captured + refund of the capture: refunded for that amount, resting amount lowered, down to zero', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'validated');
    const captureId = (await h.process('capture', referenceParams(h, id)))['TRANSACTIONID']!;
    const first = await h.process('refund', referenceParams(h, captureId, { AMOUNT: '25000' }));
    expect(first).toMatchObject({ OPERATIONTYPE: 'refund', EXECCODE: '0000' });
    expect(h.sandbox.store.get(first['TRANSACTIONID']!)).toMatchObject({
      operationType: 'refund',
      amount: 25000n,
      parentTransactionId: captureId,
      status: 'succeeded',
    });
    expect(h.sandbox.store.get(captureId)?.restingAmount).toBe(100000n);
    const above = await h.process('refund', referenceParams(h, captureId, { AMOUNT: '100001' }));
    expect(above).toMatchObject({ EXECCODE: '2008' });
    expect(above['MESSAGE']).toContain('100000');
    const rest = await h.process('refund', referenceParams(h, captureId));
    expect(h.sandbox.store.get(rest['TRANSACTIONID']!)?.amount).toBe(100000n);
    expect(h.sandbox.store.get(captureId)?.restingAmount).toBe(0n);
    expect(await h.process('refund', referenceParams(h, captureId, { AMOUNT: '1' }))).toMatchObject({
      EXECCODE: '2004',
    });
  });

  it('a refund must name the capture: the authorization and a refund are not refundable (2004)', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'validated');
    const authorizationRefund = await h.process('refund', referenceParams(h, id));
    expect(authorizationRefund).toMatchObject({ EXECCODE: '2004' });
    expect(authorizationRefund['MESSAGE']).toContain('captures only');
    const captureId = (await h.process('capture', referenceParams(h, id)))['TRANSACTIONID']!;
    const refundId = (await h.process('refund', referenceParams(h, captureId, { AMOUNT: '10' })))['TRANSACTIONID']!;
    expect(await h.process('refund', referenceParams(h, refundId))).toMatchObject({ EXECCODE: '2004' });
  });

  it('a capture or refund cannot be captured (2005)', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'validated');
    const captureId = (await h.process('capture', referenceParams(h, id)))['TRANSACTIONID']!;
    expect(await h.process('capture', referenceParams(h, captureId))).toMatchObject({ EXECCODE: '2005' });
  });
});
