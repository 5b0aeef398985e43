import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { expect } from 'vitest';
import { ingestDelivery } from '../../pipelines/nightly/ingest-delivery.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { send, startTestReceiver, type TestReceiver } from '../receive/receiver-harness.ts';

const INGEST = { timezone: 'UTC', limits: loadConfig({}).limits };

/** The ORDERID every delivery's request asks for, and every payment of exportFile is for. */
const ORDER_ID = 'O-DELIVERED';

/** A gzip export of one payment per id, as the service delivers it. */
export function exportFile(...ids: string[]): Buffer {
  return gzipSync(
    `TRANSACTIONID;ORDERID;OPERATIONTYPE;AMOUNT;CURRENCY;EXECCODE\n${ids.map((id) => `${id};${ORDER_ID};payment;1.00;EUR;0000\n`).join('')}`,
  );
}

/**
 * Deliveries made the way recon serve takes them: posted to a real receiver on loopback, stored in chunks, and
 * ingested by the worker's own code. `age` then dates them, as a test of retention needs old ones.
 */
export interface DeliveredFiles {
  /** Posted and stored, not ingested: state received. */
  deliver(content: Buffer): Promise<string>;
  /** Posted, stored and ingested: state ingested (or failed, for a file that cannot load). */
  deliverAndIngest(content: Buffer): Promise<string>;
  /** Sets when the delivery arrived, when its file (if any) finished loading, and when it failed (if it did). */
  age(deliveryId: string, times: { receivedAt: Date; finishedAt?: Date; failedAt?: Date }): Promise<void>;
  close(): Promise<void>;
}

export async function startDeliveredFiles(database: Database): Promise<DeliveredFiles> {
  const receiver: TestReceiver = await startTestReceiver(database);
  const deliver = async (content: Buffer) => {
    const issued = await receiver.issue({ orderIds: [ORDER_ID] });
    const answer = await send(issued.callbackUrl, {
      headers: { 'content-type': 'application/gzip' },
      body: content,
    });
    expect(answer.status).toBe(200);
    return receiver.delivered.at(-1)!;
  };
  return {
    deliver,
    async deliverAndIngest(content) {
      const deliveryId = await deliver(content);
      await ingestDelivery(database, deliveryId, INGEST);
      return deliveryId;
    },
    async age(deliveryId, { receivedAt, finishedAt, failedAt }) {
      await database.db
        .updateTable('recon.deliveries')
        .set({ received_at: receivedAt, ...(failedAt ? { failed_at: failedAt } : {}) })
        .where('delivery_id', '=', deliveryId)
        .execute();
      if (finishedAt === undefined) return;
      await database.db
        .updateTable('recon.files')
        .set({ finished_at: finishedAt })
        .where('file_id', '=', (eb) =>
          eb.selectFrom('recon.deliveries').select('file_id').where('delivery_id', '=', deliveryId),
        )
        .execute();
    },
    close: () => receiver.close(),
  };
}

/** Chunks stored per delivery, and their bytes: what a prune deletes. */
export async function storedChunks(database: Database, deliveryId: string): Promise<{ chunks: number; bytes: number }> {
  const row = await database.db
    .selectFrom('recon.delivery_chunks')
    .select([
      sql<number>`count(*)::integer`.as('chunks'),
      sql<string>`coalesce(sum(octet_length(data)), 0)::text`.as('bytes'),
    ])
    .where('delivery_id', '=', deliveryId)
    .executeTakeFirstOrThrow();
  return { chunks: row.chunks, bytes: Number(row.bytes) };
}
