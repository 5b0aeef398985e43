import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../pipelines/backfill.ts';
import type { ExportAccount } from '../../src/client/export-accounts.ts';
import { createPaymentClient, type PaymentClient } from '../../src/client/payment-client.ts';
import { EXPORT_COLUMNS } from '@recon/protocol';
import { ACCOUNT_NOT_ASKED, ORDERID_NOT_ASKED } from '../../src/normalize/row-scope.ts';
import { createSandbox, type Sandbox } from '@recon/sandbox';
import { answering, startServer, type LoopbackServer } from '../client/loopback-servers.ts';
import { ago, DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * recon backfill's pipeline against the sandbox on a loopback port: payments made through the client, then asked
 * for by getTransactions, loaded with lineage, reconciled. Answers the sandbox never gives (a bad row, a failing
 * second request) come from a loopback server, through the same client.
 */
const IDENTIFIER = 'backfill-merchant';
const SECRET = 'backfill-secret';
const MINUTE = 60_000;

function clientFor(baseUrl: string): PaymentClient {
  return createPaymentClient({
    baseUrl,
    identifier: IDENTIFIER,
    secret: SECRET,
    timeoutMs: 5_000,
    retry: { attempts: 1, baseDelayMs: 10 },
  });
}

const settings = { batchSize: 200, toleranceMinor: 0n, graceHours: 24 };

describe('backfill', () => {
  let sandbox: Sandbox;
  let client: PaymentClient;
  let orders = 0;

  beforeAll(async () => {
    sandbox = createSandbox({ identifier: IDENTIFIER, secret: SECRET });
    client = clientFor(await sandbox.listen(0));
  });
  afterAll(async () => sandbox?.close());

  /** A wallet payment the cardholder validates, as a shop would make it; its TRANSACTIONID. */
  async function pay(orderId: string, amount: bigint): Promise<string> {
    const answer = await client.payment({
      ORDERID: orderId,
      AMOUNT: amount,
      CLIENTIDENT: 'client-1',
      CLIENTEMAIL: 'jane@example.com',
      CLIENTUSERAGENT: 'Mozilla/5.0',
      CLIENTIP: '192.0.2.10',
      DESCRIPTION: 'two books',
    });
    expect(answer.EXECCODE).toBe('0002');
    expect(sandbox.finishCardholderStep(answer.TRANSACTIONID!, 'validated').ok).toBe(true);
    return answer.TRANSACTIONID!;
  }

  const newOrderId = (label: string) => `bf-${label}-${++orders}`;

  describe.each(BACKENDS)('on %s', (backend) => {
    const skip = backend === 'postgres' && !hasPostgres;
    let testDb: TestDatabase;
    beforeAll(async () => {
      if (!skip) testDb = await createTestDatabase(backend);
    });
    afterAll(async () => testDb?.drop());

    async function transactionsOf(orderId: string) {
      return testDb.database.db
        .selectFrom('recon.transactions')
        .select([
          'transaction_id',
          'operation_type',
          'amount_minor',
          'currency',
          'exec_code',
          'file_id',
          'entry',
          'line',
          'updated_at',
        ])
        .where('order_id', '=', orderId)
        .orderBy('line')
        .execute();
    }

    const rejectedOf = (fileId: string) =>
      testDb.database.db
        .selectFrom('recon.rejected_rows')
        .select(['line', 'raw', 'reason'])
        .where('file_id', '=', fileId)
        .orderBy('line')
        .execute();

    const countFiles = async () =>
      (
        await testDb.database.db
          .selectFrom('recon.files')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n;

    it.skipIf(skip)(
      "loads one order's transactions with lineage to the request's recon.files row, reconciles it and gives its verdict",
      async () => {
        const orderId = newOrderId('one');
        const paymentId = await pay(orderId, 9000n);
        const refund = await client.refund({
          TRANSACTIONID: paymentId,
          ORDERID: orderId,
          DESCRIPTION: 'one book back',
          AMOUNT: 1000n,
        });
        await insertOrders(testDb.database, [
          {
            id: orderId,
            amount: 9000n,
            status: 'partially_refunded',
            refunded: 1000n,
            createdAt: ago(new Date(), 2 * DAY),
          },
        ]);

        const result = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: client }], {
          ...settings,
          orderIds: [orderId],
        });

        expect(result.requests).toEqual([
          expect.objectContaining({ status: 'loaded', orderIds: [orderId], rows: 2, inserted: 2, rejected: 0 }),
        ]);
        const request = result.requests[0]!;
        const file = await testDb.database.db
          .selectFrom('recon.files')
          .selectAll()
          .where('file_id', '=', request.fileId)
          .executeTakeFirstOrThrow();
        expect(file).toMatchObject({
          name: request.file,
          sha256: request.sha256,
          status: 'loaded',
          compression: 'none',
          rows_total: 2,
          rows_rejected: 0,
        });
        expect(file.name).toMatch(
          new RegExp(`^backfill:getTransactions \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ ${orderId}$`),
        );

        // The answer's records are lines 2 and 3 of its canonical text, oldest first as the service lists them.
        const stored = await transactionsOf(orderId);
        expect(stored.map(({ updated_at: _, ...row }) => row)).toEqual([
          {
            transaction_id: paymentId,
            operation_type: 'payment',
            amount_minor: '9000',
            currency: 'EUR',
            exec_code: '0000',
            file_id: request.fileId,
            entry: null,
            line: 2,
          },
          {
            transaction_id: refund.TRANSACTIONID,
            operation_type: 'refund',
            amount_minor: '1000',
            currency: 'EUR',
            exec_code: '0000',
            file_id: request.fileId,
            entry: null,
            line: 3,
          },
        ]);

        expect(result.run).toMatchObject({
          scope: { kind: 'orders', orderIds: [orderId] },
          ordersInScope: 1,
          notFound: [],
        });
        expect(result.run.counts.matched).toBe(1);
        expect(result.verdicts).toEqual([
          {
            orderId,
            knownOrder: true,
            status: 'matched',
            lifecycle: null,
            expectedMinor: '8000',
            settledMinor: '8000',
            deltaMinor: '0',
            currency: 'EUR',
            reason: 'settled 80.00 EUR equals the expected 80.00 EUR',
            warnings: [],
            runId: result.run.runId,
            orderCreatedAt: expect.any(Date),
            transactions: 2,
            lagNote: null,
          },
        ]);
      },
    );

    it.skipIf(skip)(
      'repeated, finds the identical answer loaded before and writes nothing, yet judges the order again',
      async () => {
        const orderId = newOrderId('again');
        const paymentId = await pay(orderId, 4200n);
        await insertOrders(testDb.database, [
          { id: orderId, amount: 4200n, status: 'paid', createdAt: ago(new Date(), 2 * DAY) },
        ]);

        const first = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: client }], {
          ...settings,
          orderIds: [orderId],
        });
        const rowsBefore = await transactionsOf(orderId);
        const filesBefore = await countFiles();
        const second = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: client }], {
          ...settings,
          orderIds: [orderId],
        });

        expect(second.requests).toEqual([
          expect.objectContaining({ status: 'duplicate', fileId: first.requests[0]!.fileId, orderIds: [orderId] }),
        ]);
        expect(await transactionsOf(orderId)).toEqual(rowsBefore);
        expect(await countFiles()).toBe(filesBefore);
        expect(second.run.runId).not.toBe(first.run.runId);
        // Judged again and found the same: the verdict still holds from the first run.
        expect(second.verdicts).toEqual([
          expect.objectContaining({ orderId, status: 'matched', runId: first.run.runId }),
        ]);

        // A new operation makes a new answer: a new file, whose merge leaves the unchanged payment's lineage alone.
        const refund = await client.refund({
          TRANSACTIONID: paymentId,
          ORDERID: orderId,
          DESCRIPTION: 'all of it back',
        });
        const third = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: client }], {
          ...settings,
          orderIds: [orderId],
        });
        expect(third.requests).toEqual([
          expect.objectContaining({ status: 'loaded', rows: 2, inserted: 1, updated: 0, unchanged: 1 }),
        ]);
        const rowsAfter = await transactionsOf(orderId);
        expect(rowsAfter.map((row) => [row.transaction_id, row.file_id])).toEqual([
          [paymentId, first.requests[0]!.fileId],
          [refund.TRANSACTIONID, third.requests[0]!.fileId],
        ]);
        expect(third.verdicts).toEqual([
          expect.objectContaining({ orderId, status: 'amount_mismatch', lifecycle: 'new', deltaMinor: '-4200' }),
        ]);
      },
    );

    it.skipIf(skip)(
      'says the export may lag for a young order the service returned nothing for, and names ids found nowhere',
      async () => {
        const now = new Date();
        const young = newOrderId('young');
        const old = newOrderId('old');
        const nowhere = newOrderId('nowhere');
        await insertOrders(testDb.database, [
          { id: young, amount: 1500n, status: 'paid', createdAt: ago(now, 5 * MINUTE) },
          { id: old, amount: 1500n, status: 'paid', createdAt: ago(now, 3 * DAY) },
        ]);

        const result = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: client }], {
          ...settings,
          orderIds: [young, old, nowhere],
          now: () => now,
        });

        expect(result.requests).toEqual([expect.objectContaining({ status: 'loaded', rows: 0, inserted: 0 })]);
        expect(result.run.notFound).toEqual([nowhere]);
        expect(result.verdicts.map((verdict) => [verdict.orderId, verdict.status, verdict.transactions])).toEqual([
          [young, 'pending', 0],
          [old, 'missing_at_provider', 0],
        ]);
        expect(result.verdicts[0]!.lagNote).toBe(
          `${young} was created 5 minutes ago and the service returned no transaction for it: its export may lag behind very recent ` +
            'operations, so backfill it again later before taking it as missing',
        );
        expect(result.verdicts[1]!.lagNote).toBeNull();

        // Without a grace period the young order is missing_at_provider at once: the note matters most then.
        const strict = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: client }], {
          ...settings,
          graceHours: 0,
          orderIds: [young],
          now: () => now,
        });
        expect(strict.verdicts).toEqual([
          expect.objectContaining({ status: 'missing_at_provider', lagNote: expect.stringContaining('may lag') }),
        ]);
      },
    );

    it.skipIf(skip)(
      'measures the ages at asOf and stamps its request by its clock: a run days ahead never makes the file read as asked later',
      async () => {
        const stamped = new Date();
        const asOf = new Date(stamped.getTime() + 3 * DAY);
        const orderId = newOrderId('as-of');
        await insertOrders(testDb.database, [
          { id: orderId, amount: 1500n, status: 'paid', createdAt: ago(stamped, 2 * DAY) },
        ]);

        const result = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: client }], {
          ...settings,
          orderIds: [orderId],
          now: () => stamped,
          asOf,
        });

        expect(result.run.asOf).toEqual(asOf);
        const file = await testDb.database.db
          .selectFrom('recon.files')
          .select('asked_at')
          .where('file_id', '=', result.requests[0]!.fileId)
          .executeTakeFirstOrThrow();
        expect(file.asked_at).toEqual(stamped);
        // Five days old at asOf, with nothing from the service: past any grace period.
        expect(result.verdicts).toEqual([expect.objectContaining({ orderId, status: 'missing_at_provider' })]);
      },
    );

    it.skipIf(skip)(
      'asks RECON_EXPORT_BATCH_SIZE orders per request, one recon.files row each, every transaction traced to its request',
      async () => {
        // A sandbox numbers its TRANSACTIONIDs from the same start: a database of its own keeps the two sandboxes apart.
        const own = await createTestDatabase(backend);
        const seeded = createSandbox({ identifier: IDENTIFIER, secret: SECRET, seed: 5, seedOrders: 15 });
        try {
          const seededClient = clientFor(await seeded.listen(0));
          const orderIds = [...seeded.scenario!.orderIds];
          const result = await backfill(own.database, [{ identifier: IDENTIFIER, client: seededClient }], {
            ...settings,
            batchSize: 4,
            orderIds,
          });

          expect(result.requests.map((request) => request.orderIds)).toEqual([
            orderIds.slice(0, 4),
            orderIds.slice(4, 8),
            orderIds.slice(8, 12),
            orderIds.slice(12),
          ]);
          const expected = seeded.store.all().filter((transaction) => orderIds.includes(transaction.orderId));
          expect(
            result.requests.reduce((sum, request) => sum + (request.status === 'loaded' ? request.inserted : 0), 0),
          ).toBe(expected.length);
          const stored = await own.database.db
            .selectFrom('recon.transactions')
            .select(['transaction_id', 'order_id', 'file_id'])
            .where('order_id', 'in', orderIds)
            .execute();
          expect(stored).toHaveLength(expected.length);
          for (const row of stored) {
            const request = result.requests.find((candidate) => candidate.orderIds.includes(row.order_id!));
            expect(row.file_id, row.transaction_id).toBe(request!.fileId);
          }
          // recon has none of these orders: an ORDERID with succeeded transactions is unknown_order, any other is not found.
          expect(result.verdicts.every((verdict) => verdict.status === 'unknown_order')).toBe(true);
          expect(result.verdicts.length + result.run.notFound.length).toBe(orderIds.length);
        } finally {
          await seeded.close();
          await own.drop();
        }
      },
    );

    describe('answers the sandbox never gives', () => {
      let server: LoopbackServer | undefined;
      afterAll(async () => server?.close());
      const row = (transactionId: string, orderId: string, amount: string) =>
        Object.fromEntries(
          EXPORT_COLUMNS.map((column) => [column, '']).concat([
            ['TRANSACTIONID', transactionId],
            ['ORDERID', orderId],
            ['OPERATIONTYPE', 'payment'],
            ['DATE', '2026-11-20 10:00:00'],
            ['AMOUNT', amount],
            ['CURRENCY', 'EUR'],
            ['EXECCODE', '0'],
          ]),
        );
      const ok = (data: object[]) => ({
        OPERATIONTYPE: 'getTransactions',
        EXECCODE: '0000',
        MESSAGE: 'ok',
        DATA: data,
      });
      const serve = async (...answers: object[]): Promise<ExportAccount['client']> => {
        await server?.close();
        server = await startServer(answering(...answers));
        return clientFor(server.baseUrl);
      };

      it.skipIf(skip)(
        'keeps a record the normalizer rejects in recon.rejected_rows with its reason and canonical JSON, and loads the rest',
        async () => {
          const orderId = newOrderId('bad');
          const { DATE: _, ...withoutDate } = row(`${orderId}-t3`, orderId, '3.00');
          const answer = ok([
            row(`${orderId}-t1`, orderId, '12.50'),
            row(`${orderId}-t2`, orderId, '12,50'),
            withoutDate,
          ]);
          const result = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: await serve(answer) }], {
            ...settings,
            orderIds: [orderId],
          });

          expect(result.requests).toEqual([
            expect.objectContaining({ status: 'loaded', rows: 3, inserted: 1, rejected: 2 }),
          ]);
          const rejected = await testDb.database.db
            .selectFrom('recon.rejected_rows')
            .select(['line', 'raw', 'reason'])
            .where('file_id', '=', result.requests[0]!.fileId)
            .orderBy('line')
            .execute();
          expect(rejected).toEqual([
            {
              line: 3,
              raw: expect.stringContaining(`"AMOUNT":"12,50"`),
              reason: expect.stringMatching(/^AMOUNT: "12,50" /),
            },
            {
              line: 4,
              raw: expect.not.stringContaining('"DATE"'),
              reason: 'the record has no "DATE", which other records of the answer have',
            },
          ]);
          expect(JSON.parse(rejected[0]!.raw)).toEqual(row(`${orderId}-t2`, orderId, '12,50'));
          expect(
            (await transactionsOf(orderId)).map((stored) => [stored.transaction_id, stored.amount_minor, stored.line]),
          ).toEqual([[`${orderId}-t1`, '1250', 2]]);
        },
      );

      it.skipIf(skip)(
        'records an answer without TRANSACTIONID as a failed file and stops before reconciling',
        async () => {
          const orderId = newOrderId('keyless');
          const { TRANSACTIONID: _, ...keyless } = row('x', orderId, '1.00');
          const runsBefore = await testDb.database.db
            .selectFrom('recon.reconciliation_runs')
            .select('run_id')
            .execute();
          const message = await expectReconError(
            async () =>
              backfill(testDb.database, [{ identifier: IDENTIFIER, client: await serve(ok([keyless])) }], {
                ...settings,
                orderIds: [orderId],
              }),
            'CSV_HEADER',
            `backfill:getTransactions`,
            'no TRANSACTIONID',
            'recorded as failed file',
          );
          const fileId = /recorded as failed file (\d+)/.exec(message)![1]!;
          const file = await testDb.database.db
            .selectFrom('recon.files')
            .selectAll()
            .where('file_id', '=', fileId)
            .executeTakeFirstOrThrow();
          expect(file).toMatchObject({ status: 'failed', error_code: 'CSV_HEADER' });
          expect(await testDb.database.db.selectFrom('recon.reconciliation_runs').select('run_id').execute()).toEqual(
            runsBefore,
          );
        },
      );

      it.skipIf(skip)(
        "gives a record without an IDENTIFIER value the account asked alone, and rejects it in a group's answer",
        async () => {
          const alone = newOrderId('alone');
          const grouped = newOrderId('grouped');
          const one = await serve(ok([row(`${alone}-t1`, alone, '1.00')]));
          await backfill(testDb.database, [{ identifier: IDENTIFIER, client: one }], {
            ...settings,
            orderIds: [alone],
          });
          const group = await serve(ok([row(`${grouped}-t1`, grouped, '1.00')]));
          const result = await backfill(testDb.database, [{ identifier: IDENTIFIER, group: 'shop', client: group }], {
            ...settings,
            orderIds: [grouped],
          });
          const stored = await testDb.database.db
            .selectFrom('recon.transactions')
            .select(['transaction_id', 'identifier'])
            .where('transaction_id', 'in', [`${alone}-t1`, `${grouped}-t1`])
            .orderBy('transaction_id')
            .execute();
          // Any account of the group could have made it: the record says none, so it is none of the group's.
          expect(stored).toEqual([{ transaction_id: `${alone}-t1`, identifier: IDENTIFIER }]);
          expect(result.requests).toEqual([expect.objectContaining({ status: 'loaded', rows: 1, rejected: 1 })]);
          expect(await rejectedOf(result.requests[0]!.fileId)).toEqual([
            { line: 2, raw: expect.stringContaining(`"${grouped}-t1"`), reason: ACCOUNT_NOT_ASKED },
          ]);
        },
      );

      it.skipIf(skip)(
        "rejects the records of an account or an ORDERID it did not ask for, and leaves the other account's transaction as it was",
        async () => {
          const [own, others] = [newOrderId('own'), newOrderId('others')];
          const of = (identifier: string, record: Record<string, string>) => ({ ...record, IDENTIFIER: identifier });
          const theirs = of('shop-other', row(`${others}-t1`, others, '932.48'));
          await backfill(testDb.database, [{ identifier: 'shop-other', client: await serve(ok([theirs])) }], {
            ...settings,
            orderIds: [others],
          });
          const before = await transactionsOf(others);
          expect(before).toMatchObject([{ amount_minor: '93248', exec_code: '0000' }]);

          // The other account's transaction, as itself and under this account's name, and an ORDERID not asked.
          const forged = of('shop-other', { ...row(`${others}-t1`, others, '1.00'), EXECCODE: '4001' });
          const relabelled = of(IDENTIFIER, { ...row(`${others}-t1`, others, '1.00'), EXECCODE: '4001' });
          const unasked = of(IDENTIFIER, row(`${own}-t2`, `${own}-x`, '2.00'));
          const answer = ok([of(IDENTIFIER, row(`${own}-t1`, own, '1.00')), forged, relabelled, unasked]);
          const result = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: await serve(answer) }], {
            ...settings,
            orderIds: [own, others],
          });

          expect(result.requests).toEqual([
            expect.objectContaining({ status: 'loaded', rows: 4, inserted: 1, updated: 0, rejected: 3 }),
          ]);
          const rejected = await rejectedOf(result.requests[0]!.fileId);
          expect(rejected.map(({ line, reason }) => ({ line, reason }))).toEqual([
            { line: 3, reason: ACCOUNT_NOT_ASKED },
            { line: 4, reason: ACCOUNT_NOT_ASKED },
            { line: 5, reason: ORDERID_NOT_ASKED },
          ]);
          expect(rejected.map(({ raw }) => JSON.parse(raw) as unknown)).toEqual([forged, relabelled, unasked]);
          expect(await transactionsOf(others)).toEqual(before);
          expect(await transactionsOf(`${own}-x`)).toEqual([]);
        },
      );

      it.skipIf(skip)(
        'stops at a failing request, saying how many were loaded before it, and reconciles nothing',
        async () => {
          const [a, b] = [newOrderId('first'), newOrderId('second')];
          const refusal = { OPERATIONTYPE: 'getTransactions', EXECCODE: '1002', MESSAGE: 'invalid parameter ORDERID' };
          const filesBefore = await countFiles();
          await expectReconError(
            async () =>
              backfill(
                testDb.database,
                [{ identifier: IDENTIFIER, client: await serve(ok([row(`${a}-t1`, a, '1.00')]), refusal) }],
                {
                  ...settings,
                  batchSize: 1,
                  orderIds: [a, b],
                },
              ),
            'SERVICE_ERROR',
            'EXECCODE 1002',
            '1 of 2 requests were loaded before it; nothing was reconciled',
          );
          expect(Number(await countFiles())).toBe(Number(filesBefore) + 1);
          expect(await transactionsOf(a)).toHaveLength(1);
        },
      );
    });

    it.skipIf(skip)('fails with NETWORK when the service cannot be reached, recording nothing', async () => {
      const filesBefore = await countFiles();
      const { baseUrl } = await refusingBaseUrl();
      await expectReconError(
        () =>
          backfill(testDb.database, [{ identifier: IDENTIFIER, client: clientFor(baseUrl) }], {
            ...settings,
            orderIds: ['bf-unreachable'],
          }),
        'NETWORK',
        'connection refused',
      );
      expect(await countFiles()).toBe(filesBefore);
    });
  });
});
