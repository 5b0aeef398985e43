import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import busboy from 'busboy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createSandbox, type Sandbox } from '@recon/sandbox';
import { createArrivals } from '../support/arrivals.ts';
import { closeServer, listenOnLoopback } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * The two halves of recon meet: the sandbox's export, delivered as the service delivers it (a gzip csv
 * uploaded to CALLBACKURL), is ingested, and every stored transaction must equal the sandbox's own record.
 */
const IDENTIFIER = 'ACME';
const SECRET = 'export-to-ingest';

describe('sandbox export delivered by callback, then ingested', () => {
  let sandbox: Sandbox;
  let receiver: Server;
  let workDir: string;
  const files: string[] = [];
  const arrivals = createArrivals();

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'recon-callback-'));
    receiver = createServer((request, response) => {
      const upload = busboy({ headers: request.headers });
      upload.on('file', (_field, stream, info) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const file = path.join(workDir, `${files.length}-${info.filename}`);
          void writeFile(file, Buffer.concat(chunks)).then(() => {
            files.push(file);
            arrivals.notify();
          });
        });
      });
      upload.on('close', () => response.writeHead(200).end('OK'));
      request.pipe(upload);
    });
    const receiverUrl = await listenOnLoopback(receiver);
    sandbox = createSandbox({ identifier: IDENTIFIER, secret: SECRET, seed: 11 });
    const baseUrl = await sandbox.listen(0);
    const client = createPaymentClient({
      baseUrl,
      identifier: IDENTIFIER,
      secret: SECRET,
      timeoutMs: 5_000,
      retry: { attempts: 1, baseDelayMs: 10 },
    });
    const receipt = await client.getTransactions({
      ORDERID: sandbox.scenario!.orderIds,
      COMPRESSION: 'gzip',
      CALLBACKURL: `${receiverUrl}/cb`,
    });
    expect(receipt.EXECCODE).toBe('0000');
    await arrivals.until(() => files.length === 1);
  });

  afterAll(async () => {
    await sandbox?.close();
    if (receiver) await closeServer(receiver);
    await rm(workDir, { recursive: true, force: true });
  });

  describe.each(BACKENDS)('on %s', (backend) => {
    const skip = backend === 'postgres' && !hasPostgres;
    let testDb: TestDatabase;
    beforeAll(async () => {
      if (!skip) testDb = await createTestDatabase(backend);
    });
    afterAll(async () => testDb?.drop());

    it.skipIf(skip)('stores every exported transaction exactly as the sandbox recorded it', async () => {
      const stored = sandbox.store.all().filter((t) => sandbox.scenario!.orderIds.includes(t.orderId));
      expect(stored.length).toBeGreaterThan(40);
      const [result] = await ingestFiles(testDb.database, files, { timezone: 'UTC', limits: loadConfig({}).limits });
      expect(result).toMatchObject({
        status: 'loaded',
        compression: 'gzip',
        rows: stored.length,
        inserted: stored.length,
        rejected: 0,
      });

      const rows = await testDb.database.db
        .selectFrom('recon.transactions')
        .select([
          'transaction_id',
          'order_id',
          'operation_type',
          'amount_minor',
          'currency',
          'exec_code',
          'occurred_at',
          'schedule_index',
          'schedule_count',
        ])
        .execute();
      const byId = new Map(rows.map((row) => [row.transaction_id, row]));
      for (const transaction of stored) {
        const row = byId.get(transaction.transactionId);
        expect(row, transaction.transactionId).toBeDefined();
        expect({
          order_id: row!.order_id,
          operation_type: row!.operation_type,
          amount_minor: BigInt(row!.amount_minor!),
          currency: row!.currency,
          exec_code: row!.exec_code,
          occurred_at: new Date(row!.occurred_at!).toISOString(),
        }).toEqual({
          order_id: transaction.orderId,
          operation_type: transaction.operationType,
          amount_minor: transaction.amount,
          currency: transaction.currency,
          exec_code: transaction.execCode,
          // The export writes DATE to the second.
          occurred_at: new Date(Math.floor(transaction.createdAt.getTime() / 1000) * 1000).toISOString(),
        });
        if (transaction.method === 'instalment' && row!.schedule_count !== null) {
          expect(row!.schedule_index).toBeGreaterThanOrEqual(1);
          expect(row!.schedule_index).toBeLessThanOrEqual(row!.schedule_count);
        }
      }
    });
  });
});
