import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instalmentParams, startHarness, walletParams, type Harness } from './support/sandbox-harness.ts';

/** The cardholder page as a browser uses it: GET shows buttons, a form POST of `outcome` answers. */
describe('sandbox cardholder page', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  function buttons(html: string): string[] {
    return [...html.matchAll(/<button[^>]*name="outcome" value="([a-z]+)"/g)].map((match) => match[1]!);
  }

  it("is reached by submitting the decoded REDIRECTHTML form, and offers the method's outcomes", async () => {
    const instalment = await h.process('authorization', instalmentParams());
    const html = Buffer.from(instalment['REDIRECTHTML']!, 'base64').toString('utf8');
    expect(html).toMatch(/<form method="get" action="http:\/\/127\.0\.0\.1:\d+\/sandbox\/cardholder\/[^"]+"/);
    const page = await fetch(h.pageUrl(instalment));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const body = await page.text();
    expect(buttons(body)).toEqual(['validated', 'pending', 'refused']);
    expect(body).toContain('1250.00 EUR');
    expect(body).toContain('instalpay-3x');

    const wallet = await h.process('payment', walletParams());
    expect(buttons(await (await fetch(h.pageUrl(wallet))).text())).toEqual(['validated', 'refused']);
  });

  it('answers a form POST with the result and, for a pending approval, offers the update on the same URL', async () => {
    const answer = await h.process('authorization', instalmentParams());
    const url = h.pageUrl(answer);
    const post = (outcome: string) => fetch(url, { method: 'POST', body: new URLSearchParams({ outcome }) });
    const pending = await post('pending');
    expect(pending.status).toBe(200);
    const pendingHtml = await pending.text();
    expect(pendingHtml).toContain('EXECCODE 0003');
    expect(buttons(pendingHtml)).toEqual(['validated', 'refused']);
    expect(buttons(await (await fetch(url)).text())).toEqual(['validated', 'refused']);
    expect((await post('pending')).status).toBe(409);
    const validated = await post('validated');
    expect(validated.status).toBe(200);
    const done = await validated.text();
    expect(done).toContain('EXECCODE 0000');
    expect(buttons(done)).toEqual([]);
    const again = await post('refused');
    expect(again.status).toBe(409);
    expect(h.sandbox.store.get(answer['TRANSACTIONID']!)?.execCode).toBe('0000');
  });

  it('refuses an unknown outcome (400) and an unknown transaction (404)', async () => {
    const answer = await h.process('payment', walletParams());
    const bad = await fetch(h.pageUrl(answer), { method: 'POST', body: new URLSearchParams({ outcome: 'maybe' }) });
    expect(bad.status).toBe(400);
    expect(h.sandbox.store.get(answer['TRANSACTIONID']!)?.status).toBe('awaiting-cardholder');
    expect((await fetch(`${h.baseUrl}/sandbox/cardholder/SBX999999999`)).status).toBe(404);
    const missing = await fetch(`${h.baseUrl}/sandbox/cardholder/SBX999999999`, {
      method: 'POST',
      body: 'outcome=validated',
    });
    expect(missing.status).toBe(404);
  });

  it('has no page for a capture', async () => {
    const id = await h.settle('authorization', walletParams(), 'validated');
    const capture = await h.process('capture', {
      IDENTIFIER: 'ACME-SHOP',
      TRANSACTIONID: id,
      ORDERID: h.sandbox.store.get(id)!.orderId,
      DESCRIPTION: 'x',
      VERSION: '3.0',
    });
    expect((await fetch(`${h.baseUrl}/sandbox/cardholder/${capture['TRANSACTIONID']}`)).status).toBe(404);
  });

  it('escapes what the merchant sent', async () => {
    const answer = await h.process('payment', walletParams({ ORDERID: '<script>alert(1)</script>' }));
    const html = await (await fetch(h.pageUrl(answer))).text();
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});
