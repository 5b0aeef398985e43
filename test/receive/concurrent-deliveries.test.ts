import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdTransaction, lockWaiters } from '../support/held-transaction.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { open, send, startTestReceiver, type TestReceiver } from './receiver-harness.ts';

/**
 * Two deliveries on one token at once. Each is spooled whole before it touches the database; their transactions
 * then meet on the token's row lock. On PostgreSQL the test holds that lock itself until both wait for it, so the
 * two really are in the database at once; PGlite has one connection, which runs the two one after the other.
 */
describe.each(BACKENDS)('concurrent deliveries on one token on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: TestReceiver;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    receiver = await startTestReceiver(testDb.database);
  });
  afterAll(async () => {
    await receiver?.close();
    await testDb?.drop();
  });

  const deliveriesOf = (requestId: string) =>
    testDb.database.db
      .selectFrom('recon.deliveries')
      .select(['delivery_id', 'bytes'])
      .where('request_id', '=', requestId)
      .execute();

  async function raceOnOneToken(first: Buffer, second: Buffer) {
    const issued = await receiver.issue();
    const headers = { 'content-type': 'application/gzip' };
    if (testDb.backend === 'pglite') {
      // The one connection takes them in turn: the first is sent alone until its delivery is stored, so that it
      // is the first whatever the machine's load; the second then arrives while the first is still answered.
      const firstAnswer = send(issued.callbackUrl, { headers, body: first });
      await waitUntil(
        'the first delivery to be stored',
        async () => (await deliveriesOf(issued.requestId)).length === 1,
      );
      const answers = await Promise.all([firstAnswer, send(issued.callbackUrl, { headers, body: second })]);
      return {
        answers: answers.map(({ status, text }) => ({ status, text })),
        deliveries: await deliveriesOf(issued.requestId),
      };
    }
    const holder = await holdTransaction(testDb.env.DATABASE_URL!, [
      `SELECT 1 FROM recon.export_requests WHERE request_id = ${issued.requestId} FOR UPDATE`,
    ]);
    try {
      const firstAnswer = send(issued.callbackUrl, { headers, body: first });
      await waitUntil(
        'the first delivery to wait for the token',
        async () => (await lockWaiters(testDb.database.db)).length === 1,
      );
      const secondAnswer = send(issued.callbackUrl, { headers, body: second });
      await waitUntil(
        'both deliveries to wait for the token',
        async () => (await lockWaiters(testDb.database.db)).length === 2,
      );
      await holder.release();
      const answers = await Promise.all([firstAnswer, secondAnswer]);
      return {
        answers: answers.map(({ status, text }) => ({ status, text })),
        deliveries: await deliveriesOf(issued.requestId),
      };
    } finally {
      await holder.release();
    }
  }

  it.skipIf(skip)('stores one delivery and answers the second 200 when it has the same content', async () => {
    const content = randomBytes(5000);
    const { answers, deliveries } = await raceOnOneToken(content, content);
    expect(answers).toEqual([
      { status: 200, text: 'OK' },
      { status: 200, text: 'OK' },
    ]);
    expect(deliveries).toHaveLength(1);
  });

  it.skipIf(skip)('stores the first delivery and refuses the second with 404 when its content differs', async () => {
    const { answers, deliveries } = await raceOnOneToken(randomBytes(5000), randomBytes(7000));
    expect(answers).toEqual([
      { status: 200, text: 'OK' },
      { status: 404, text: 'token already used' },
    ]);
    expect(deliveries).toEqual([{ delivery_id: expect.any(String), bytes: '5000' }]);
  });

  it.skipIf(skip || backend === 'pglite')(
    'survives a second upload whose sender goes away while it waits for the first, which is stored',
    async () => {
      const issued = await receiver.issue();
      const content = randomBytes(5000);
      const holder = await holdTransaction(testDb.env.DATABASE_URL!, [
        `SELECT 1 FROM recon.export_requests WHERE request_id = ${issued.requestId} FOR UPDATE`,
      ]);
      try {
        const firstAnswer = send(issued.callbackUrl, {
          headers: { 'content-type': 'application/gzip' },
          body: content,
        });
        await waitUntil(
          'the first delivery to wait for the token',
          async () => (await lockWaiters(testDb.database.db)).length === 1,
        );
        const second = open(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' } });
        second.answer.catch(() => {});
        second.request.end(content);
        await waitUntil(
          'the second delivery to wait too',
          async () => (await lockWaiters(testDb.database.db)).length === 2,
        );
        second.request.destroy();
        await holder.release();
        expect(await firstAnswer).toMatchObject({ status: 200, text: 'OK' });
        await receiver.until(
          () =>
            receiver.events.filter(
              (event) => event.type === 'delivery-accepted' && event.requestId === issued.requestId,
            ).length === 2,
        );
        expect(await deliveriesOf(issued.requestId)).toHaveLength(1);
        expect(receiver.events.some((event) => event.type === 'internal-error')).toBe(false);
      } finally {
        await holder.release();
      }
    },
  );
});
