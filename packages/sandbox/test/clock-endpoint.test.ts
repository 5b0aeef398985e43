import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../src/sandbox.ts';
import { instalmentParams, START, startHarness, type Harness } from './support/sandbox-harness.ts';

describe('sandbox clock endpoint', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const clockUrl = () => `${h.baseUrl}/sandbox/clock`;
  const advance = (body: string) =>
    fetch(clockUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  const readClock = async () => (await fetch(clockUrl())).text();

  it('GET returns the sandbox time as ISO 8601 text, or as JSON when asked for JSON', async () => {
    const response = await fetch(clockUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toBe(START.toISOString());
    const json = await fetch(clockUrl(), { headers: { accept: 'application/json' } });
    expect(await json.json()).toEqual({ now: START.toISOString() });
  });

  it('POST {"advanceDays": n} moves it forward and expires overdue approvals at once', async () => {
    const id = await h.settle('authorization', instalmentParams(), 'pending');
    const first = await advance('{"advanceDays": 6}');
    expect(await first.text()).toBe('2026-03-08T09:00:00.000Z');
    expect(h.sandbox.store.get(id)?.status).toBe('pending-approval');
    await advance('{"advanceDays": 0.5}');
    expect(h.sandbox.store.get(id)).toMatchObject({
      status: 'expired',
      updatedAt: new Date('2026-03-08T09:00:00.000Z'),
    });
    expect(await readClock()).toBe('2026-03-08T21:00:00.000Z');
  });

  it.each(['{"advanceDays": -1}', '{"advanceDays": "7"}', '{}', 'seven days'])(
    'refuses %s with 400 and does not move',
    async (body) => {
      const before = await readClock();
      const response = await advance(body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(/advanceDays/);
      expect(await readClock()).toBe(before);
    },
  );

  it('answers 405 to other methods', async () => {
    const response = await fetch(clockUrl(), { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST');
  });
});

describe('sandbox base path', () => {
  let sandbox: Sandbox;
  afterAll(() => sandbox?.close());

  it('serves every route under it', async () => {
    sandbox = createSandbox({ identifier: 'X', secret: 'Y', basePath: '/payment/' });
    const baseUrl = await sandbox.listen();
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/payment$/);
    expect((await fetch(`${baseUrl}/sandbox/clock`)).status).toBe(200);
    expect((await fetch(baseUrl.replace('/payment', '/sandbox/clock'))).status).toBe(404);
  });
});
