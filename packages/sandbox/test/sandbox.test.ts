import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandboxClock, type SandboxClock } from '../src/clock.ts';
import { createSandbox, type Sandbox } from '../src/sandbox.ts';
import { IDENTIFIER, instalmentParams, SECRET, signedBody, START, walletParams } from './support/sandbox-harness.ts';

// Some CI containers have no ::1; the IPv6 case is skipped visibly there.
const hasIpv6Loopback = await new Promise<boolean>((resolve) => {
  const probe = createServer().once('error', () => resolve(false));
  probe.listen(0, '::1', () => probe.close(() => resolve(true)));
});

/** A clock whose time passes without telling anyone, like real time between two requests. */
function silentClock(start: Date): SandboxClock & { pass(ms: number): void } {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance: (ms) => void (now += ms),
    advanceDays: (days) => void (now += days * 86_400_000),
    onAdvance: () => () => undefined,
    pass: (ms) => void (now += ms),
  };
}

describe('createSandbox', () => {
  const sandboxes: Sandbox[] = [];
  afterEach(async () => {
    for (const sandbox of sandboxes.splice(0)) await sandbox.close();
  });
  function make(options: Partial<Parameters<typeof createSandbox>[0]> = {}): Sandbox {
    const sandbox = createSandbox({ identifier: IDENTIFIER, secret: SECRET, ...options });
    sandboxes.push(sandbox);
    return sandbox;
  }

  it('serves in process, without HTTP: process, cardholder step, recorded notifications', async () => {
    const sandbox = make({ clock: createSandboxClock({ start: START, ticking: false }) });
    const answer = sandbox.process(signedBody('payment', walletParams()));
    expect(answer).toMatchObject({ EXECCODE: '0002', TRANSACTIONID: expect.any(String) });
    expect(Buffer.from(answer.REDIRECTHTML!, 'base64').toString()).toContain('/sandbox/cardholder/');
    const step = sandbox.finishCardholderStep(answer.TRANSACTIONID!, 'validated');
    expect(step).toMatchObject({ ok: true, transaction: { status: 'succeeded', execCode: '0000' } });
    expect(sandbox.finishCardholderStep('nope', 'validated')).toMatchObject({ ok: false, reason: 'not-found' });
    expect(sandbox.notifications.deliveries()).toMatchObject([
      { state: 'unsent', fields: { TRANSACTIONID: answer.TRANSACTIONID, EXECCODE: '0000' } },
    ]);
    await sandbox.notifications.idle();
  });

  it('settles an overdue approval when it is next read, even if nobody moved the clock', async () => {
    const clock = silentClock(START);
    const sandbox = make({ clock });
    const baseUrl = await sandbox.listen();
    const answer = sandbox.process(signedBody('authorization', instalmentParams()));
    sandbox.finishCardholderStep(answer.TRANSACTIONID!, 'pending');
    clock.pass(6 * 86_400_000 + 1);
    expect(sandbox.store.get(answer.TRANSACTIONID!)?.status).toBe('pending-approval');
    const page = await (await fetch(`${baseUrl}/sandbox/cardholder/${answer.TRANSACTIONID}`)).text();
    expect(page).toContain('expired');
    expect(sandbox.store.get(answer.TRANSACTIONID!)).toMatchObject({ status: 'expired', execCode: '0003' });
  });

  it('routes getTransactions on the export endpoint, and answers a malformed body with its EXECCODE', async () => {
    const sandbox = make({ clock: createSandboxClock({ start: START, ticking: false }) });
    const baseUrl = await sandbox.listen();
    const params = walletParams();
    const payment = sandbox.process(signedBody('payment', params));
    const exportUrl = `${baseUrl}/front/service/rest/export`;
    const body = signedBody('getTransactions', {
      IDENTIFIER,
      VERSION: '3.0',
      ORDERID: params['ORDERID'],
      COLUMNS: 'TRANSACTIONID;AMOUNT',
    });
    const answer = await (await fetch(exportUrl, { method: 'POST', body })).json();
    expect(answer).toMatchObject({
      OPERATIONTYPE: 'getTransactions',
      EXECCODE: '0000',
      DATA: [{ TRANSACTIONID: payment.TRANSACTIONID, AMOUNT: '49.90' }],
    });
    const malformed = await (await fetch(exportUrl, { method: 'POST', body: 'params[ORDERID]=A' })).json();
    expect(malformed).toMatchObject({ OPERATIONTYPE: 'getTransactions', EXECCODE: '1001' });
    expect((await fetch(exportUrl)).status).toBe(405);
  });

  it('seeds the same store from the same seed and clock reading', () => {
    const stores = [1, 2].map(() => make({ seed: 42, clock: createSandboxClock({ start: START, ticking: false }) }));
    const [a, b] = stores.map((sandbox) =>
      sandbox.store.all().map((t) => [t.transactionId, t.orderId, t.operationType, t.amount, t.status]),
    );
    expect(a!.length).toBeGreaterThan(40);
    expect(a).toEqual(b);
    expect(stores[0]!.scenario?.orderIds).toHaveLength(40);
    expect(make().scenario).toBeUndefined();
  });

  it('stops serving on close, and refuses to listen twice', async () => {
    const sandbox = make();
    const baseUrl = await sandbox.listen(0, '127.0.0.1');
    await expect(sandbox.listen()).rejects.toThrow(/already listening/);
    await sandbox.close();
    await expect(fetch(`${baseUrl}/sandbox/clock`)).rejects.toThrow();
  });

  it.skipIf(!hasIpv6Loopback)('answers an IPv6 listener with a bracketed base URL', async () => {
    const sandbox = make();
    const baseUrl = await sandbox.listen(0, '::1');
    expect(baseUrl).toMatch(/^http:\/\/\[::1\]:\d+$/);
    expect((await fetch(`${baseUrl}/sandbox/clock`)).status).toBe(200);
  });
});
