import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { open, send, startTestReceiver, type TestReceiver } from './receiver-harness.ts';

/**
 * Two deliveries on one token at once. The first is held in the middle of its body, its transaction open; the
 * second is sent whole while the first holds the token, and the first is finished only once the second waits.
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

  async function raceOnOneToken(first: Buffer, second: Buffer) {
    const issued = await receiver.issue();
    const held = open(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' } });
    held.request.write(first.subarray(0, 100));
    await receiver.until(() => receiver.events.some((event) => event.type === 'delivery-receiving' && event.requestId === issued.requestId));

    const arrivedBefore = receiver.arrived();
    const competing = send(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' }, body: second });
    await receiver.until(() => receiver.arrived() > arrivedBefore);
    await untilSecondWaits(testDb.database);

    held.request.end(first.subarray(100));
    const answers = await Promise.all([held.answer, competing]);
    const deliveries = await testDb.database.db
      .selectFrom('recon.deliveries')
      .select(['delivery_id', 'bytes'])
      .where('request_id', '=', issued.requestId)
      .execute();
    return { answers: answers.map(({ status, text }) => ({ status, text })), deliveries };
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
});

/**
 * PostgreSQL: until the second delivery's transaction waits for the row lock the first one holds (a state of the
 * server, polled). PGlite has one connection: a request that has reached the receiver queues behind the open
 * transaction as soon as it queries, so its arrival is enough.
 */
async function untilSecondWaits(database: Database): Promise<void> {
  if (database.kind === 'pglite') return;
  for (let polls = 0; polls < 500; polls++) {
    const { rows } = await sql<{ waiting: string }>`
      SELECT count(*)::text AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(database.db);
    if (rows[0]!.waiting !== '0') return;
    await sleep(10);
  }
  throw new Error('the second delivery never waited for the first one\'s lock');
}
